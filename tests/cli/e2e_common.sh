# e2e_common.sh - sourced by the scripts in tests/cli/e2e/.
#
# Gives each script a scratch folder $W (removed at exit), fail(), the fast
# measuring flags $FAST that keep the suite short, and check_log (the
# log-format checker).  Every e2e test tunes for real, with the random
# strategy on small GEMMs.
set -eu
: "${HERON_SEARCH:?set HERON_SEARCH to the heron-search binary}"
: "${HERON_SPACE:?set HERON_SPACE to the heron-space binary}"
CLI_DIR=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/heron-e2e.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
FAST="--number 1 --repeat 1 --min-repeat-ms 1 --quiet --work-dir $W/work"

fail() {
  echo "FAIL: $*" >&2
  for f in "$W"/*.out "$W"/*.err; do
    [ -f "$f" ] || continue
    echo "--- $f" >&2
    tail -c 3000 "$f" >&2
  done
  exit 1
}

check_log() {
  python3 "$CLI_DIR/check_log.py" "$@" || fail "log check failed: $*"
}

# lines FILE: the number of lines of FILE (0 when it does not exist).
lines() {
  if [ -f "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi
}
