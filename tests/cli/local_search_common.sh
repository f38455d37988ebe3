# Sourced by the local-search strategies' e2e tests (after
# e2e_common.sh): the replayed spaces, the five strategies and a run of one
# on a T1 space replayed from a T4 file (simulated time, no kernel built).
HUB="$HERON_SOURCE_DIR/configs/datasets/benchmark_hub"
STRATS="mls greedy_ils simulated_annealing basinhopping dual_annealing"

# run SPACE T4 STRATEGY SEED TRIALS LOG [flags]
run() {
  _sp=$1 _t4=$2 _s=$3 _seed=$4 _n=$5 _log=$6
  shift 6
  "$HERON_SEARCH" --t1 "$HUB/$_sp/T1.json" --t4 "$HUB/$_sp/$_t4.json.gz" \
    --strategy "$_s" --trials "$_n" --batch 8 --seed "$_seed" --quiet \
    --log "$_log" "$@" >"$W/run.out" 2>"$W/run.err" ||
    fail "$_s on $_sp seed $_seed exited $?"
}
