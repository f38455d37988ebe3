#!/bin/sh
# The Optuna example (examples/optuna_tpe.py) tunes 40 trials on the replay
# target: every trial logged once, distinct configs, none invalid.  It runs
# under the first python3 that imports optuna, PATH's or Debian's
# /usr/bin/python3 (python3-optuna is installed for that one only), named
# with program=; skipped (exit 77) when neither has it.
# When PATH's python3 lacks Optuna (pyenv, a venv), the example run as
# program=optuna_tpe.py (its #! finds that python3) must stop with exit
# status 1 and say which Python lacks Optuna and which one has it, not a
# traceback.
. "$(dirname "$0")/../common.sh"
PY=""
for p in python3 /usr/bin/python3; do
  if "$p" -c 'import optuna' 2>/dev/null; then
    PY=$(command -v "$p")
    break
  fi
done

if command -v python3 >/dev/null && ! python3 -c 'import optuna' 2>/dev/null
then
  exe=$(python3 -c 'import sys; print(sys.executable)')
  search lacking $REPLAY --strategy pipe \
    --param "program=$EXAMPLES/optuna_tpe.py" --trials 8 --batch 8 --seed 4
  [ "$(cat "$W/lacking.status")" -eq 1 ] ||
    fail "without optuna: exit status $(cat "$W/lacking.status"), expected 1"
  grep -qF "the Python running it cannot import optuna" "$W/lacking.err" ||
    fail "without optuna: the example does not say what is missing"
  grep -qF "$exe (Python " "$W/lacking.err" ||
    fail "without optuna: the message does not name $exe"
  grep -qF "reported an error for 'hello' (id 1): $exe" "$W/lacking.err" ||
    fail "without optuna: the run's error does not name $exe"
  if [ -n "$PY" ]; then
    grep -qF "run it with such a Python: --param program=$PY --param args=" \
      "$W/lacking.err" ||
      fail "without optuna: the message does not point at $PY"
  fi
  ! grep -q "Traceback" "$W/lacking.err" || fail "without optuna: a traceback"
fi

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
echo "ok (Optuna under $PY)"
