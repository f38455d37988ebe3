#!/bin/sh
# A compiler wrapper for tests: builds like cc, but first plants a fault in
# some kernels, chosen by the seq number of the source file (k<seq>.c):
#   seq 1: a constructor that writes through NULL  -> the worker segfaults
#          (through a volatile pointer, so the compiler cannot see the NULL
#          and drop the store as undefined behaviour)
#   seq 2: a constructor that never returns        -> the run times out
# Every other kernel is built untouched.
for a in "$@"; do
  case "$a" in
  *.c) src=$a ;;
  esac
done
case "$(basename "${src:-none}")" in
k1.c)
  printf '\n__attribute__((constructor)) static void heron_inject_crash(void)\n{ volatile int *volatile p = 0; *p = 1; }\n' >>"$src"
  ;;
k2.c)
  printf '\n__attribute__((constructor)) static void heron_inject_hang(void)\n{ for (;;) __asm__ volatile(""); }\n' >>"$src"
  ;;
esac
exec cc "$@"
