#!/bin/sh
# report_html.sh BEHAVIOUR HERON_BENCH - heron-bench's report.html,
# each behaviour in a scratch folder removed at exit.
#
# The comparison both use: random and genetic on two T1/T4 spaces of the
# shipped benchmark hub (convolution and dedispersion on the W6600, the
# cheapest: replayed, seconds), one seed each, scored by the methodology;
# beside them the recorded logs of data/logs (task GEMM, an ordinary task
# with failures of every kind) and one more log, task ESC, whose config
# holds markup, so the page must escape it.
#
#   writes_a_self_contained_html_report: report.html names every task with
#     its tables and charts, has the score tables of the two spaces, loads
#     nothing (no src, no link, no href outside the page, nothing on
#     http(s)), its JSON data parses and matches the logs, the markup is
#     escaped; --report-only writes it again byte for byte.
set -eu
behaviour=$1 bench=$2
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
check="python3 $here/check_report_html.py"
W=$(mktemp -d "${TMPDIR:-/tmp}/heron-report-html.XXXXXX")
trap 'rm -rf "$W"' EXIT
trap 'exit 1' INT TERM

fail() {
  echo "FAIL: $*" >&2
  for f in "$W"/*.err; do
    [ -f "$f" ] || continue
    echo "--- $f" >&2
    tail -c 3000 "$f" >&2
  done
  exit 1
}

# The comparison (see the top).
mkdir -p "$W/suites/hub"
ln -s "$src/configs/datasets/benchmark_hub/convolution" "$W/suites/hub/convolution"
ln -s "$src/configs/datasets/benchmark_hub/dedispersion" "$W/suites/hub/dedispersion"
cat >"$W/suites/suite.json" <<JSON
{"tasks": [
  {"name": "conv", "t1": "hub/convolution/T1.json", "t4": "hub/convolution/W6600_T4.json.gz"},
  {"name": "dedisp", "t1": "hub/dedispersion/T1.json", "t4": "hub/dedispersion/W6600_T4.json.gz"}]}
JSON
"$bench" --suite "$W/suites/suite.json" --strategies random,genetic \
  --seeds 1 --out "$W/out" >"$W/bench.out" 2>"$W/bench.err" ||
  fail "heron-bench exited with $?"
cp "$here"/data/logs/*.jsonl "$W/out/logs/"
MARKUP='</script><b onclick="x">&amp;'"'"
python3 - "$W/out/logs/ESC__random__s1.jsonl" "$MARKUP" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for t, g in ((1, 5.0), (2, 7.5)):
        f.write(json.dumps({"trial": t, "status": "ok", "gflops": g,
                            "seconds": 1 / g, "elapsed": t,
                            "config": {"mode": sys.argv[2] + str(t), "tile": t}}) + "\n")
PY
"$bench" --out "$W/out" --report-only >"$W/ro.out" 2>"$W/ro.err" ||
  fail "--report-only exited with $?"

case $behaviour in
writes_a_self_contained_html_report)
  [ -s "$W/out/report.html" ] || fail "no report.html"
  grep -q "report.html" "$W/ro.err" || fail "the report line does not name report.html"
  $check page "$W/out" --scored conv,dedisp --escaped "${MARKUP}1" ||
    fail "report.html is not as it should be"
  cp "$W/out/report.html" "$W/first.html"
  rm "$W/out/report.html"
  "$bench" --out "$W/out" --report-only >"$W/ro2.out" 2>"$W/ro2.err" ||
    fail "the second --report-only exited with $?"
  cmp "$W/first.html" "$W/out/report.html" ||
    fail "--report-only wrote another report.html from the same logs"
  ;;
*)
  echo "report_html.sh: unknown behaviour '$behaviour'" >&2
  exit 2
  ;;
esac
