#!/bin/sh
# bench_tool.sh BEHAVIOUR HERON_BENCH [bench_suite] - tests of heron-bench, each in a
# scratch folder removed at exit.  check_bench.py (next to this script)
# recomputes the outputs from the logs.
#
#   compares_three_strategies_and_rebuilds_the_same_report: random, genetic
#     and becbo on the GEMM task of suite.json, 2 seeds, 12 trials: exit 0,
#     a progress line per run, runs.csv / summary.md / plots agree with the
#     logs; --report-only rewrites the same runs.csv and summary.md; a second
#     invocation skips every complete run; a truncated log is resumed to its
#     budget; --export-t4 of a log validates.
#   compares_three_strategies_on_the_shipped_replay_dataset: random,
#     genetic+xgb and becbo on configs/suites/cpu-gemm512.json, target
#     replay on configs/datasets/cpu-gemm512-fp32.jsonl.gz, 2 seeds, 40
#     trials, in seconds: exit 0, the outputs agree with the logs, every
#     answer is the dataset's record or marked simulated, a second run gives
#     the same logs, and --export-t4 of a replay log validates.
#   compares_strategies_on_the_gpu_dataset_each_task_its_own_log: random
#     and genetic+xgb on configs/suites/tensorcore.json, target replay, with
#     every log of configs/datasets/cuda-h200 (measured on an H200) given
#     at once: each task replays the log of its own op and shape, exit 0,
#     one progress line per run, outputs agree with the logs; a task no log
#     records is a usage error (2) naming it.
#   summarises_recorded_logs_without_gnuplot: --report-only on the fixture
#     logs in data/logs with gnuplot off PATH: exit 0, says plots are
#     skipped, writes none, and the summary holds the hand-computed rows.
#   exports_every_status_to_t4: --export-t4 of each fixture log (every
#     status occurs) validates against the T4 schema's required keys.
#   rejects_usage_errors_with_status_2: unknown strategy, bad seed lists,
#     missing --out, unknown flag, model count mismatch, --export-t4 without
#     --t4-out, a --param / --model-param for no plugin of the comparison:
#     each exits 2 naming the flag, and makes no output folder.  A --param
#     reaches its strategy's runs only (a bad key fails those, exit 1).
#     Names that would go into file names against the rule (a task
#     "../../escape", a plugin file "a+b.so") and an empty --out are
#     refused the same way.
#   refuses_unknown_suite_keys_naming_file_task_and_key: a task's "dtype",
#     a misspelt top-level key, a misspelt task key in a task without a
#     name, a task's "target": each exits 2 naming the file, the task and
#     the key (and that dtype and target belong to the whole suite), making
#     no output folder; every shipped configs/suites/*.json still loads.
#     Registered twice: for heron-bench, and for bench/bench_suite (a third
#     argument "bench_suite") where that is built.
#   stops_on_sigint_with_a_report_and_status_130: heron-bench in the
#     background on one task, one strategy, two seeds; SIGINT once the first
#     run's log has lines: the run ends in order (its log a valid partial
#     one), no second run starts, runs.csv / summary.md / plots cover the
#     log there is, the last line says how to resume, exit status 130.
#   resumes_an_interrupted_comparison_to_the_end: the same, stopped by
#     SIGTERM (exit 143); the same command again resumes the partial log,
#     runs the second seed and exits 0 with both logs at their budget.
set -eu
behaviour=$1 bench=$2
here=$(cd "$(dirname "$0")" && pwd)
check="python3 $here/check_bench.py"
W=$(mktemp -d "${TMPDIR:-/tmp}/heron-bench-tool.XXXXXX")
pid=
# A heron-bench left in the background by a failed check is ended too.
cleanup() {
  [ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null || :
  rm -rf "$W"
}
trap cleanup EXIT
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

# Fast measuring of tiny kernels; a generous timeout, as a loaded machine
# must not fail a kernel.
RUN="--suite $here/suite.json --tasks GEMM --strategies random,genetic,becbo
     --seeds 1,2 --trials 12 --batch 6 --number 1 --repeat 1
     --min-repeat-ms 1 --timeout 20 --build-jobs 2"

# One task, one strategy, two seeds, in rounds of 2: a signal lands well
# before the first run's 12 trials are done.
STOP="--suite $here/suite.json --tasks GEMM --strategies random --seeds 1,2
      --trials 12 --batch 2 --number 1 --repeat 1 --min-repeat-ms 1
      --timeout 20 --build-jobs 2"

# Starts heron-bench $STOP --out $W/out in the background (pid in $pid) and
# sends signal $1 once the first run's log has a line; the exit status
# goes into $status.
interrupt() {
  # shellcheck disable=SC2086
  "$bench" $STOP --out "$W/out" >"$W/int.out" 2>"$W/int.err" &
  pid=$!
  log1="$W/out/logs/GEMM__random__s1.jsonl"
  tries=0
  until [ -s "$log1" ]; do
    kill -0 "$pid" 2>/dev/null || fail "heron-bench ended before the signal"
    tries=$((tries + 1))
    [ "$tries" -lt 600 ] || fail "no log line in 60 s"
    sleep 0.1
  done
  kill "-$1" "$pid"
  status=0
  wait "$pid" || status=$?
  pid=
}

# After interrupt: the stopped run's log is a partial one, valid JSON
# Lines; no other run started; the report covers that log.
check_interrupted() { # check_interrupted SIGNAL
  n=$(wc -l <"$log1")
  if [ "$n" -lt 1 ] || [ "$n" -ge 12 ]; then
    fail "the stopped run's log has $n lines, want 1 to 11 (stopped early)"
  fi
  [ ! -e "$W/out/logs/GEMM__random__s2.jsonl" ] ||
    fail "a run started after the signal"
  $check jsonl "$W/out" || fail "a log is not valid JSON Lines"
  $check report "$W/out" 0 || fail "the report disagrees with the logs"
  grep -q '^| random | 1 |' "$W/out/summary.md" ||
    fail "summary.md does not list the stopped run"
  grep -q "GEMM random seed 1: .*stopped by $1, its log is kept" \
    "$W/int.err" || fail "no line saying the run was stopped"
  grep -q "the comparison was interrupted by $1 with 0 of 2 runs complete" \
    "$W/int.err" || fail "no line saying the comparison was interrupted"
  grep -q "Run the same command again to resume it" "$W/int.err" ||
    fail "no word on how to resume"
}

case $behaviour in
stops_on_sigint_with_a_report_and_status_130)
  interrupt INT
  [ "$status" -eq 130 ] || fail "SIGINT: exit status $status, want 130"
  check_interrupted SIGINT
  ;;
