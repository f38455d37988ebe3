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
#     (SIGKILL, the HERON_MPI_TEST_DIE_* hook) at its 4th candidate (11th
#     under the plain mpirun).  Under `mpirun --enable-recovery` with --rank-timeout 600 the job goes
#     on and ends long before the timeout (under a fifth of it: rank 0 sees
#     the process gone, it does not wait out the timeout): 40 records, the
#     lost candidate recorded as failed by the environment, every other ok,
#     the loss reported as the rank gone; rank 0 exits 1 (its own status,
#     caught by a wrapper: OpenMPI 4.1's mpirun exits 0 under
#     --enable-recovery whatever its processes return, so mpirun's status is
#     required to be 1 only where a probe shows it passes a process's status
#     on).  --resume on 3 ranks measures the lost one again and nothing
#     else.  Under a plain mpirun, which ends the whole job: rank 0 logged
#     each result as it came, so the log holds the round in flight's results
#     too (more than the two whole rounds before it; answers take 200 ms, so
#     both ranks answer about equally), and --resume finishes the 40 trials
#     without measuring any of them again.
#   waiting_ranks_sleep_instead_of_spinning: 16 candidates, one per round
#     (batch 1), each answered in 500 ms (--replay-delay) by one of two
#     measuring ranks, so one of them waits for work the whole time while
#     rank 0 waits for the answer: the job's processes together use less
#     CPU time than a third of its wall time (a rank that polled MPI
#     without sleeping would use about all of it alone).
#   bench_runs_spread_over_ranks_and_report_once: heron-bench (random and
#     genetic, 3 seeds, on the replay dataset) as a 3-rank job: one progress
#     line per run, one report, and runs.csv's trials and results (all but
#     elapsed time) equal one process's.
#   mismatched_hardware_is_refused: rank 2 reports another hardware
#     description (the HERON_MPI_TEST_HW_* hook): exit 2 naming both ranks
#     and --allow-mixed, nothing written; with --allow-mixed the job runs
#     and warns.
#   different_cpus_are_refused_by_search: rank 0 and rank 1 detect two
#     really different CPUs: rank 0 runs with HERON_CPU_ISA capping the
#     library's detection (avx2, or sse where avx2 is this CPU's level
#     already), rank 1 uncapped (HERON_CPU_ISA=native), through mpirun's
#     MPMD syntax.  heron-search refuses (exit 2, nothing written) naming
#     both ranks' CPUs and their levels; the same with `--hw cpu-avx2` on
#     both, whose description is one and the same file (the check compares
#     the machines, not the description's name); with --allow-mixed and
#     --hw cpu-avx2 the job runs its 4 trials and warns naming both.
#   different_cpus_are_refused_by_bench: the same two ranks running
#     heron-bench on tests/bench_tool/suite.json: refused (exit 2) naming
#     both CPUs, before any run (no log); with --allow-mixed both runs
#     finish (exit 0) and the warning names both.
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
  # Does this mpirun pass a process's exit status on under
  # --enable-recovery?  (OpenMPI 4.1's exits 0 whatever they return.)
  passes_status=0
  "$mpirun" --enable-recovery -n 1 sh -c 'exit 3' >probe.out 2>&1 ||
    passes_status=1
  # At its 4th candidate: with instant answers the two ranks share the 40
  # unevenly on a busy machine, and rank 2 must get that far.
  export HERON_MPI_TEST_DIE_RANK=2 HERON_MPI_TEST_DIE_AFTER=3
  timeout=600
  began=$(date +%s)
  st=0
  # The job is ended at a fifth of the timeout if it is still running.
  # shellcheck disable=SC2086,SC2016
  timeout $((timeout / 5)) "$mpirun" --enable-recovery \
    -x HERON_MPI_TEST_DIE_RANK \
    -x HERON_MPI_TEST_DIE_AFTER \
    -n 1 sh -c '"$0" "$@"; echo $? >rank0.status' "$search" $replay \
    --trials 40 --batch 8 --rank-timeout $timeout --log rec.jsonl : \
    -n 2 "$search" $replay --trials 40 --batch 8 --rank-timeout $timeout \
    --log rec.jsonl >rec.out 2>rec.err || st=$?
  took=$(($(date +%s) - began))
  [ "$took" -lt $((timeout / 5)) ] && [ "$st" -ne 124 ] ||
    fail "the job took $took s with --rank-timeout $timeout: the lost rank was not seen gone"
  grep -q 'rank 2 is gone (its process [0-9]* on .* ended after' rec.err ||
    fail "rank 0 did not report rank 2 gone"
  grep -q 'lost with ranks that are gone; the log is whole' rec.err ||
    fail "rank 0 did not report the lost candidate at the end"
  [ "$(cat rank0.status 2>/dev/null)" = 1 ] ||
    fail "rank 0 exited with '$(cat rank0.status 2>/dev/null)', want 1"
  if [ "$passes_status" -eq 1 ]; then
    [ "$st" -eq 1 ] || fail "mpirun exited with $st, want 1"
  else
    echo "note: this mpirun exits 0 under --enable-recovery whatever its" \
      "processes return (mpirun exited $st); rank 0's own status was 1"
  fi
  python3 -c '
