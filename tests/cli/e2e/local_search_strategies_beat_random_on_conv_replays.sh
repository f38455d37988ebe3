#!/bin/sh
# The local-search strategies (mls, greedy_ils, simulated_annealing,
# basinhopping, dual_annealing) on T1 spaces replayed from their T4 files
# (simulated time): each one's median best over five seeds of 100 trials is
# at least as fast as random's on one of two convolution spaces.  Their
# validity, determinism, resume and parameter checks are
# local_search_strategies_on_t1_t4_replays.sh, which also runs under the
# sanitizers; this one checks what the search finds, in the Release stage
# only (label no_asan: 60 runs, 91 s under ASan, the same code).
. "$(dirname "$0")/../e2e_common.sh"
. "$(dirname "$0")/../local_search_common.sh"

# Each one's median best over five seeds of 100 trials is at least as fast
# as random's on convolution-A100 or convolution-A4000 (the runs are
# deterministic; the medians printed show the margins).
best() {
  python3 -c '
import json, sys
print(min(r["seconds"] for r in map(json.loads, open(sys.argv[1]))
          if r["status"] == "ok"))' "$1"
}
median() {
  printf '%s\n' "$@" | sort -g | sed -n "$((($# + 1) / 2))p"
}
for t4 in A100_T4 A4000_T4; do
  for s in random $STRATS; do
    set --
    for seed in 1 2 3 4 5; do
      run convolution "$t4" "$s" "$seed" 100 "$W/m.jsonl"
      set -- "$@" "$(best "$W/m.jsonl")"
    done
    echo "$(median "$@")" >"$W/med.$t4.$s"
  done
done
for s in $STRATS; do
  won=0
  for t4 in A100_T4 A4000_T4; do
    m=$(cat "$W/med.$t4.$s") r=$(cat "$W/med.$t4.random")
    echo "$t4 $s: median best $m s, random $r s"
    if python3 -c 'import sys; sys.exit(float(sys.argv[1]) > float(sys.argv[2]))' \
      "$m" "$r"; then won=1; fi
  done
  [ "$won" -eq 1 ] || fail "$s is slower than random on both spaces"
done
echo ok