resumes_an_interrupted_comparison_to_the_end)
  interrupt TERM
  [ "$status" -eq 143 ] || fail "SIGTERM: exit status $status, want 143"
  check_interrupted SIGTERM
  have=$(wc -l <"$log1")
  # shellcheck disable=SC2086
  "$bench" $STOP --out "$W/out" >"$W/resume.out" 2>"$W/resume.err" ||
    fail "the resumed comparison exited with $?"
  grep -q "GEMM random seed 1: best .*, 12 trials ($have resumed)" \
    "$W/resume.err" || fail "the stopped run was not resumed from its log"
  grep -q "GEMM random seed 2: best .*, 12 trials$" "$W/resume.err" ||
    fail "the second run did not run"
  [ "$(wc -l <"$log1")" -eq 12 ] || fail "the resumed log has not 12 lines"
  $check jsonl "$W/out" || fail "a log is not valid JSON Lines"
  $check report "$W/out" 12 || fail "the report disagrees with the logs"
  ! grep -q "fewer trials" "$W/out/summary.md" ||
    fail "summary.md still names a short run"
  ;;
compares_three_strategies_and_rebuilds_the_same_report)
  # shellcheck disable=SC2086
  "$bench" $RUN --out "$W/out" >"$W/run1.out" 2>"$W/run1.err" ||
    fail "first run exited with $?"
  [ "$(grep -c '^\[[1-6]/6\] GEMM .* seed [12]: best .* GFLOP/s at trial' \
    "$W/run1.err")" -eq 6 ] || fail "not one progress line per run"
  [ "$(ls "$W/out/logs/"*.jsonl | wc -l)" -eq 6 ] || fail "not 6 logs"
  $check report "$W/out" 12 || fail "outputs disagree with the logs"
  cp "$W/out/summary.md" "$W/summary1.md"
  cp "$W/out/runs.csv" "$W/runs1.csv"
  rm "$W/out/summary.md" "$W/out/runs.csv" "$W/out/plots/"*.svg
  "$bench" --out "$W/out" --report-only >"$W/ro.out" 2>"$W/ro.err" ||
    fail "--report-only exited with $?"
  cmp -s "$W/summary1.md" "$W/out/summary.md" ||
    fail "--report-only wrote another summary"
  cmp -s "$W/runs1.csv" "$W/out/runs.csv" ||
    fail "--report-only wrote another runs.csv"
  $check report "$W/out" 12 || fail "--report-only outputs disagree"
  # shellcheck disable=SC2086
  "$bench" $RUN --out "$W/out" >"$W/run2.out" 2>"$W/run2.err" ||
    fail "second run exited with $?"
  [ "$(grep -c 'complete (12 trials .*), skipped' "$W/run2.err")" -eq 6 ] ||
    fail "second run did not skip the 6 complete runs"
  cmp -s "$W/summary1.md" "$W/out/summary.md" ||
    fail "second run changed the summary"
  # A killed run leaves a partial log: it is resumed, not restarted.
  log="$W/out/logs/GEMM__genetic__s2.jsonl"
  head -n 6 "$log" >"$W/partial" && mv "$W/partial" "$log"
  # shellcheck disable=SC2086
  "$bench" $RUN --out "$W/out" >"$W/run3.out" 2>"$W/run3.err" ||
    fail "third run exited with $?"
  grep -q 'GEMM genetic seed 2: best .*, 12 trials (6 resumed)' \
    "$W/run3.err" || fail "the partial log was not resumed"
  [ "$(grep -c 'skipped' "$W/run3.err")" -eq 5 ] ||
    fail "third run did not skip the other 5 runs"
  [ "$(wc -l <"$log")" -eq 12 ] || fail "resumed log has not 12 lines"
  $check report "$W/out" 12 || fail "outputs after resuming disagree"
  "$bench" --export-t4 "$log" --t4-out "$W/t4.json" 2>"$W/t4.err" ||
    fail "--export-t4 exited with $?"
  $check t4 "$W/t4.json" "$log" || fail "T4 export invalid"
  ;;
