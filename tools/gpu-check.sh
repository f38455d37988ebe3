#!/bin/bash
# tools/gpu-check.sh - the checks and measurements of a GPU machine, in one
# unattended command (GPU time is short: everything is prepared on a machine
# without one and run here in one go).
#
# Usage: bash tools/gpu-check.sh OUTDIR
#
# Runs from a build made elsewhere (its folder named by BUILD, its shared
# libraries in .devlibs/ or packed in .devlibs.tar.xz where this machine
# lacks them: tools/gpu-pack.sh prepares them); the paths the build
# recorded (plugins, configs, the fake drivers of the tests) are made to
# point here.  Phases (PHASES, run in this order, default "smoke tests
# tune bench amx cpu"):
#   smoke     tests/bench/gpu_smoke.sh: a short tuning run, every kernel
#             launched, checked and timed;
#   tests     the CUDA test programs of the build that reach the driver
#             (test_cuda, test_tune_cuda), each whole;
#   baseline  the vendor libraries on the suite through PyTorch, when it is
#             there (tools/torch_baseline.py; not in the default list);
#   tune      for every task of each suite of SUITES, heron-bench with
#             STRATEGY (+MODEL), NEW_TRIALS trials more than its log holds:
#             every config built by NVRTC, launched, checked against the
#             reference and timed; a task's log, OUTDIR/<suite>/logs/
#             <task>__<strategy>__s1.jsonl, starts as a copy of
#             SEED_LOGS/<task>.jsonl.gz (an earlier run's log on the same
#             GPU) when that exists and the log does not: the search
#             resumes from it.  Run again to go on;
#   bench     bench_cuda on the best config of every task in the logs of
#             the tune phase and of BENCH_LOGS (files or folders), against
#             cuBLAS / cuDNN, one process per task; tables in
#             OUTDIR/bench-<task>.md and all of them on stdout;
#   amx       on a host with AMX (amx_tile in /proc/cpuinfo): bench_suite
#             over GEMM
#             1024^3 of configs/suites/amx-bf16.json and amx-int8.json
#             (AMX_TRIALS trials, threads 1 and every core) against oneDNN,
#             then the AMX test programs (test_amx_prelude, test_amx_probe
#             and the native tests of test_amx_kernels: real tiles against
#             the emulation) with the time left; skipped, visibly, on a host
#             without AMX;
#   cpu       bench_suite over GEMM 1024^3 of configs/suites/cpu.json (fp32)
#             at CPU_THREADS threads (1,4,<cores>), CPU_TRIALS trials each,
#             against OpenBLAS.
# Every phase is bounded in time and writes its results as it goes; with
# DEADLINE (seconds for the whole script, 0 for none) a phase gets at most
# what is left, and one that would start with less than a minute left is
# skipped (said in the summary).  Environment: BUILD (build), PHASES,
# DEADLINE (0), SUITES (configs/suites/tensorcore.json
# configs/suites/tensorcore-large.json), STRATEGY (genetic), MODEL (xgb),
# NEW_TRIALS (32), SEED_LOGS (configs/datasets/cuda-h200 on an H200, else
# none), TUNE_TIMEOUT (seconds per task, 120), TUNE_ARGS (more heron-bench
# flags), BENCH_LOGS (none), BENCH_TIMEOUT (seconds per task, 90),
# TESTS_TIMEOUT (seconds per program, 120), AMX_TRIALS (48), CPU_TRIALS
# (48), CPU_THREADS (1,4,<cores>), HOST_TIMEOUT (seconds per bench_suite
# run, 180).
#
# Every phase asked for runs even when an earlier one failed; each
# phase's status is appended to OUTDIR/summary.txt as it ends, and at the
# end the summary gives each (ok, FAILED with why, skipped with why); the
# script exits 1 when any phase failed (the smoke test skipping because
# there is no GPU counts as failed here: this is the GPU check), 0 when
# none did, 2 on a usage error.
set -u
out=${1:?usage: gpu-check.sh OUTDIR}
out=$(mkdir -p "$out" && cd "$out" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-build}
phases=${PHASES:-smoke tests tune bench amx cpu}
start=$(date +%s)
deadline=${DEADLINE:-0}
for p in $phases; do
  case $p in smoke|tests|baseline|tune|bench|amx|cpu) ;;
  *) echo "gpu-check.sh: unknown phase '$p' in PHASES (smoke tests baseline tune bench amx cpu)" >&2
     exit 2 ;;
  esac
done
case $deadline in ''|*[!0-9]*)
  echo "gpu-check.sh: DEADLINE must be a whole number of seconds, not '$deadline'" >&2
  exit 2 ;;
