#!/bin/sh
# Installs the build into a scratch prefix, compiles tests/plugin/oot/hill.c
# against the installed headers only, and tunes a small GEMM with it through
# the installed heron-search.  Fails if the install lacks a header, a symbol
# or the tool, or if the run does not log the expected trials.
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
# Only the installed include folder is on the path: no source-tree headers.
${CC:-cc} -std=c11 -Wall -Wextra -Werror -fPIC -shared -fvisibility=hidden \
  -I"$tmp/prefix/include" -o "$tmp/hill.so" "$src/tests/plugin/oot/hill.c" \
  -L"$tmp/prefix/lib" -lheron
"$tmp/prefix/bin/heron-search" --op gemm --shape 48,48,48 \
  --strategy "$tmp/hill.so" --trials 6 --batch 3 --number 1 --repeat 1 \
  --min-repeat-ms 1 --quiet --log "$tmp/log.jsonl" >"$tmp/out.txt"
lines=$(wc -l <"$tmp/log.jsonl")
if [ "$lines" -ne 6 ]; then
  echo "expected 6 logged trials, found $lines" >&2
  exit 1
fi
if ! grep -q '"strategy":"hill"' "$tmp/log.jsonl"; then
  echo "log does not name the out-of-tree strategy" >&2
  exit 1
fi
if grep -v -q '"status":"ok"' "$tmp/log.jsonl"; then
  echo "a trial of the out-of-tree strategy failed:" >&2
  grep -v '"status":"ok"' "$tmp/log.jsonl" >&2
  exit 1
fi
echo "out-of-tree plugin: 6 trials ok"
