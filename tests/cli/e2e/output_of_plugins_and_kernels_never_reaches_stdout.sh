#!/bin/sh
# stdout is the summary's: a strategy that printf's in every call, and a
# kernel that prints (planted by a compiler wrapper), leave it as the
# summary alone; the kernel's output is counted in its record's error text.
. "$(dirname "$0")/../e2e_common.sh"
: "${HERON_TEST_PLUGIN_DIR:?set HERON_TEST_PLUGIN_DIR to the test plugins}"
cat >"$W/printing-cc" <<'SH'
#!/bin/sh
for a in "$@"; do case "$a" in *.c) src=$a ;; esac; done
printf '\n#include <stdio.h>\n__attribute__((constructor)) static void heron_chatty(void)\n{ for (int i = 0; i < 100000; i++) printf("kernel output line %%d\\n", i); fflush(stdout); }\n' >>"$src"
exec cc "$@"
SH
chmod +x "$W/printing-cc"
LOG=$W/p.jsonl
"$HERON_SEARCH" --op gemm --shape 64,64,64 --trials 8 --batch 4 \
  --strategy "$HERON_TEST_PLUGIN_DIR/strat_prints.so" --cc "$W/printing-cc" \
  --log "$LOG" $FAST >"$W/p.out" 2>"$W/p.err" || fail "exited $?"
bad=$(grep -v -E '^(task|strategy|trials|best|elapsed|log|emit|retried|stopped) ' "$W/p.out" || true)
[ -z "$bad" ] || fail "stdout holds more than the summary: $(echo "$bad" | head -3)"
[ "$(wc -l <"$W/p.out")" -le 12 ] || fail "stdout has $(wc -l <"$W/p.out") lines"
check_log "$LOG" --lines 8 --trials 8
grep -q '"error":"[^"]*stdout: [0-9]* bytes' "$LOG" ||
  fail "the kernels' output is not counted in their records"
echo ok
