#!/bin/sh
# report_html.sh BEHAVIOUR HERON_BENCH [ARTIFACTS] - heron-bench's report.html,
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
#   shows_the_html_report_in_headless_chromium: Debian's chromium, headless,
#     loads the page with an error recorder put in ahead of its scripts:
#     no error is recorded and no console line logged, and the dumped DOM
#     has every task with both charts drawn, a line per strategy.  The same
#     recorder must catch the error of a copy whose script is broken on
#     purpose (the check checks itself).  A screenshot of the page is kept
#     in ARTIFACTS/report.png, with the page as report.html, and its path
#     printed.  Skipped (77) when no chromium is installed.
set -eu
behaviour=$1 bench=$2 artifacts=${3:-}
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

# The browser first: a missing one skips before anything runs.
if [ "$behaviour" = shows_the_html_report_in_headless_chromium ]; then
  [ -n "$artifacts" ] || {
    echo "report_html.sh: $behaviour needs the ARTIFACTS folder" >&2
    exit 2
  }
  browser=
  for b in chromium chromium-browser; do
    if command -v "$b" >/dev/null 2>&1; then
      browser=$b
      break
    fi
  done
  if [ -z "$browser" ]; then
    echo "SKIP: chromium is not installed (tools/setup.sh installs it)"
    exit 77
  fi
fi

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
shows_the_html_report_in_headless_chromium)
  # The recorder: every error event, unhandled rejection and console.error
  # before the load event, written into the DOM at load for --dump-dom.
  cat >"$W/recorder" <<'JS'
<script>(function () {
  var seen = [];
  window.addEventListener('error', function (e) {
    seen.push('error: ' + e.message + ' at ' + e.lineno);
  });
  window.addEventListener('unhandledrejection', function (e) {
    seen.push('unhandled rejection: ' + e.reason);
  });
  var ce = console.error;
  console.error = function () {
    seen.push('console.error: ' + Array.prototype.join.call(arguments, ' '));
    return ce.apply(console, arguments);
  };
  window.addEventListener('load', function () {
    var p = document.createElement('pre');
    p.id = 'heron-console-errors';
    p.textContent = seen.join('\n');
    document.body.appendChild(p);
  });
})();</script>
JS
  # with_recorder PAGE OUT: PAGE with the recorder first in its head.
  with_recorder() {
    python3 - "$1" "$2" "$W/recorder" <<'PY'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
rec = open(sys.argv[3], encoding="utf-8").read()
assert page.count("<head>") == 1
open(sys.argv[2], "w", encoding="utf-8").write(page.replace("<head>", "<head>\n" + rec, 1))
PY
  }
  # browse NAME ARGS...: chromium on $W/NAME.html, a private profile, no
  # network of its own; stdout to NAME.dom, stderr to NAME.err.  A hang
  # guard only: a loaded machine may take a minute to start it.
  browse() {
    name=$1
    shift
    timeout -k 10 600 "$browser" --headless --no-sandbox --disable-gpu \
      --user-data-dir="$W/profile-$name" --no-first-run \
      --no-default-browser-check --disable-extensions \
      --disable-background-networking --disable-component-update \
      --disable-sync --enable-logging=stderr --v=0 "$@" \
      "file://$W/$name.html" >"$W/$name.dom" 2>"$W/$name.err"
  }
  with_recorder "$W/out/report.html" "$W/page.html"
  browse page --dump-dom || fail "chromium exited with $? on the page"
  $check dom "$W/page.dom" "$W/out" || fail "the page did not load as it should"
  if grep ':CONSOLE' "$W/page.err" >&2; then
    fail "the page logged to the console (above)"
  fi
  # The check checks itself: the same page with its script broken.
  sed 's/JSON\.parse(/JSON.parze(/' "$W/out/report.html" >"$W/broken-src.html"
  ! cmp -s "$W/out/report.html" "$W/broken-src.html" ||
    fail "could not break the page's script"
  with_recorder "$W/broken-src.html" "$W/broken.html"
  browse broken --dump-dom || fail "chromium exited with $? on the broken page"
  $check dom-has-error "$W/broken.dom" ||
    fail "the recorder missed the broken page's error"
  grep -q ':CONSOLE.*JSON.parze is not a function' "$W/broken.err" ||
    fail "the console log missed the broken page's error"
  ! $check dom "$W/broken.dom" "$W/out" 2>/dev/null ||
    fail "the DOM check passed the broken page"
  echo "the error recorder and the console log caught the broken page's error"
  mkdir -p "$artifacts"
  rm -f "$artifacts/report.png" "$artifacts/report.html"
  cp "$W/out/report.html" "$artifacts/report.html"
  cp "$W/out/report.html" "$W/shot.html"
  browse shot --window-size=1280,6000 --hide-scrollbars \
    --screenshot="$artifacts/report.png" ||
    fail "chromium exited with $? taking the screenshot"
  [ -s "$artifacts/report.png" ] || fail "no screenshot in $artifacts"
  echo "screenshot: $artifacts/report.png (of $artifacts/report.html)"
  ;;
*)
  echo "report_html.sh: unknown behaviour '$behaviour'" >&2
  exit 2
  ;;
esac