import json, sys
for l in open(sys.argv[1]):
    json.loads(l)
' rec.jsonl || fail "the log is not whole"
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
  lost=$(grep -c '"cause":"environment"' plain.jsonl)
  unset HERON_MPI_TEST_DIE_RANK HERON_MPI_TEST_DIE_AFTER
  # shellcheck disable=SC2086
  "$mpirun" -n 3 "$search" $replay --trials 40 --batch 8 \
    --resume plain.jsonl >pres.out 2>pres.err || fail "resume: $?"
  # Rank 0 may have seen rank 2 gone, and logged its candidate as failed
  # by the environment, before mpirun ended the job: that one is measured
  # again (a record more).
  [ "$(wc -l <plain.jsonl)" -eq $((40 + lost)) ] ||
    fail "the resume did not finish ($(wc -l <plain.jsonl) records, want 40 + $lost)"
  grep -q "resumed $((n - lost))\b" pres.out || fail "the resume re-measured records"
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
waiting_ranks_sleep_instead_of_spinning)
  # The CPU time of every process of the job (mpirun reaps its ranks, so
  # RUSAGE_CHILDREN counts them) against its wall time.
  # shellcheck disable=SC2086
  python3 - "$mpirun" "$search" $replay <<'PY' || fail "see above"
import resource, subprocess, sys, time
cmd = [sys.argv[1], "-n", "3", sys.argv[2]] + sys.argv[3:] + [
    "--trials", "16", "--batch", "1", "--replay-delay", "500",
    "--log", "slow.jsonl"]
began = time.monotonic()
with open("slow.err", "w") as err:
    rc = subprocess.call(cmd, stdout=subprocess.DEVNULL, stderr=err)
wall = time.monotonic() - began
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = ru.ru_utime + ru.ru_stime
print(f"job: exit {rc}, {wall:.1f} s wall, {cpu:.1f} s CPU")
if rc != 0:
    sys.exit("the job failed")
if wall < 8:
    sys.exit(f"{wall:.1f} s: the answers did not take 500 ms each")
if cpu >= wall / 3:
    sys.exit(f"{cpu:.1f} s of CPU in {wall:.1f} s: a waiting rank spins")
PY
  ;;
