#!/bin/sh
# check_exports.sh MODE LIB INCLUDE_DIR - libheron's dynamic symbol table
# against its public headers (after jansson's check-exports).
#
#   only      every defined dynamic symbol is a public heron_* name (no
#             heron__ internals, no stray helpers), apart from the few the
#             toolchain and the sanitizers add;
#   declared  every function declared HERON_API in INCLUDE_DIR/*.h is
#             exported, so no documented function is missing.
set -eu
mode=$1 lib=$2 inc=$3
tmp=${TMPDIR:-/tmp}/heron-exports.$$
trap 'rm -f "$tmp".*' EXIT

nm -D --defined-only "$lib" | awk '{ print $NF }' | sed 's/@.*//' |
  sort -u >"$tmp.exported"
[ -s "$tmp.exported" ] || { echo "no symbols read from $lib" >&2; exit 1; }

case $mode in
only)
  # Allowed besides heron_*: linker-made markers, and what ASan/UBSan
  # builds add (__asan_*, __odr_asan_*, __ubsan_*, __sancov_*).
  grep -v -E '^heron_[a-z0-9]' "$tmp.exported" |
    grep -v -E '^(_init|_fini|_edata|_end|__bss_start|__end__|_DYNAMIC|_GLOBAL_OFFSET_TABLE_)$' |
    grep -v -E '^(__asan_|___asan_|__odr_asan|__ubsan_|__sancov_|__lsan_)' \
      >"$tmp.bad" || true
  grep -E '^heron__' "$tmp.exported" >>"$tmp.bad" || true
  if [ -s "$tmp.bad" ]; then
    echo "$lib exports symbols outside the public API:" >&2
    sed 's/^/  /' "$tmp.bad" >&2
    exit 1
  fi
  echo "ok: $(wc -l <"$tmp.exported") symbols, all public"
  ;;
declared)
  cat "$inc"/*.h | tr '\n' ' ' | grep -o 'HERON_API[^(;]*(' |
    sed -E 's/.*[^A-Za-z0-9_](heron_[A-Za-z0-9_]+)[[:space:]]*\($/\1/' |
    grep -E '^heron_[A-Za-z0-9_]+$' | sort -u >"$tmp.declared"
  [ -s "$tmp.declared" ] || { echo "no HERON_API declarations in $inc" >&2; exit 1; }
  comm -23 "$tmp.declared" "$tmp.exported" >"$tmp.missing"
  if [ -s "$tmp.missing" ]; then
    echo "declared HERON_API in $inc but not exported by $lib:" >&2
    sed 's/^/  /' "$tmp.missing" >&2
    exit 1
  fi
  echo "ok: all $(wc -l <"$tmp.declared") declared functions exported"
  ;;
*)
  echo "usage: check_exports.sh only|declared LIB INCLUDE_DIR" >&2
  exit 2
  ;;
esac