compares_three_strategies_on_the_shipped_replay_dataset)
  src=$(cd "$here/../.." && pwd)
  data=$src/configs/datasets/cpu-gemm512-fp32.jsonl.gz
  R="--suite $src/configs/suites/cpu-gemm512.json --target replay
     --replay $data --strategies random,genetic,becbo --models none,xgb,none
     --seeds 1,2 --trials 40"
  # shellcheck disable=SC2086
  "$bench" $R --out "$W/a" >"$W/a.out" 2>"$W/a.err" ||
    fail "replay run exited with $?"
  [ "$(grep -c '^\[[1-6]/6\] GEMM512 .* seed [12]: best .* GFLOP/s' \
    "$W/a.err")" -eq 6 ] || fail "not one progress line per run"
  $check report "$W/a" 40 || fail "outputs disagree with the logs"
  $check replay "$W/a" "$data" || fail "answers disagree with the dataset"
  # shellcheck disable=SC2086
  "$bench" $R --out "$W/b" >"$W/b.out" 2>"$W/b.err" ||
    fail "second replay run exited with $?"
  $check same "$W/a" "$W/b" || fail "two runs with the same seeds differ"
  log="$W/a/logs/GEMM512__becbo__s1.jsonl"
  "$bench" --export-t4 "$log" --t4-out "$W/t4.json" 2>"$W/t4.err" ||
    fail "--export-t4 exited with $?"
  $check t4 "$W/t4.json" "$log" || fail "T4 export invalid"
  ;;
