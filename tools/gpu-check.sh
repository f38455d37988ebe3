#!/bin/bash
# tools/gpu-check.sh - the checks of the CUDA target on a machine with an
# NVIDIA GPU, in one unattended command (GPU time is short: everything is
# prepared on a machine without one and run here in one go).
#
# Usage: bash tools/gpu-check.sh OUTDIR
#
# Runs from a build made elsewhere (its folder named by BUILD, its shared
# libraries in .devlibs/ where this machine lacks them: tools/gpu-pack.sh
# prepares both); the paths the build
# recorded (plugins, configs) are made to point here.  Phases (PHASES, in
# this order, default all):
#   smoke     tests/bench/gpu_smoke.sh: a short tuning run, every kernel
#             launched, checked and timed;
#   baseline  the vendor libraries on the suite through PyTorch, when it is
#             there (bench/gpu/torch_baseline.py);
#   tune      heron-bench over each suite of SUITES with STRATEGY (+MODEL),
#             TRIALS trials per task: every config built by NVRTC, launched,
#             checked against the reference and timed; a suite's logs go to
#             OUTDIR/<suite name>/logs (resumable: run again to go on);
#   bench     bench_cuda on the best config of every task in the logs of
#             the tune phase and of BENCH_LOGS (files or folders), against
#             cuBLAS / cuDNN, one process per task; tables in
#             OUTDIR/bench-<task>.md and all of them on stdout.
# Environment: BUILD (build), PHASES, SUITES (configs/suites/tensorcore.json),
# STRATEGY (random), MODEL (none), TRIALS (32), TUNE_TIMEOUT (seconds per
# suite, 300), TUNE_ARGS (more heron-bench flags, e.g. --tasks GEMM,C2D),
# BENCH_LOGS (none), BENCH_TIMEOUT (seconds per task, 90).
#
# Every phase asked for runs even when an earlier one failed; at the end a
# summary gives each phase's status (ok, FAILED with why, skipped with why)
# and the script exits 1 when any phase failed (the smoke test skipping
# because there is no GPU counts as failed here: this is the GPU check),
# 0 when none did, 2 on a usage error.
set -u
out=${1:?usage: gpu-check.sh OUTDIR}
out=$(mkdir -p "$out" && cd "$out" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-build}
phases=${PHASES:-smoke baseline tune bench}
# The build records the absolute path of the tree it was made in; rebuild
# that path here as links to this tree, with its build folder.
made_in=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$here/$build/CMakeCache.txt" 2>/dev/null)
if [ -n "$made_in" ] && [ "$made_in" != "$here" ] && [ ! -e "$made_in" ]; then
  mkdir -p "$made_in"
  for e in "$here"/*; do
    [ "$(basename "$e")" = build ] || ln -s "$e" "$made_in/$(basename "$e")"
  done
  ln -s "$here/$build" "$made_in/build"
fi
bin=$here/$build/bin
export LD_LIBRARY_PATH="$here/.devlibs:$here/$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# A build folder other than the one libheron was configured in is not where
# its plugins are looked for (only build/ and an installed tree are).
export HERON_PLUGIN_PATH="$here/$build/plugins${HERON_PLUGIN_PATH:+:$HERON_PLUGIN_PATH}"
cd "$here" || exit 1

# Each phase's status, for the summary: "<phase>: ok" / "<phase>: FAILED
# (why)" / "<phase>: skipped (why)", one line each, in the order run.
summary=""
failed=0
status() { # status PHASE ok|FAILED|skipped [WHY]
  line="$1: $2${3:+ ($3)}"
  summary="$summary$line
"
  [ "$2" = FAILED ] && failed=1
  echo "-- $line"
}
for p in $phases; do
  case $p in smoke|baseline|tune|bench) ;;
  *) echo "gpu-check.sh: unknown phase '$p' in PHASES (smoke baseline tune bench)" >&2
     exit 2 ;;
  esac
done

echo "== machine"
if nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv; then
  status machine ok
else
  status machine FAILED "nvidia-smi exited with $?"
fi
echo "$(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo)"
if ldd "$bin/heron-search" | grep 'not found'; then
  echo "missing libraries: build on this machine instead"
  status libraries FAILED "heron-search lacks shared libraries"
  printf '== summary\n%s' "$summary"
  exit 1
fi

case " $phases " in *" smoke "*)
  echo "== smoke"
  st=0
  sh tests/bench/gpu_smoke.sh "$bin/heron-search" || st=$?
  case $st in
  0) status smoke ok ;;
  77) status smoke FAILED "skipped: no GPU found (see above)" ;;
  *) status smoke FAILED "gpu_smoke.sh exited with $st" ;;
  esac ;;
esac

case " $phases " in *" baseline "*)
  if python3 -c 'import torch' 2>/dev/null; then
    echo "== vendor libraries through PyTorch"
    st=0
    timeout 120 python3 bench/gpu/torch_baseline.py > "$out/torch_baseline.txt" 2>&1 || st=$?
    cat "$out/torch_baseline.txt"
    if [ "$st" -eq 0 ]; then status baseline ok
    elif [ "$st" -eq 124 ]; then status baseline FAILED "timed out after 120 s"
    else status baseline FAILED "torch_baseline.py exited with $st"
    fi
  else
    status baseline skipped "no PyTorch for $(command -v python3)"
  fi ;;
esac

case " $phases " in *" tune "*)
  model=${MODEL:-none}
  bad=""
  for suite in ${SUITES:-configs/suites/tensorcore.json}; do
    name=$(basename "$suite" .json)
    echo "== heron-bench $name, ${STRATEGY:-random} + $model, ${TRIALS:-32} trials"
    st=0
    timeout "${TUNE_TIMEOUT:-300}" "$bin/heron-bench" --suite "$suite" \
      --strategies "${STRATEGY:-random}" --models "$model" --seeds 1 \
      --trials "${TRIALS:-32}" --batch 16 --min-repeat-ms 10 --repeat 3 \
      --timeout 20 --out "$out/$name" ${TUNE_ARGS:-} > "$out/$name.tune.log" 2>&1 || st=$?
    tail -20 "$out/$name.tune.log"
    if [ "$st" -eq 124 ]; then bad="$bad $name: timed out after ${TUNE_TIMEOUT:-300} s (run again to resume);"
    elif [ "$st" -ne 0 ]; then bad="$bad $name: heron-bench exited with $st;"
    fi
  done
  if [ -z "$bad" ]; then status tune ok; else status tune FAILED "${bad# }"; fi ;;
esac

case " $phases " in *" bench "*)
  echo "== bench_cuda: the best kernel of each task against cuBLAS / cuDNN"
  logs=$(find "$out" ${BENCH_LOGS:-} -name '*.jsonl' -o -name '*.jsonl.gz' 2>/dev/null | sort)
  bad="" ntasks=0
  # One process per task (a log's file name starts with its suite task name).
  for task in $(for f in $logs; do basename "$f" | sed 's/__.*//; s/\.jsonl.*//'; done | sort -u); do
    ntasks=$((ntasks + 1))
    args=()
    for f in $logs; do
      case $(basename "$f") in "$task"__*|"$task".jsonl*) args+=(--log "$f") ;; esac
    done
    st=0
    timeout "${BENCH_TIMEOUT:-90}" "$bin/bench_cuda" "${args[@]}" \
      --out "$out/bench-$task.md" > /dev/null 2> "$out/bench-$task.err" || st=$?
    if [ "$st" -ne 0 ]; then
      echo "$task: bench_cuda failed (exit $st):"; tail -5 "$out/bench-$task.err"
      bad="$bad $task (exit $st);"
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
  fi ;;
esac

printf '== summary\n%s' "$summary"
if [ "$failed" -ne 0 ]; then
  echo "gpu-check.sh: FAILED (see the phases above)"
  exit 1
fi
echo "gpu-check.sh: every phase ok"
exit 0
