#!/bin/sh
# --emit DIR writes the best kernel's source, its config as JSON and a
# driver; the config is that of the fastest trial in the log, and the
# driver builds with the system compiler, runs, and prints GFLOP/s.
. "$(dirname "$0")/../e2e_common.sh"
OUT=$W/best
LOG=$W/e.jsonl
"$HERON_SEARCH" --op gemm --shape 64,64,64 --trials 8 --batch 8 \
  --log "$LOG" --emit "$OUT" $FAST >"$W/run.out" 2>"$W/run.err" ||
  fail "heron-search exited with $?"
[ -d "$OUT" ] || fail "no folder $OUT"
ls "$OUT"/*.c >/dev/null 2>&1 || fail "no C source in $OUT: $(ls "$OUT")"
python3 - "$LOG" "$OUT" <<'PY' || fail "no config JSON of the best trial in $OUT"
import glob, json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
best = max((r for r in recs if r["status"] == "ok"), key=lambda r: r["gflops"])
for path in glob.glob(sys.argv[2] + "/*.json"):
    d = json.load(open(path))
    if isinstance(d, dict) and d.get("config", d) == best["config"]:
        sys.exit(0)
print("best trial %d has config %s" % (best["trial"], best["config"]),
      file=sys.stderr)
sys.exit(1)
PY
if [ -f "$OUT/build.sh" ]; then
  # The emitted script is what a user runs: it builds and runs the driver.
  sh "$OUT/build.sh" >"$W/drv.out" 2>"$W/drv.err" ||
    fail "$OUT/build.sh exited with $?"
else
  driver=$(grep -l "main *(" "$OUT"/*.c | head -n 1)
  [ -n "$driver" ] || fail "no driver (a C file with main) in $OUT"
  CC=${CC:-cc}
  FLAGS="-O3 -march=native -fopenmp"
  # The driver may include the kernel itself or expect it linked beside it.
  $CC $FLAGS -o "$W/drv" "$driver" -lm 2>"$W/cc1.err" ||
    $CC $FLAGS -o "$W/drv" "$OUT"/*.c -lm 2>"$W/cc.err" ||
    fail "the emitted files do not build"
  "$W/drv" >"$W/drv.out" 2>"$W/drv.err" || fail "the driver exited with $?"
fi
grep -q "GFLOP/s" "$W/drv.out" || fail "the driver prints no GFLOP/s"
echo ok