compares_strategies_on_the_gpu_dataset_each_task_its_own_log)
  src=$(cd "$here/../.." && pwd)
  R="--suite $src/configs/suites/tensorcore.json --target replay"
  for f in "$src"/configs/datasets/cuda-h200/*.jsonl.gz; do
    R="$R --replay $f"
  done
  # shellcheck disable=SC2086
  "$bench" $R --strategies random,genetic --models none,xgb --seeds 1 \
    --trials 20 --out "$W/a" >"$W/a.out" 2>"$W/a.err" ||
    fail "replay run exited with $?"
  [ "$(grep -c '^\[[0-9]*/18\] [A-Z0-9]* .* seed 1: best .* GFLOP/s' \
    "$W/a.err")" -eq 18 ] || fail "not one progress line per run"
  $check report "$W/a" 20 || fail "outputs disagree with the logs"
  # Two logs, neither of BMM: refused before anything runs.
  data=$src/configs/datasets/cuda-h200
  st=0
  "$bench" --suite "$src/configs/suites/tensorcore.json" --target replay \
    --tasks GEMM,BMM --replay "$data/GEMM.jsonl.gz" \
    --replay "$data/GEMV.jsonl.gz" --strategies random --seeds 1 \
    --trials 5 --out "$W/b" >"$W/b.out" 2>"$W/b.err" || st=$?
  [ "$st" -eq 2 ] || fail "a task without its log exited with $st, want 2"
  grep -q 'replay: none of the 2 logs records task BMM' "$W/b.err" ||
    fail "the refusal does not name the task"
  [ ! -e "$W/b" ] || fail "the refused comparison made its --out"
  ;;
summarises_recorded_logs_without_gnuplot)
  mkdir -p "$W/out"
  cp -r "$here/data/logs" "$W/out/logs"
  # A log whose name breaks the naming rule (as an older heron-bench
  # wrote for a task "../../escape") is named as left out, not skipped
  # without a word.
  : >"$W/out/logs/.._.._escape__random__s1.jsonl"
  PATH=/nonexistent "$bench" --out "$W/out" --report-only \
    >"$W/ro.out" 2>"$W/ro.err" || fail "--report-only exited with $?"
  grep -q "logs/.._.._escape__random__s1.jsonl' is left out of the report" \
    "$W/ro.err" || fail "no word about the log left out"
  rm "$W/out/logs/.._.._escape__random__s1.jsonl"
  grep -q "gnuplot is not on PATH; plots skipped" "$W/ro.err" ||
    fail "no word about the missing gnuplot"
  [ ! -e "$W/out/plots" ] || fail "plots folder made without gnuplot"
  $check report "$W/out" 4 --no-plots || fail "outputs disagree with logs"
  # Worked out by hand from data/logs: best any 100, so 95 is the mark.
  grep -qF '| genetic+xgb | 2 | 98.000 | 96.000 | 100.000 | 2.828 | 2.5 | 0.95 | 2/2 | 37.5% |' \
    "$W/out/summary.md" || fail "genetic+xgb row differs from the hand one"
  grep -qF '| random | 2 | 30.000 | 20.000 | 40.000 | 14.142 | - | - | 0/2 | 25.0% |' \
    "$W/out/summary.md" || fail "random row differs from the hand one"
  grep -q '^GEMM,genetic,xgb,1,3,ok,100,100,1.5' "$W/out/runs.csv" ||
    fail "runs.csv splits no model off the label"
  ;;