esac
# The build records the absolute path of the tree it was made in; rebuild
# that path here as links to this tree, with its build folder.
made_in=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$here/$build/CMakeCache.txt" 2>/dev/null)
if [ -n "$made_in" ] && [ "$made_in" != "$here" ] && [ ! -e "$made_in" ]; then
  mkdir -p "$made_in"
  for e in "$here"/*; do
    [ "$(basename "$e")" = build ] || ln -s "$e" "$made_in/$(basename "$e")"
  done
  ln -s "$here/$build" "$made_in/build"
elif [ "$made_in" = "$here" ] && [ "$build" != build ] && [ ! -e "$here/build" ]; then
  ln -s "$build" "$here/build" # the same path here: build/ names this build
fi
if [ ! -d "$here/.devlibs" ] && [ -f "$here/.devlibs.tar.xz" ]; then
  tar -xJf "$here/.devlibs.tar.xz" -C "$here" || echo "gpu-check.sh: could not unpack .devlibs.tar.xz"
fi
bin=$here/$build/bin
export LD_LIBRARY_PATH="$here/.devlibs:$here/$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# A build folder other than the one libheron was configured in is not where
# its plugins are looked for (only build/ and an installed tree are).
export HERON_PLUGIN_PATH="$here/$build/plugins${HERON_PLUGIN_PATH:+:$HERON_PLUGIN_PATH}"
cd "$here" || exit 1
ncores=$(nproc)

# Each phase's status, for the summary: "<phase>: ok" / "<phase>: FAILED
# (why)" / "<phase>: skipped (why)", one line each, in the order run, also
# appended to OUTDIR/summary.txt at once.
summary=""
failed=0
: >"$out/summary.txt"
status() { # status PHASE ok|FAILED|skipped [WHY]
  line="$1: $2${3:+ ($3)}"
  summary="$summary$line
"
  echo "$line" >>"$out/summary.txt"
  [ "$2" = FAILED ] && failed=1
  echo "-- $line [$(($(date +%s) - start)) s]"
}
# left: seconds left before DEADLINE (a large number without one).
left() {
  if [ "$deadline" -eq 0 ]; then echo 999999
  else echo $((deadline - ($(date +%s) - start)))
  fi
}
# bound N: N, or less when the deadline is nearer (at least 1).
bound() {
  l=$(left)
  b=$1
  [ "$l" -lt "$b" ] && b=$l
  [ "$b" -lt 1 ] && b=1
  echo "$b"
}
# starts PHASE: 0 when the phase may start (a minute or more left).
starts() {
  l=$(left)
  if [ "$l" -lt 60 ]; then
    status "$1" skipped "time budget: $l s of DEADLINE=$deadline left"
    return 1
  fi
  echo "== $1 [$(($(date +%s) - start)) s]"
}
has_phase() { case " $phases " in *" $1 "*) return 0 ;; esac; return 1; }

echo "== machine"
if nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv >"$out/gpu.txt"; then
  cat "$out/gpu.txt"
  status machine ok
else
  status machine FAILED "nvidia-smi exited with $?"
fi
cpu_model=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
isa=$(grep -o -w -E 'avx2|avx512f|avx512_vnni|avx512_bf16|amx_tile|amx_int8|amx_bf16' /proc/cpuinfo | sort -u | tr '\n' ' ')
echo "$ncores cores; $cpu_model; $isa; $(cc --version 2>&1 | head -1)" | tee "$out/host.txt"
if ldd "$bin/heron-search" | grep 'not found'; then
  echo "missing libraries: build on this machine instead"
  status libraries FAILED "heron-search lacks shared libraries"
  printf '== summary\n%s' "$summary"
  exit 1
fi

if has_phase smoke && starts smoke; then
  st=0
  timeout "$(bound 120)" sh tests/bench/gpu_smoke.sh "$bin/heron-search" || st=$?
  case $st in
  0) status smoke ok ;;
  77) status smoke FAILED "skipped: no GPU found (see above)" ;;
  124) status smoke FAILED "timed out" ;;
  *) status smoke FAILED "gpu_smoke.sh exited with $st" ;;
  esac
fi

# run_tests PHASE PROGRAM[:TEST]...: each program of the build whole (or
# its one TEST), bounded; the failures (or absent programs) for the phase's
# status.
run_tests() {
  bad="" ph=$1
  shift
  for t in "$@"; do
    prog=${t%%:*} one=
    [ "$prog" != "$t" ] && one=${t#*:}
    t=$prog${one:+.$one}
    if [ ! -x "$bin/$prog" ]; then bad="$bad $t: not in the build;"; continue; fi
    st=0
    timeout "$(bound "${TESTS_TIMEOUT:-120}")" "$bin/$prog" $one >"$out/$t.txt" 2>&1 || st=$?
    n_ok=$(grep -c '^ok ' "$out/$t.txt")
    n_skip=$(grep -c -i '^skip' "$out/$t.txt")
    echo "$t: exit $st, $n_ok ok, $n_skip skipped"
    grep -i -E '^(skip|fail)' "$out/$t.txt" | head -10
    case $st in
    0 | 77) ;;
    124) bad="$bad $t: timed out;" ;;
    *) bad="$bad $t: exit $st;" ; tail -5 "$out/$t.txt" ;;
    esac
  done
  if [ -z "$bad" ]; then status "$ph" ok; else status "$ph" FAILED "${bad# }"; fi
}

if has_phase tests && starts tests; then
  run_tests tests test_cuda test_tune_cuda
fi

if has_phase baseline && starts baseline; then
  if python3 -c 'import torch' 2>/dev/null; then
    st=0
    timeout "$(bound 120)" python3 tools/torch_baseline.py > "$out/torch_baseline.txt" 2>&1 || st=$?
    cat "$out/torch_baseline.txt"
    if [ "$st" -eq 0 ]; then status baseline ok
    elif [ "$st" -eq 124 ]; then status baseline FAILED "timed out"
    else status baseline FAILED "torch_baseline.py exited with $st"
    fi
  else
    status baseline skipped "no PyTorch for $(command -v python3)"
  fi
fi

# The task names of a suite file, one per line.
suite_tasks() {
  python3 -c 'import json,sys; print("\n".join(t["name"] for t in json.load(open(sys.argv[1]))["tasks"]))' "$1" 2>/dev/null ||
    sed -n 's/.*{"name": *"\([^"]*\)", *"op".*/\1/p' "$1"
}