different_cpus_are_refused_by_search | different_cpus_are_refused_by_bench)
  # Two CPUs as the library detects them: rank 0 capped by HERON_CPU_ISA,
  # rank 1 not (HERON_CPU_ISA=native, whatever the environment says).  The
  # cap is avx2 where it lowers this CPU's level, else sse.
  grep -qw avx2 /proc/cpuinfo || {
    echo "SKIP: --hw cpu-avx2 needs an AVX2 CPU"
    exit 77
  }
  space=$(dirname "$search")/heron-space
  cap=avx2
  HERON_CPU_ISA=avx2 "$space" --op gemm --shape 8,8,8 --describe |
    grep -q '^hardware: .*avx2 by HERON_CPU_ISA' || cap=sse
  # Rank 1's level in the words of the refusal.
  mine=$(HERON_CPU_ISA=native "$space" --op gemm --shape 8,8,8 --describe |
    sed -n 's/^hardware: this machine (.*, \([a-z0-9]*\))$/\1/p')
  [ -n "$mine" ] || fail "heron-space does not describe this machine"
  two() { # two OUT ERR ARGS...: the job, rank 0 capped, rank 1 native
    out=$1 err=$2
    shift 2
    st=0
    "$mpirun" -n 1 env HERON_CPU_ISA=$cap "$prog" "$@" : \
      -n 1 env HERON_CPU_ISA=native "$prog" "$@" >"$out" 2>"$err" || st=$?
  }
  refused() { # refused ERR: the refusal names both ranks' CPUs
    grep -q "rank 1's CPU differs from rank 0's: rank 0 is [^:]*: .*, $cap by HERON_CPU_ISA; rank 1 is [^:]*: .*, $mine\.  .*--allow-mixed" "$1" ||
      fail "the refusal in $1 does not name both CPUs ($cap by HERON_CPU_ISA and $mine)"
  }
  warned() {
    grep -q "warning: rank 1 differs from rank 0 (--allow-mixed): rank 0's CPU is [^:]*: .*, $cap by HERON_CPU_ISA; rank 1's is [^:]*: .*, $mine\$" "$1" ||
      fail "no warning in $1 naming both CPUs"
  }
  if [ "$behaviour" = different_cpus_are_refused_by_search ]; then
    prog=$search
    T="--op gemm --shape 64,64,64 --trials 4 --batch 2 --number 1 --repeat 1
       --min-repeat-ms 1"
    # shellcheck disable=SC2086
    two a.out a.err $T --log a.jsonl
    [ "$st" -eq 2 ] || fail "different CPUs: exit $st, want 2"
    refused a.err
    [ ! -e a.jsonl ] || fail "a refused job wrote its log"
    # One description for both (its name the same on every rank): the
    # machines still differ.
    # shellcheck disable=SC2086
    two b.out b.err $T --hw cpu-avx2 --log b.jsonl
    [ "$st" -eq 2 ] || fail "different CPUs under --hw cpu-avx2: exit $st, want 2"
    refused b.err
    [ ! -e b.jsonl ] || fail "a refused job wrote its log"
    # shellcheck disable=SC2086
    two c.out c.err $T --hw cpu-avx2 --allow-mixed --log c.jsonl
    [ "$st" -eq 0 ] || fail "--allow-mixed: exit $st"
    warned c.err
    [ "$(grep -c '"status":"ok"' c.jsonl)" -eq 4 ] || fail "not 4 ok trials"
  else
    prog=$(dirname "$search")/heron-bench
    B="--suite $src/tests/bench_tool/suite.json --tasks GEMM
       --strategies random --seeds 1,2 --trials 4 --batch 2 --number 1
       --repeat 1 --min-repeat-ms 1"
    # shellcheck disable=SC2086
    two a.out a.err $B --out a
    [ "$st" -eq 2 ] || fail "different CPUs: exit $st, want 2"
    refused a.err
    [ -z "$(ls a/logs 2>/dev/null)" ] || fail "a refused job ran"
    # shellcheck disable=SC2086
    two c.out c.err $B --allow-mixed --out c
    [ "$st" -eq 0 ] || fail "--allow-mixed: exit $st"
    warned c.err
    [ "$(grep -c 'GEMM random seed [12]: best' c.err)" -eq 2 ] ||
      fail "not both runs finished"
  fi
  ;;
*)
  fail "unknown behaviour"
  ;;
esac