exports_every_status_to_t4)
  for log in "$here"/data/logs/*.jsonl; do
    "$bench" --export-t4 "$log" --t4-out "$W/t4.json" 2>"$W/t4.err" ||
      fail "--export-t4 $log exited with $?"
    $check t4 "$W/t4.json" "$log" || fail "T4 export of $log invalid"
  done
  printf '{"trial":1,"status":"ok"}\n' >"$W/bad.jsonl"
  status=0
  "$bench" --export-t4 "$W/bad.jsonl" --t4-out "$W/bad.json" \
    2>"$W/bad.err" || status=$?
  [ "$status" -eq 1 ] || fail "a log without config: status $status, want 1"
  grep -q 'bad.jsonl line 1: no "config" object' "$W/bad.err" ||
    fail "the message does not name the line and the missing key"
  ;;
rejects_usage_errors_with_status_2)
  S="--suite $here/suite.json --trials 2"
  expect2() { # expect2 WORD ARGS...: exit 2 and WORD in the message
    word=$1
    shift
    status=0
    "$bench" "$@" >"$W/u.out" 2>"$W/u.err" || status=$?
    [ "$status" -eq 2 ] || fail "$*: exit status $status, want 2"
    grep -q -- "$word" "$W/u.err" || fail "$*: message lacks '$word'"
    [ ! -e "$W/out" ] || fail "$*: made the output folder"
  }
  # shellcheck disable=SC2086
  {
    expect2 "no strategy plugin 'no_such_strategy'" $S --out "$W/out" \
      --strategies random,no_such_strategy
    expect2 "--seeds: '1,,2' has an empty item" $S --out "$W/out" \
      --strategies random --seeds 1,,2
    expect2 "--seeds: 'x' is not" $S --out "$W/out" --strategies random \
      --seeds 1,x
    expect2 "--seeds: seed 1 is listed twice" $S --out "$W/out" \
      --strategies random --seeds 1,1
    expect2 "--out is required" $S --strategies random
    expect2 "--out: an empty folder name" $S --strategies random --out ''
    expect2 "unknown option '--no-such-flag'" $S --out "$W/out" \
      --strategies random --no-such-flag 1
    expect2 "--models: 'xgb' names 1 models for 2 strategies" $S \
      --out "$W/out" --strategies random,genetic --models xgb
    expect2 "--tasks: no task 'NOPE'" $S --out "$W/out" --strategies random \
      --tasks NOPE
    expect2 "--export-t4 LOG and --t4-out FILE go together" --export-t4 x.jsonl
    expect2 "--trials: '0' is not a positive integer" $S --out "$W/out" \
      --strategies random --trials 0
    expect2 "--param: 'pop=3' is not NAME:KEY=VALUE" $S --out "$W/out" \
      --strategies random,genetic --param pop=3
    expect2 "--param: 'becbo' is not one of the --strategies" $S \
      --out "$W/out" --strategies random,genetic --param becbo:x=1
    expect2 "--model-param: 'linear' is not a cost model" $S \
      --out "$W/out" --strategies random,genetic --models none,xgb \
      --model-param linear:ridge=1
  }
  # Names that go into file names: a task escaping --out, a hidden one, a
  # "__" that would split the log name, a plugin file with a '+'.
  for name in ../../escape .hidden a__b 'a/b' ''; do
    printf '{"target": "cpu", "tasks": [{"name": "GEMM", "op": "gemm",
  "shape": [32, 32, 32]}, {"name": "%s", "op": "gemv",
  "shape": [64, 64]}]}\n' "$name" >"$W/names.json"
    word="tasks\[1\]: task name '$name' cannot go into file names"
    [ -n "$name" ] || word='tasks\[1\]: "name" and "op" (or "t1" and "t4") are required'
    expect2 "$word" --suite "$W/names.json" --out "$W/out" \
      --strategies random --trials 2
    [ -z "$name" ] || grep -q "1 to 64 letters, digits, '.', '_' or '-'" \
      "$W/u.err" || fail "task '$name': the message does not give the rule"
  done
  printf '{"tasks": [{"name": "A", "op": "gemm", "shape": [8, 8, 8]},
  {"name": "a", "op": "gemm", "shape": [8, 8, 8]}]}\n' >"$W/case.json"
  expect2 "tasks\[1\]: task name 'a' is used before, by tasks\[0\] ('A')" \
    --suite "$W/case.json" --out "$W/out" --strategies random --trials 2
  : >"$W/a+b.so"
  # shellcheck disable=SC2086
  {
    expect2 "--strategies: '$W/a+b.so': the plugin's name 'a+b'" $S \
      --out "$W/out" --strategies "random,$W/a+b.so"
    expect2 "--model: '$W/a+b.so': the plugin's name 'a+b'" $S \
      --out "$W/out" --strategies random --model "$W/a+b.so"
  }
  # A parameter reaches the runs of its strategy, and only those: the
  # random runs finish, genetic's fail naming the key, the exit status is 1.
  status=0
  "$bench" $S --tasks GEMV --out "$W/p" --strategies random,genetic \
    --seeds 1 --batch 2 --number 1 --repeat 1 --min-repeat-ms 1 \
    --param genetic:no_such_key=1 --param random:retries=50 \
    >"$W/p.out" 2>"$W/p.err" || status=$?
  [ "$status" -eq 1 ] || fail "a run with a bad --param: status $status, want 1"
  grep -q "GEMV random seed 1: best" "$W/p.err" ||
    fail "the random run did not finish with its good --param"
  grep -q "GEMV genetic seed 1: FAILED: .*unknown parameter 'no_such_key' for strategy genetic" \
    "$W/p.err" || fail "genetic's run does not name its bad parameter"
  "$bench" --help >"$W/help.out" || fail "--help exited with $?"
  for flag in suite strategies models model param model-param trials seeds \
    out tasks target hw batch timeout replay report-only export-t4 t4-out \
    verbose; do
    grep -q -- "--$flag" "$W/help.out" || fail "--help does not list --$flag"
  done
  ;;
refuses_unknown_suite_keys_naming_file_task_and_key)
  # $bench is heron-bench, or bench_suite with "bench_suite" as $3.  A key
  # the format lacks would silently fall back to a default (a task's
  # "dtype": "int8" running the suite's fp32): each is a usage error (2)
  # naming the file, the task and the key, before anything runs.
  tool=${3:-heron-bench}
  src=$(cd "$here/../.." && pwd)
  refuse() { # refuse FILE REGEX
    status=0
    if [ "$tool" = bench_suite ]; then
      "$bench" --suite "$1" --out "$W/out" --trials 2 >"$W/k.out" \
        2>"$W/k.err" || status=$?
    else
      "$bench" --suite "$1" --out "$W/out" --strategies random --trials 2 \
        >"$W/k.out" 2>"$W/k.err" || status=$?
    fi
    [ "$status" -eq 2 ] || fail "$1: exit status $status, want 2"
    grep -q -- "$2" "$W/k.err" || fail "$1: no message matching '$2'"
    [ ! -e "$W/out" ] || fail "$1: a refused suite made its output folder"
  }
  printf '{"dtype": "fp32", "tasks": [{"name": "GEMM", "op": "gemm",
  "shape": [16, 16, 16], "dtype": "int8"}]}\n' >"$W/dtype.json"
  refuse "$W/dtype.json" "--suite $W/dtype.json: task GEMM: unknown key \"dtype\": \"dtype\" belongs to the whole suite"
  printf '{"dtpye": "int8", "tasks": [{"name": "GEMM", "op": "gemm",
  "shape": [16, 16, 16]}]}\n' >"$W/top.json"
  refuse "$W/top.json" "--suite $W/top.json: unknown key \"dtpye\" (a suite has \"name\", \"description\", \"dtype\", \"target\" and \"tasks\")"
  printf '{"tasks": [{"name": "GEMM", "op": "gemm", "shape": [16, 16, 16]},
  {"op": "gemv", "shape": [8, 8], "shpae": [8]}]}\n' >"$W/task.json"
  refuse "$W/task.json" "--suite $W/task.json: task tasks\[1\]: unknown key \"shpae\""
  printf '{"tasks": [{"name": "GEMM", "op": "gemm", "shape": [16, 16, 16],
  "target": "amx"}]}\n' >"$W/target.json"
  refuse "$W/target.json" "task GEMM: unknown key \"target\": \"target\" belongs to the whole suite"
  # Every shipped suite still loads: asked for a task it lacks, the tool
  # lists the suite's tasks (every task read) and runs nothing.  bench_suite
  # compares ops with libraries: the T1 suite and the fp16 cuda ones are
  # not its.
  for f in "$src"/configs/suites/*.json "$here/suite.json"; do
    case $tool:$(basename "$f") in
    bench_suite:benchmark-hub.json | bench_suite:tensorcore*.json) continue ;;
    esac
    status=0
    if [ "$tool" = bench_suite ]; then
      "$bench" --suite "$f" --out "$W/out" --tasks NO_SUCH_TASK \
        >"$W/k.out" 2>"$W/k.err" || status=$?
    else
      "$bench" --suite "$f" --out "$W/out" --strategies random \
        --tasks NO_SUCH_TASK >"$W/k.out" 2>"$W/k.err" || status=$?
    fi
    grep -q "no task 'NO_SUCH_TASK' in $f (it has " "$W/k.err" ||
      fail "$f does not load: $(cat "$W/k.err")"
  done
  ;;
*)
  echo "bench_tool.sh: unknown behaviour '$behaviour'" >&2
  exit 2
  ;;
esac