if has_phase tune && starts tune; then
  strategy=${STRATEGY:-genetic} model=${MODEL:-xgb}
  label=$strategy
  [ "$model" != none ] && label="$strategy+$model"
  seeds=${SEED_LOGS-}
  if [ -z "${SEED_LOGS+x}" ] && grep -q H200 "$out/gpu.txt" 2>/dev/null; then
    seeds=configs/datasets/cuda-h200
  fi
  bad="" ntasks=0
  for suite in ${SUITES:-configs/suites/tensorcore.json configs/suites/tensorcore-large.json}; do
    name=$(basename "$suite" .json)
    mkdir -p "$out/$name/logs"
    for task in $(suite_tasks "$suite"); do
      if [ "$(left)" -lt 60 ]; then
        bad="$bad $name/$task: not run (time budget);"
        continue
      fi
      log="$out/$name/logs/${task}__${label}__s1.jsonl"
      if [ ! -s "$log" ] && [ -n "$seeds" ] && [ -f "$seeds/$task.jsonl.gz" ]; then
        gzip -dc "$seeds/$task.jsonl.gz" >"$log"
      fi
      have=0
      [ -s "$log" ] && have=$(grep -c . "$log")
      trials=$((have + ${NEW_TRIALS:-32}))
      echo "-- $name/$task: $label, $have trials in the log, to $trials [$(($(date +%s) - start)) s]"
      st=0
      # shellcheck disable=SC2086
      timeout "$(bound "${TUNE_TIMEOUT:-120}")" "$bin/heron-bench" --suite "$suite" --tasks "$task" \
        --strategies "$strategy" --models "$model" --seeds 1 \
        --trials "$trials" --batch 16 --min-repeat-ms 10 --repeat 3 \
        --timeout 20 --out "$out/$name" ${TUNE_ARGS:-} >>"$out/$name.tune.log" 2>&1 || st=$?
      ntasks=$((ntasks + 1))
      now=0
      [ -s "$log" ] && now=$(grep -c . "$log")
      nok=$(tail -n +$((have + 1)) "$log" 2>/dev/null | grep -c '"status":"ok"')
      echo "   $((now - have)) new trials, $nok ok; heron-bench exit $st"
      if [ "$st" -eq 124 ]; then bad="$bad $name/$task: timed out after $((now - have)) new trials (run again to resume);"
      elif [ "$st" -ne 0 ]; then bad="$bad $name/$task: heron-bench exited with $st;"; tail -5 "$out/$name.tune.log"
      fi
    done
  done
  if [ "$ntasks" -eq 0 ]; then status tune FAILED "no task ran${bad:+:$bad}"
  elif [ -z "$bad" ]; then status tune ok "$ntasks tasks"
  else status tune FAILED "${bad# }"
  fi
fi

