#!/usr/bin/env python3
"""Keep docs/heapscope.1 in step with the heapscope program.

Usage: HEAPSCOPE=/path/to/heapscope check_manpage.py docs/heapscope.1

The program's own help is the reference:

  a. every command that `heapscope --help` lists has a .SS section under
     .SH COMMANDS (in the same order), and every such .SS is a real command;
  b. per command, the long (--name) and short (-x) options that
     `heapscope CMD --help` prints equal the options documented as .TP
     entries of its .SS section, both ways; an option that takes an argument
     shows the same argument name (N, KEY, FILE...) in its .TP entry; the
     section's synopsis names the options of the help's usage lines; and its
     running text mentions no option the command does not have (nor does
     the rest of the page mention an option that no command has);
  c. the global options of `heapscope --help` are documented as .TP entries;
  d. `groff -man -ww -z -Tutf8` renders the page without a warning (skipped,
     with a note, when groff is not installed);
  e. every `heapscope CMD ...` line of an example block (.EX/.EE, .nf/.fi)
     names a real command and only its options;
  f. the .TH header names the version that `heapscope --version` prints.

Options in the help text are the tokens that look like options (--name,
-x), except inside single-quoted command lines ('psql -f FILE') and the
global -h/--help/-V/--version.  Exit status 0 when everything matches,
1 otherwise (each problem on its own line, naming the command and option).
Python 3 standard library only.
"""
import os
import re
import shutil
import subprocess
import sys

LONG_RE = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*(?![\w-])")
SHORT_RE = re.compile(r"(?<![\w-])-[A-Za-z](?![\w-])")
# 'heapscope timeline --help', 'psql -f DIR/schema.sql': other commands.
QUOTED_RE = re.compile(r"(?<![\w])'[^'\n]+'(?![\w])")
# "  -v, --verbose   ...", "  --top N   ...": an option entry of a help text.
ENTRY_RE = re.compile(
    r"^\s+(?:(?P<short>-[A-Za-z])(?:,\s*|(?=\s)))?(?P<long>--[a-z][a-z0-9-]*)?"
    r"(?: (?P<arg>[A-Z][A-Z0-9_]*))?(?=\s{2,}|\s*$)")
USAGE_ARG_RE = re.compile(r"(--[a-z][a-z0-9-]*) ([A-Z][A-Z0-9_]*)(?![\w|])")


def options_in(text):
    """(long options, short options) in text, as sets."""
    return set(LONG_RE.findall(text)), set(SHORT_RE.findall(text))


# ------------------------------------------------------------------ help


def run(cli, *args):
    try:
        p = subprocess.run([cli, *args], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True,
                           timeout=60)
    except OSError as e:
        sys.exit(f"check_manpage: cannot run {cli}: {e}")
    if p.returncode != 0:
        sys.exit(f"check_manpage: `heapscope {' '.join(args)}` exited with "
                 f"{p.returncode}: {p.stderr.strip()}")
    return p.stdout


def main_help(text):
    """(commands in order, global long options, global short options)."""
    commands, glong, gshort = [], set(), set()
    part = None
    for line in text.splitlines():
        if line.startswith("Commands:"):
            part = "commands"
            continue
        if line.startswith("Options for every command:"):
            part = "options"
            continue
        if not line.strip():
            part = None
            continue
        if part == "commands":
            m = re.match(r"^  ([a-z][a-z0-9-]*)\s", line)
            if m:
                commands.append(m.group(1))
        elif part == "options":
            lo, sh = options_in(line)
            glong |= lo
            gshort |= sh
    return commands, glong, gshort


