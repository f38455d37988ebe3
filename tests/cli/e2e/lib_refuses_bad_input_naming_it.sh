#!/bin/sh
# heron-lib refuses what it cannot build, exit status 2 and a message that
# names the cause: a library name that is not a C identifier, a suite task
# without a log under --no-tune, two suite tasks that are one task (one
# function name), a log that is no JSON Lines log, and a log measured on a
# machine of another ISA level (made here under HERON_CPU_ISA=sse, a real
# run, not a faked line), which names both machines.  Nothing is written
# for a refused library.
. "$(dirname "$0")/../e2e_common.sh"
: "${HERON_LIB:?set HERON_LIB to the heron-lib binary}"
SUITE=$CLI_DIR/lib/suite.json

# refused NAME EXPECTED-TEXT ARGS...: heron-lib ARGS exits 2 and its
# stderr holds EXPECTED-TEXT.
refused() {
  _n=$1 _want=$2
  shift 2
  rc=0
  "$HERON_LIB" "$@" >"$W/$_n.out" 2>"$W/$_n.err" || rc=$?
  [ "$rc" -eq 2 ] || fail "$_n: exit status $rc, wanted 2: $(cat "$W/$_n.err")"
  grep -q -- "$_want" "$W/$_n.err" ||
    fail "$_n: stderr lacks '$_want': $(cat "$W/$_n.err")"
}

refused name "'9lib' is not a library name" --name 9lib --out "$W/o1" \
  --suite "$SUITE"
refused name2 "is not a library name" --name my-lib --out "$W/o1" \
  --suite "$SUITE"
refused nolog "task gemm (gemm/33,17,9/fp32/cpu) has no log" --name t \
  --out "$W/o2" --suite "$SUITE" --no-tune
[ ! -e "$W/o2/lib" ] || fail "a refused library left $W/o2/lib"

cat >"$W/twice.json" <<'JSON'
{"name": "twice", "dtype": "fp32", "target": "cpu", "tasks": [
  {"name": "a", "op": "gemm", "shape": {"M": 8, "N": 8, "K": 8}},
  {"name": "b", "op": "gemm", "shape": [8, 8, 8]}]}
JSON
refused twice "tasks a and b are the same task (gemm/8,8,8/fp32/cpu)" \
  --name t --out "$W/o3" --suite "$W/twice.json"

printf 'not json\n{"task":"gemm/8,8,8/fp32/cpu"}\n' >"$W/garbage.jsonl"
refused garbage "garbage.jsonl:1: not a JSON object" --name t \
  --out "$W/o4" --log "$W/garbage.jsonl"

HERON_CPU_ISA=sse "$HERON_SEARCH" --op gemm --shape 16,16,16 --trials 2 \
  --batch 2 --log "$W/sse.jsonl" $FAST >"$W/sse.out" 2>"$W/sse.err" ||
  fail "heron-search under HERON_CPU_ISA=sse exited $?"
grep -q '"hardware":"this machine ([^"]*, sse by HERON_CPU_ISA)"' \
  "$W/sse.jsonl" || fail "the sse log does not name its ISA: $(head -c 600 "$W/sse.jsonl")"
refused isa "sse.jsonl:1 was measured on this machine (" --name t \
  --out "$W/o5" --log "$W/sse.jsonl"
grep -q "sse by HERON_CPU_ISA).*but the library is built for this machine" \
  "$W/isa.err" || fail "the refusal does not name both machines: $(cat "$W/isa.err")"
[ ! -e "$W/o5/lib" ] || fail "a refused library left $W/o5/lib"
echo ok