if has_phase bench && starts bench; then
  logs=$(find "$out" ${BENCH_LOGS:-} -name '*.jsonl' -o -name '*.jsonl.gz' 2>/dev/null | sort)
  bad="" ntasks=0
  # One process per task (a log's file name starts with its suite task name).
  for task in $(for f in $logs; do basename "$f" | sed 's/__.*//; s/\.jsonl.*//'; done | sort -u); do
    ntasks=$((ntasks + 1))
    if [ "$(left)" -lt 20 ]; then bad="$bad $task (not run: time budget);"; continue; fi
    args=()
    for f in $logs; do
      case $(basename "$f") in "$task"__*|"$task".jsonl*) args+=(--log "$f") ;; esac
    done
    st=0
    timeout "$(bound "${BENCH_TIMEOUT:-90}")" "$bin/bench_cuda" "${args[@]}" \
      --out "$out/bench-$task.md" > /dev/null 2> "$out/bench-$task.err" || st=$?
    if [ "$st" -ne 0 ]; then
      echo "$task: bench_cuda failed (exit $st):"; tail -5 "$out/bench-$task.err"
      bad="$bad $task (exit $st);"
    else
      grep '^| [A-Za-z]' "$out/bench-$task.md" | grep -v '^| task' | head -3
    fi
  done
  first=1
  for t in "$out"/bench-*.md; do
    [ -e "$t" ] || continue
    if [ $first = 1 ]; then head -2 "$t"; first=0; fi
    grep '^| [a-z]' "$t" | grep -v '^| task'
  done
  for t in "$out"/bench-*.md; do [ -e "$t" ] && tail -1 "$t"; break; done
  if [ "$ntasks" -eq 0 ]; then status bench FAILED "no tuning logs in $out${BENCH_LOGS:+ or $BENCH_LOGS}"
  elif [ -z "$bad" ]; then status bench ok "$ntasks tasks"
  else status bench FAILED "bench_cuda failed for${bad%;}"
  fi
fi

# host_bench NAME SUITE THREADS TRIALS: bench_suite over the suite's GEMM
# into OUTDIR/NAME; its table on stdout.  Prints nothing on success but
# the table; the failure (if any) in $hb_bad.
host_bench() {
  st=0
  timeout "$(bound "${HOST_TIMEOUT:-180}")" "$bin/bench_suite" --suite "$2" --tasks GEMM \
    --threads "$3" --trials "$4" --batch 16 --min-repeat-ms 20 --repeat 3 \
    --compare-repeat 5 --compare-ms 50 --quiet --out "$out/$1" \
    >"$out/$1.txt" 2>&1 || st=$?
  grep '^|' "$out/$1.txt"
  case $st in
  0) ;;
  124) hb_bad="$hb_bad $1: timed out;" ;;
  *) hb_bad="$hb_bad $1: bench_suite exited with $st;"; tail -5 "$out/$1.txt" ;;
  esac
}

if has_phase amx && starts amx; then
  if ! grep -q -w amx_tile /proc/cpuinfo; then
    status amx skipped "this host has no AMX (no amx_tile in /proc/cpuinfo)"
  else
    hb_bad=""
    for d in bf16 int8; do
      [ "$(left)" -lt 60 ] && { hb_bad="$hb_bad amx-$d: not run (time budget);"; continue; }
      echo "-- AMX $d GEMM 1024^3 against oneDNN [$(($(date +%s) - start)) s]"
      host_bench "amx-$d" "configs/suites/amx-$d.json" "1,$ncores" "${AMX_TRIALS:-48}"
    done
    if [ -z "$hb_bad" ]; then status amx ok; else status amx FAILED "${hb_bad# }"; fi
    # The native tests after the timings: what time is left goes to them.
    run_tests amx-tests test_amx_prelude test_amx_probe \
      test_amx_kernels:native_bf16_matches_the_emulation \
      test_amx_kernels:native_int8_matches_the_emulation
  fi
fi

if has_phase cpu && starts cpu; then
  hb_bad=""
  echo "-- fp32 GEMM 1024^3 against OpenBLAS (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-its own choice})"
  host_bench cpu-fp32 configs/suites/cpu.json "${CPU_THREADS:-1,4,$ncores}" "${CPU_TRIALS:-48}"
  if [ -z "$hb_bad" ]; then status cpu ok; else status cpu FAILED "${hb_bad# }"; fi
fi

printf '== summary [%s s]\n%s' "$(($(date +%s) - start))" "$summary"
if [ "$failed" -ne 0 ]; then
  echo "gpu-check.sh: FAILED (see the phases above)"
  exit 1
fi
echo "gpu-check.sh: every phase ok"
exit 0