class CommandHelp:
    """What `heapscope CMD --help` prints."""

    def __init__(self, name, text, glong, gshort):
        self.name = name
        body = QUOTED_RE.sub("", text)
        self.long, self.short = options_in(body)
        self.long -= glong
        self.short -= gshort
        usage = text.split("\n\n", 1)[0]
        self.usage_long, self.usage_short = options_in(QUOTED_RE.sub("", usage))
        # argument names: the option entries first, then the usage lines
        self.args = {}
        for line in text.splitlines():
            m = ENTRY_RE.match(line)
            if m and (m.group("long") or m.group("short")) and m.group("arg"):
                self.args[m.group("long") or m.group("short")] = m.group("arg")
        for opt, arg in USAGE_ARG_RE.findall(usage):
            self.args.setdefault(opt, arg)


# ------------------------------------------------------------- man page

ROFF_NAMED = {"-": "-", "mi": "-", "aq": "'", "dq": '"', "lq": '"', "rq": '"',
              "ha": "^", "ti": "~", "em": " ", "en": " ", "mu": "x",
              "->": " ", ">=": ">=", "<=": "<="}
FONT_MACROS = {"B", "I", "SM", "SB"}
ALT_MACROS = {"BR", "RB", "BI", "IB", "IR", "RI"}


def roff_args(s):
    """Split macro arguments, honouring double quotes."""
    out, cur, quoted, had = [], "", False, False
    i = 0
    while i < len(s):
        c = s[i]
        if c == '"':
            if quoted and i + 1 < len(s) and s[i + 1] == '"':
                cur += '"'
                i += 2
                continue
            quoted = not quoted
            had = True
        elif c in " \t" and not quoted:
            if cur or had:
                out.append(cur)
            cur, had = "", False
        else:
            cur += c
        i += 1
    if cur or had:
        out.append(cur)
    return out


def unescape(s):
    s = re.sub(r"\\f(?:\[[^\]]*\]|\(..|.)", "", s)
    s = re.sub(r"\\\((..)", lambda m: ROFF_NAMED.get(m.group(1), " "), s)
    s = re.sub(r"\\\[([^\]]*)\]", lambda m: ROFF_NAMED.get(m.group(1), " "), s)
    s = s.replace("\\-", "-").replace("\\e", "\\")
    s = re.sub(r"\\[&%c:/,|^)]", "", s)
    s = re.sub(r"\\[~ 0]", " ", s)
    return s


def plain(line):
    """The text a man(7) source line contributes (macro names dropped)."""
    if line.startswith(".\\\"") or line.startswith("'\\\""):
        return ""
    m = re.match(r"^[.'](\S+)\s*(.*)$", line)
    if not m:
        return unescape(line)
    name, rest = m.group(1), m.group(2)
    args = roff_args(rest)
    if name in ALT_MACROS:
        return unescape("".join(args))
    if name in FONT_MACROS or name in ("SH", "SS", "TP", "IP"):
        return unescape(" ".join(args))
    return ""


class Section:
    def __init__(self, sh, ss, lineno):
        self.sh, self.ss, self.lineno = sh, ss, lineno
        self.tags = []          # (lineno, text) of .TP tags
        self.text = []          # (lineno, text) of running text, tags excluded
        self.synopsis = []      # text before the first .PP/.TP of a .SS
        self.blocks = []        # (lineno, text) inside .EX/.EE, .nf/.fi


