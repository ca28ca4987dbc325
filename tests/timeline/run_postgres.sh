#!/usr/bin/env bash
# PostgreSQL round trip of `heapscope export`, on a real series of dumps (our
# workload examples/workloads/timeline_series.rb):
#   start a private server (temp dir, unix socket only), export the dumps as CSV
#   and as JSON lines, load each with `psql -f schema.sql`, run the SQL recipes
#   of docs/TIMELINE.md and compare them with `heapscope timeline --json`.
#
# Needs Debian's `postgresql` (server binaries) and `ruby`.  Installs nothing.
# Exit 77 (skipped) only when the PostgreSQL binaries are absent.
# As root (CI), the server runs as the `postgres` user: initdb refuses root.
#
# Env (set by meson): HEAPSCOPE (the CLI); HEAPSCOPE_PGBIN forces the
# PostgreSQL bin directory (no search).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd -P)
HEAPSCOPE=${HEAPSCOPE:?set HEAPSCOPE to the heapscope binary}
WORKLOAD=$HERE/../../examples/workloads/timeline_series.rb
DOC=${HEAPSCOPE_TIMELINE_DOC:-$HERE/../../docs/TIMELINE.md}

# --- find the server binaries ------------------------------------------------
PGBIN=${HEAPSCOPE_PGBIN:-}
if [ -n "$PGBIN" ]; then
  :  # forced (tests of this script): no search
elif command -v pg_config >/dev/null 2>&1; then
  d=$(pg_config --bindir 2>/dev/null || true)
  [ -n "$d" ] && [ -x "$d/initdb" ] && PGBIN=$d
fi
if [ -z "$PGBIN" ] && [ -z "${HEAPSCOPE_PGBIN:-}" ]; then
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ]; then PGBIN=$d; break; fi
  done
fi
if [ -z "$PGBIN" ] && [ -z "${HEAPSCOPE_PGBIN:-}" ] && command -v initdb >/dev/null 2>&1; then
  PGBIN=$(dirname "$(command -v initdb)")
fi
if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/pg_ctl" ] || [ ! -x "$PGBIN/postgres" ]; then
  echo "SKIP: PostgreSQL server binaries not found (Debian package: postgresql)"
  exit 77
fi
PSQL=$PGBIN/psql
[ -x "$PSQL" ] || PSQL=$(command -v psql)
echo "postgres: $PGBIN ($("$PGBIN/postgres" --version))"

# --- private server ------------------------------------------------------------
HEAPSCOPE=$(realpath "$HEAPSCOPE"); WORKLOAD=$(realpath "$WORKLOAD"); DOC=$(realpath "$DOC")
T=$(mktemp -d /tmp/heapscope-pg.XXXXXX)
chmod 755 "$T"
cd "$T"  # the server user must be able to stand in the working directory
RUNAS=()
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || { echo "FAIL: running as root and there is no postgres user"; exit 1; }
  if command -v runuser >/dev/null 2>&1; then RUNAS=(runuser -u postgres --)
  else RUNAS=(su -s /bin/sh postgres -c); fi
fi
as_pg() {
  if [ ${#RUNAS[@]} -eq 0 ]; then "$@"
  elif [ "${RUNAS[0]}" = su ]; then "${RUNAS[@]}" "$(printf '%q ' "$@")"
  else "${RUNAS[@]}" "$@"; fi
}
mkdir -p "$T/data" "$T/sock"
[ "$(id -u)" = 0 ] && chown postgres: "$T/data" "$T/sock"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
STARTED=0
cleanup() {
  rc=$?
  if [ "$STARTED" = 1 ]; then
    as_pg "$PGBIN/pg_ctl" -D "$T/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  if [ $rc -ne 0 ] && [ -f "$T/server.log" ]; then
    echo "--- server log (last 20 lines)"; tail -20 "$T/server.log" || true
  fi
  rm -rf "$T"
  exit $rc
}
trap cleanup EXIT INT TERM

touch "$T/server.log"
[ "$(id -u)" = 0 ] && chown postgres: "$T/server.log"
as_pg "$PGBIN/initdb" -D "$T/data" -U postgres --auth=trust -E UTF8 --locale=C --no-sync \
  >"$T/initdb.log" 2>&1 || { cat "$T/initdb.log"; exit 1; }
as_pg "$PGBIN/pg_ctl" -D "$T/data" -l "$T/server.log" -w -t 60 \
  -o "-k $T/sock -p $PORT -c listen_addresses='' -c fsync=off -c full_page_writes=off" start >/dev/null
STARTED=1
export PGHOST=$T/sock PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres
"$PSQL" -X -q -c "CREATE DATABASE heap_jsonl" >/dev/null
echo "server up: socket $T/sock, port $PORT"

# --- data ------------------------------------------------------------------------
ruby --disable-gems "$WORKLOAD" --steps 4 --scale 1 --out "$T/dumps" >"$T/gen.log" 2>&1 \
  || { cat "$T/gen.log"; exit 1; }
DUMPS=("$T"/dumps/step_*.json)
"$HEAPSCOPE" export --format csv --out "$T/csv" "${DUMPS[@]}"
"$HEAPSCOPE" export --format jsonl --out "$T/jsonl" "${DUMPS[@]}"
"$PSQL" -X -q -v ON_ERROR_STOP=1 -d postgres -f "$T/csv/schema.sql" >/dev/null
"$PSQL" -X -q -v ON_ERROR_STOP=1 -d heap_jsonl -f "$T/jsonl/schema.sql" >/dev/null
echo "loaded: csv into postgres, jsonl into heap_jsonl"

python3 "$HERE/check_postgres.py" --heapscope "$HEAPSCOPE" --psql "$PSQL" --doc "$DOC" \
  --dumps "$T/dumps" --databases postgres heap_jsonl
