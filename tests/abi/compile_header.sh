#!/usr/bin/env bash
# Compile tests/abi/header_compile.{c,cpp} with one compiler and language
# standard, warnings as errors, link it against the built shared library
# and run it.
#
# usage: compile_header.sh COMPILER STD SOURCE LIBRARY OUTDIR INCDIR... [--no-link]
#   --no-link: compile only (sanitizer builds: the instrumented library
#              needs the matching runtime to link).
set -euo pipefail
cxx=$1 std=$2 src=$3 lib=$4 out=$5
shift 5
incs=() link=1
for a in "$@"; do
  if [ "$a" = --no-link ]; then link=0; else incs+=(-I "$a"); fi
done
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "FAIL: compiler $cxx not found (scripts/setup.sh installs gcc, g++ and clang)"
  exit 1
fi
flags=(-std="$std" -Wall -Wextra -Wpedantic -Werror -Wundef -Wshadow)
case "$std" in
  c*+*) ;;                                        # C++
  *) flags+=(-Wstrict-prototypes -Wmissing-prototypes) ;;
esac
mkdir -p "$out"
exe=$out/header_$(basename "$cxx")_$std
exe=${exe//+/x}
echo "+ $cxx ${flags[*]} ${incs[*]} $src"
if [ "$link" = 0 ]; then
  "$cxx" "${flags[@]}" "${incs[@]}" -c "$src" -o "$exe.o"
  echo "ok: compiled (not linked: sanitizer build)"
  exit 0
fi
"$cxx" "${flags[@]}" "${incs[@]}" "$src" -o "$exe" "$lib" -Wl,-rpath,"$(dirname "$lib")"
"$exe"
