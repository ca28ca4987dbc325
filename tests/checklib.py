"""checklib.py - the one check() of the Python test drivers.

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    from checklib import check, failures
    import checklib           # checklib.passed: how many checks held

check(cond, what) records `what` as a failure when cond is false, prints
"FAIL: what" (with checklib.show_ok set: "ok   what" for each check that
holds and "FAIL what" for each that does not), and returns cond, so a
driver can stop looking further when a check fails.  The driver decides
at its end what failures mean (usually exit 1 with the list).
"""

failures = []
passed = 0
show_ok = False


def check(cond, what):
    global passed
    if cond:
        passed += 1
        if show_ok:
            print('ok   ' + what)
    else:
        failures.append(what)
        print(('FAIL ' if show_ok else 'FAIL: ') + what)
    return cond