def parse_page(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    sections, th = [], None
    cur = Section(None, None, 0)
    sections.append(cur)
    in_block = want_tag = False
    in_synopsis = False
    for n, line in enumerate(lines, 1):
        m = re.match(r"^\.(\S+)\s*(.*)$", line)
        macro = m.group(1) if m else None
        if line.startswith(".\\\""):
            continue
        if macro == "TH":
            th = roff_args(m.group(2))
            continue
        if macro in ("SH", "SS"):
            title = plain(line).strip()
            if macro == "SH":
                cur = Section(title, None, n)
            else:
                cur = Section(cur.sh, title, n)
                in_synopsis = True
            sections.append(cur)
            want_tag = False
            continue
        if macro in ("EX", "nf"):
            in_block = True
            continue
        if macro in ("EE", "fi"):
            in_block = False
            continue
        if macro in ("PP", "P", "LP", "TP", "IP"):
            in_synopsis = False
        if macro == "TP":
            want_tag = True
            continue
        text = plain(line)
        if in_block:
            cur.blocks.append((n, text))
        elif want_tag and (macro is None or macro in FONT_MACROS | ALT_MACROS):
            cur.tags.append((n, text))
            want_tag = False
        else:
            cur.text.append((n, text))
            if in_synopsis:
                cur.synopsis.append(text)
    return th, sections


# ---------------------------------------------------------------- checks


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: HEAPSCOPE=/path/to/heapscope check_manpage.py PAGE")
    page = sys.argv[1]
    cli = os.environ.get("HEAPSCOPE")
    if not cli:
        sys.exit("check_manpage: set HEAPSCOPE to the heapscope program")
    errors = []

    def err(msg):
        errors.append(msg)

    commands, glong, gshort = main_help(run(cli, "--help"))
    if not commands:
        sys.exit("check_manpage: no commands found in `heapscope --help`")
    helps = {c: CommandHelp(c, run(cli, c, "--help"), glong, gshort)
             for c in commands}
    th, sections = parse_page(page)

    # f. version in .TH
    ver = re.search(r"heapscope (\S+)", run(cli, "--version"))
    if not th or len(th) < 4:
        err(f"{page}: no .TH header with a source (\"heapscope VERSION\")")
    elif ver and th[3] != f"heapscope {ver.group(1)}":
        err(f"{page}: .TH says \"{th[3]}\" but `heapscope --version` says "
            f"{ver.group(1)}")

    # a. one .SS per command, in the order of --help
    cmd_secs = [s for s in sections if s.sh == "COMMANDS" and s.ss]
    if not any(s.sh == "COMMANDS" for s in sections):
        err(f"{page}: no .SH COMMANDS section")
    by_name = {}
    for s in cmd_secs:
        name = s.ss.split()[0] if s.ss.split() else ""
        if name not in helps:
            err(f"{page}:{s.lineno}: .SS {s.ss!r} under COMMANDS is not a "
                f"command of `heapscope --help` ({', '.join(commands)})")
        elif name in by_name:
            err(f"{page}:{s.lineno}: command '{name}' has two .SS sections")
        else:
            by_name[name] = s
    for c in commands:
        if c not in by_name:
            err(f"{page}: command '{c}' (listed by `heapscope --help`) has no "
                f".SS section under COMMANDS")
    expected = [c for c in commands if c in by_name]
    if list(by_name) != expected:
        err(f"{page}: the command sections are in the order "
            f"{' '.join(by_name)}; `heapscope --help` lists them as "
            f"{' '.join(expected)}")

    # b. options per command
    checked = 0
    for c, s in by_name.items():
        h = helps[c]
        tag_long, tag_short, tag_of = set(), set(), {}
        for n, tag in s.tags:
            lo, sh = options_in(tag)
            tag_long |= lo
            tag_short |= sh
            for o in lo | sh:
                tag_of.setdefault(o, (n, tag))
        for kind, want, have in (("long", h.long, tag_long),
                                 ("short", h.short, tag_short)):
            for o in sorted(want - have):
                err(f"{page}: command '{c}': {kind} option {o} is printed by "
                    f"`heapscope {c} --help` but has no .TP entry in "
                    f".SS {c}")
            for o in sorted(have - want):
                n = tag_of[o][0]
                err(f"{page}:{n}: command '{c}': {kind} option {o} is "
                    f"documented but `heapscope {c} --help` does not print it")
            checked += len(want & have)
        for o, arg in sorted(h.args.items()):
            if o not in tag_of:
                continue
            n, tag = tag_of[o]
            m = re.search(re.escape(o) + r"(?![\w-])\s+(\S+)", tag)
            if not m or m.group(1).rstrip(",") != arg:
                err(f"{page}:{n}: command '{c}': option {o} takes {arg} in "
                    f"`heapscope {c} --help`, but its .TP entry is {tag!r}")
        syn = " ".join(s.synopsis)
        if not re.match(r"\s*heapscope\s+" + re.escape(c) + r"(\s|$)", syn):
            err(f"{page}:{s.lineno}: .SS {c} does not start with its synopsis "
                f"(\"heapscope {c} ...\")")
        syn_long, syn_short = options_in(syn)
        if (syn_long, syn_short) != (h.usage_long, h.usage_short):
            miss = sorted((h.usage_long | h.usage_short) - (syn_long | syn_short))
            extra = sorted((syn_long | syn_short) - (h.usage_long | h.usage_short))
            err(f"{page}:{s.lineno}: command '{c}': the synopsis differs from "
                f"the usage lines of `heapscope {c} --help`"
                + (f"; missing {' '.join(miss)}" if miss else "")
                + (f"; not in the usage {' '.join(extra)}" if extra else ""))
        for n, text in s.text:
            lo, sh = options_in(text)
            for o in sorted((lo - h.long - glong) | (sh - h.short - gshort)):
                err(f"{page}:{n}: command '{c}': the text mentions {o}, which "
                    f"`heapscope {c} --help` does not print")

    # c. global options
    outside = [(n, t) for s in sections if s.sh != "COMMANDS" for n, t in s.tags]
    g_long, g_short = set(), set()
    for _, t in outside:
        lo, sh = options_in(t)
        g_long |= lo
        g_short |= sh
    for o in sorted((glong - g_long) | (gshort - g_short)):
        err(f"{page}: global option {o} of `heapscope --help` has no .TP "
            f"entry outside COMMANDS")

    # b'. outside the command sections too, the text names real options only
    all_long = glong.union(*(h.long for h in helps.values()))
    all_short = gshort.union(*(h.short for h in helps.values()))
    for s in sections:
        if s.sh == "COMMANDS" and s.ss:
            continue
        for n, text in s.text + s.tags:
            lo, sh = options_in(text)
            for o in sorted((lo - all_long) | (sh - all_short)):
                err(f"{page}:{n}: .SH {s.sh}: {o} is not an option of any "
                    f"heapscope command")

    # e. examples use real commands and options
    for s in sections:
        joined, start = "", None
        lines = []
        for n, t in s.blocks:
            if start is None:
                start = n
            if t.endswith("\\"):
                joined += t[:-1] + " "
                continue
            lines.append((start, joined + t))
            joined, start = "", None
        if joined:
            lines.append((start, joined))
        for n, t in lines:
            for m in re.finditer(r"(?<![\w./-])heapscope\s+(\S+)([^|;&<>#]*)", t):
                c, rest = m.group(1), m.group(2)
                if c in ("-h", "--help", "-V", "--version"):
                    continue
                if c not in helps:
                    err(f"{page}:{n}: example runs unknown command "
                        f"'heapscope {c}'")
                    continue
                lo, sh = options_in(rest)
                for o in sorted((lo - helps[c].long - glong)
                                | (sh - helps[c].short - gshort)):
                    err(f"{page}:{n}: example uses {o}, which `heapscope {c} "
                        f"--help` does not print")

    # d. groff lint
    groff = shutil.which("groff")
    if groff:
        p = subprocess.run([groff, "-man", "-ww", "-z", "-Tutf8", page],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=60)
        if p.returncode != 0 or p.stderr.strip():
            err(f"{page}: `groff -man -ww -z -Tutf8` (exit {p.returncode}) "
                f"warns:\n{p.stderr.rstrip()}")
        else:
            print("groff -man -ww -z -Tutf8: no warnings")
    else:
        print("groff not found on PATH: lint skipped "
              "(install groff-base to run it)")

    if errors:
        for e in errors:
            print(f"FAIL: {e}")
        print(f"check_manpage: {len(errors)} problem(s) in {page}")
        return 1
    print(f"check_manpage: {page} matches heapscope: {len(commands)} "
          f"commands, {checked} command options, "
          f"{len(glong) + len(gshort)} global options")
    return 0


if __name__ == "__main__":
    sys.exit(main())
