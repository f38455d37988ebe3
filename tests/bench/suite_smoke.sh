#!/bin/sh
# suite_smoke.sh BEHAVIOUR BENCH_SUITE SUITE_FILE - smoke tests of the suite
# benchmark, in a scratch folder removed at exit.
#
#   suite_tunes_and_compares_every_task_and_thread_count: a 6-trial run of
#     the two tasks of SUITE_FILE on 1 and 2 threads exits 0 and writes
#     results.md and results.csv with one row per task and thread count,
#     each with a positive ratio and no MISMATCH; a second run finds the
#     complete logs and searches nothing again.
#   suite_rejects_an_unknown_flag_with_status_2
set -eu
behaviour=$1 bench=$2 suite=$3
W=$(mktemp -d "${TMPDIR:-/tmp}/heron-bench-smoke.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM

fail() {
  echo "FAIL: $*" >&2
  for f in "$W"/run*.out "$W"/run*.err; do
    [ -f "$f" ] || continue
    echo "--- $f" >&2
    tail -c 4000 "$f" >&2
  done
  exit 1
}

# Fast measuring: one repeat per candidate, short comparison repeats; a
# generous timeout, as a loaded machine must not fail a kernel.
FAST="--trials 6 --strategy random --threads 1,2 --batch 6 --repeat 1
      --min-repeat-ms 1 --timeout 20 --compare-repeat 3 --compare-ms 10"

case $behaviour in
suite_tunes_and_compares_every_task_and_thread_count)
  status=0
  # shellcheck disable=SC2086
  "$bench" --suite "$suite" --out "$W/out" $FAST >"$W/run1.out" \
    2>"$W/run1.err" || status=$?
  [ "$status" -eq 0 ] || fail "bench_suite exited with $status"
  [ -s "$W/out/results.md" ] || fail "no results.md"
  [ -s "$W/out/results.csv" ] || fail "no results.csv"
  grep -q MISMATCH "$W/out/results.md" "$W/out/results.csv" "$W/run1.out" &&
    fail "a kernel disagrees with its baseline"
  python3 - "$W/out" <<'PY' || fail "results check failed"
import csv, sys
out = sys.argv[1]
want = {("GEMM", "1"), ("GEMM", "2"), ("C2D", "1"), ("C2D", "2")}
rows = list(csv.DictReader(open(out + "/results.csv")))
got = [(r["task"], r["threads"]) for r in rows]
assert sorted(got) == sorted(want), "csv rows %s, want %s" % (got, want)
for r in rows:
    assert r["status"] == "ok", r
    assert float(r["ratio"]) > 0 and float(r["heron_gflops"]) > 0, r
    assert float(r["baseline_gflops"]) > 0, r
    assert int(r["trials"]) == 6, r
    if r["task"] == "C2D":  # oneDNN on plain layouts as a second figure
        assert float(r["ratio2"]) > 0, r
md = [l for l in open(out + "/results.md") if l.startswith("| GEMM") or
      l.startswith("| C2D")]
assert len(md) == 4, "markdown rows: %r" % md
for l in md:
    cells = [c.strip() for c in l.strip().strip("|").split("|")]
    assert float(cells[6]) > 0, "ratio cell of %r" % l
for name in ("GEMM-t1", "GEMM-t2", "C2D-t1", "C2D-t2"):
    n = sum(1 for _ in open("%s/%s.jsonl" % (out, name)))
    assert n == 6, "%s.jsonl has %d lines" % (name, n)
    open("%s/%s/kernel.c" % (out, name)).close()
PY
  # The logs are complete: a second run resumes them, measures nothing,
  # and still compares.
  # shellcheck disable=SC2086
  "$bench" --suite "$suite" --out "$W/out" $FAST --tasks GEMM \
    >"$W/run2.out" 2>"$W/run2.err" || fail "second run exited with $?"
  grep -q "resumed 6 trials" "$W/run2.err" || fail "second run did not resume"
  [ "$(wc -l <"$W/out/GEMM-t1.jsonl")" -eq 6 ] ||
    fail "second run measured again"
  grep -q "^| GEMM | 64,64,64 | 1 |" "$W/run2.out" ||
    fail "second run printed no table"
  ;;
suite_rejects_an_unknown_flag_with_status_2)
  status=0
  "$bench" --suite "$suite" --out "$W/out" --no-such-flag 1 \
    >"$W/run1.out" 2>"$W/run1.err" || status=$?
  [ "$status" -eq 2 ] || fail "unknown flag: exit status $status, want 2"
  grep -q "no-such-flag" "$W/run1.err" || fail "message does not name the flag"
  [ ! -e "$W/out" ] || fail "a rejected run created its output folder"
  ;;
*)
  echo "suite_smoke.sh: unknown behaviour '$behaviour'" >&2
  exit 2
  ;;
esac
