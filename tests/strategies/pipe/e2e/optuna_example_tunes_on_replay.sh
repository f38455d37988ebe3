#!/bin/sh
# The Optuna example (examples/optuna_tpe.py) tunes 40 trials on the replay
# target: every trial logged once, distinct configs, none invalid.  Skipped
# (exit 77) without a python3 that imports optuna (Debian: python3-optuna).
. "$(dirname "$0")/../common.sh"
PY=""
for p in python3 /usr/bin/python3; do
  if "$p" -c 'import optuna' 2>/dev/null; then
    PY=$(command -v "$p")
    break
  fi
done
if [ -z "$PY" ]; then
  echo "SKIP: no python3 with optuna (apt-get install python3-optuna)"
  exit 77
fi
search optuna $REPLAY --strategy pipe --param "program=$PY" \
  --param "args=$EXAMPLES/optuna_tpe.py --startup 8" --trials 40 --batch 8 \
  --seed 4 --log "$W/optuna.jsonl"
[ "$(cat "$W/optuna.status")" -eq 0 ] || fail "the run failed"
check_log "$W/optuna.jsonl" 40
! grep -q '"status":"invalid"' "$W/optuna.jsonl" || fail "an invalid trial"
grep -q "dropped 0 invalid, 0 duplicate" "$W/optuna.out" ||
  fail "invalid or duplicate proposals"
echo ok
