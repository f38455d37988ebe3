#!/bin/sh
# mpi_search.sh BEHAVIOUR HERON_SEARCH MPIRUN SOURCE_DIR - heron-search as a
# real MPI job (`mpirun --oversubscribe -n 3`: rank 0 searches, ranks 1 and
# 2 measure), each behaviour in a scratch folder removed at exit.
#
#   replay_log_equals_one_process: on the replay target (the shipped CPU
#     dataset), genetic + xgb, seed 7, batch 8: the job's log holds the same
#     configs with the same results as one process's.
#   cpu_trials_are_measured_once_and_checked: on the cpu target, 12 trials:
#     12 records of 12 distinct configs, every one ok, checked (max_error
#     recorded) and timed.
#   one_rank_runs_as_without_mpirun: `mpirun -n 1` logs what a plain run
#     logs.
#   killed_rank_loses_nothing_and_the_job_resumes: rank 2 kills itself
#     (SIGKILL, the HERON_MPI_TEST_DIE_* hook) at its 11th candidate.
#     Under `mpirun --enable-recovery` the job goes on: 40 records, the
#     lost candidate recorded as failed by the environment, every other ok;
#     --resume on 3 ranks measures it again and nothing else.  Under a
#     plain mpirun, which ends the whole job: rank 0 logged each result as
#     it came, so the log holds the round in flight's results too (more
#     than the two whole rounds before it; answers take 200 ms, so both
#     ranks answer about equally), and --resume finishes the 40 trials
#     without measuring any of them again.
#   bench_runs_spread_over_ranks_and_report_once: heron-bench (random and
#     genetic, 3 seeds, on the replay dataset) as a 3-rank job: one progress
#     line per run, one report, and runs.csv's trials and results (all but
#     elapsed time) equal one process's.
#   mismatched_hardware_is_refused: rank 2 reports another CPU model (the
#     HERON_MPI_TEST_HW_* hook): exit 2 naming both ranks and --allow-mixed,
#     nothing written; with --allow-mixed the job runs and warns.
set -u
behaviour=$1 search=$2 mpirun=$3 src=$4
W=$(mktemp -d "${TMPDIR:-/tmp}/heron-mpi.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
fail() {
  echo "FAIL: $behaviour: $*" >&2
  for f in "$W"/*.err; do
    [ -e "$f" ] || continue
    echo "--- $f" >&2
    tail -c 3000 "$f" >&2
  done
  exit 1
}
# Root may run MPI jobs here (CI runs as root); OpenMPI refuses otherwise.
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_rmaps_base_oversubscribe=1
data=$src/configs/datasets/cpu-gemm512-fp32.jsonl.gz
replay="--op gemm --shape 512,512,512 --target replay --replay $data"
# The records of a log as a set: key, status, seconds.
records() {
  python3 -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(r["key"], r["status"], repr(r["seconds"]), r.get("cause", ""))
' "$1" | sort
}
cd "$W" || exit 1
case $behaviour in
replay_log_equals_one_process)
  # shellcheck disable=SC2086
  "$mpirun" -n 3 "$search" $replay --strategy genetic --model xgb --seed 7 \
    --trials 40 --batch 8 --log mpi.jsonl >mpi.out 2>mpi.err ||
    fail "the job exited with $?"
  grep -q 'mpi: rank 0 searches, 2 ranks measure' mpi.err ||
    fail "the job did not run on the ranks"
  # shellcheck disable=SC2086
  "$search" $replay --strategy genetic --model xgb --seed 7 --trials 40 \
    --batch 8 --log one.jsonl >one.out 2>one.err || fail "one process: $?"
  records mpi.jsonl >mpi.set
  records one.jsonl >one.set
  [ "$(wc -l <mpi.set)" -eq 40 ] || fail "$(wc -l <mpi.set) records, want 40"
  cmp -s mpi.set one.set || fail "the job's log differs from one process's"
  ;;
cpu_trials_are_measured_once_and_checked)
  "$mpirun" -n 3 "$search" --op gemm --shape 96,80,64 --trials 12 --batch 6 \
    --number 1 --repeat 1 --min-repeat-ms 1 --log cpu.jsonl >cpu.out \
    2>cpu.err || fail "the job exited with $?"
  python3 - cpu.jsonl <<'PY' || fail "the log is not 12 checked, timed configs"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
keys = {r["key"] for r in recs}
good = [r for r in recs if r["status"] == "ok" and r["seconds"] > 0
        and "max_error" in r]
sys.exit(0 if len(recs) == 12 and len(keys) == 12 and len(good) == 12 else 1)
PY
  ;;
one_rank_runs_as_without_mpirun)
  # shellcheck disable=SC2086
  "$mpirun" -n 1 "$search" $replay --seed 3 --trials 24 --batch 8 \
    --log mpi.jsonl >mpi.out 2>mpi.err || fail "the job exited with $?"
  if grep -q 'mpi: rank 0' mpi.err; then fail "one rank ran distributed"; fi
  # shellcheck disable=SC2086
  "$search" $replay --seed 3 --trials 24 --batch 8 --log one.jsonl \
    >one.out 2>one.err || fail "one process: $?"
  records mpi.jsonl >mpi.set
  records one.jsonl >one.set
  cmp -s mpi.set one.set || fail "mpirun -n 1 logged something else"
  ;;
killed_rank_loses_nothing_and_the_job_resumes)
  export HERON_MPI_TEST_DIE_RANK=2 HERON_MPI_TEST_DIE_AFTER=10
  # shellcheck disable=SC2086
  "$mpirun" --enable-recovery -x HERON_MPI_TEST_DIE_RANK \
    -x HERON_MPI_TEST_DIE_AFTER -n 3 "$search" $replay --trials 40 \
    --batch 8 --rank-timeout 5 --log rec.jsonl >rec.out 2>rec.err
  grep -q 'lost with ranks that stopped answering' rec.err ||
    fail "rank 0 did not report the lost rank"
  [ "$(wc -l <rec.jsonl)" -eq 40 ] || fail "$(wc -l <rec.jsonl) records, want 40"
  [ "$(grep -c '"cause":"environment"' rec.jsonl)" -eq 1 ] ||
    fail "not one candidate recorded as lost"
  [ "$(grep -c '"status":"ok"' rec.jsonl)" -eq 39 ] || fail "not 39 ok"
  unset HERON_MPI_TEST_DIE_RANK HERON_MPI_TEST_DIE_AFTER
  # shellcheck disable=SC2086
  "$mpirun" -n 3 "$search" $replay --trials 40 --batch 8 \
    --resume rec.jsonl >res.out 2>res.err || fail "the resume exited with $?"
  grep -q 'measured 1, resumed 39' res.out || fail "the resume did not retry the lost one only"
  # A plain mpirun ends the whole job when a rank dies.
  export HERON_MPI_TEST_DIE_RANK=2 HERON_MPI_TEST_DIE_AFTER=10
  # shellcheck disable=SC2086
  "$mpirun" -x HERON_MPI_TEST_DIE_RANK -x HERON_MPI_TEST_DIE_AFTER -n 3 \
    "$search" $replay --trials 40 --batch 8 --replay-delay 200 \
    --log plain.jsonl >plain.out 2>plain.err &&
    fail "a job that lost a rank exited 0"
  n=$(wc -l <plain.jsonl)
  [ "$n" -gt 16 ] && [ "$n" -lt 40 ] ||
    fail "$n records after the abort, want the round in flight's too (> 16)"
  python3 -c '
import json, sys
for l in open(sys.argv[1]):
    json.loads(l)
' plain.jsonl || fail "the log is not whole"
  unset HERON_MPI_TEST_DIE_RANK HERON_MPI_TEST_DIE_AFTER
  # shellcheck disable=SC2086
  "$mpirun" -n 3 "$search" $replay --trials 40 --batch 8 \
    --resume plain.jsonl >pres.out 2>pres.err || fail "resume: $?"
  [ "$(wc -l <plain.jsonl)" -eq 40 ] || fail "the resume did not finish"
  grep -q "resumed $n" pres.out || fail "the resume re-measured records"
  ;;
bench_runs_spread_over_ranks_and_report_once)
  # The program under test is heron-bench, beside heron-search.
  bench=$(dirname "$search")/heron-bench
  B="--suite $src/configs/suites/cpu-gemm512.json --target replay
     --replay $data --strategies random,genetic --seeds 1-3 --trials 20"
  # shellcheck disable=SC2086
  "$bench" $B --out one --quiet >one.out 2>one.err || fail "one process: $?"
  # shellcheck disable=SC2086
  "$mpirun" -n 3 "$bench" $B --out mpi >mpi.out 2>mpi.err ||
    fail "the job exited with $?"
  [ "$(grep -c '^\[[1-6]/6\] GEMM512 .* seed [1-3]: best' mpi.err)" -eq 6 ] ||
    fail "not one progress line per run"
  [ "$(grep -c 'heron-bench: report of 6 runs' mpi.err)" -eq 1 ] ||
    fail "not one report"
  cut -d, -f1-8,10 one/runs.csv >one.csv
  cut -d, -f1-8,10 mpi/runs.csv >mpi.csv
  cmp -s one.csv mpi.csv || fail "the job's runs.csv differs from one process's"
  ;;
mismatched_hardware_is_refused)
  export HERON_MPI_TEST_HW_RANK=2 HERON_MPI_TEST_HW="Another CPU"
  st=0
  "$mpirun" -x HERON_MPI_TEST_HW_RANK -x HERON_MPI_TEST_HW -n 3 "$search" \
    --op gemm --shape 64,64,64 --trials 4 --log mixed.jsonl >mixed.out \
    2>mixed.err || st=$?
  [ "$st" -ne 0 ] || fail "mixed hardware ran"
  grep -q "rank 2's hardware differs from rank 0's: rank 0 is .*rank 2 is .*Another CPU.*--allow-mixed" mixed.err ||
    fail "the refusal does not name the ranks and the difference"
  [ ! -e mixed.jsonl ] || fail "a refused job wrote its log"
  "$mpirun" -x HERON_MPI_TEST_HW_RANK -x HERON_MPI_TEST_HW -n 3 "$search" \
    --op gemm --shape 64,64,64 --trials 4 --allow-mixed --log ok.jsonl \
    >ok.out 2>ok.err || fail "--allow-mixed exited with $?"
  grep -q 'warning: rank 2 differs from rank 0 (--allow-mixed)' ok.err ||
    fail "no warning under --allow-mixed"
  [ "$(grep -c '"status":"ok"' ok.jsonl)" -eq 4 ] || fail "not 4 ok trials"
  ;;
*)
  fail "unknown behaviour"
  ;;
esac
