#!/bin/sh
# firefly_algorithm (Kernel Tuner's) on the replayed community spaces: every
# proposal valid, the budget reached in rounds smaller and larger than an
# iteration's moves, the same configs for the same seed, and a resume that
# measures only new configs.  No comparison with random: on both shipped
# W6600 spaces, at 100 and 400 trials, its median best is worse than that of
# Heron's (biased) random sampler.
. "$(dirname "$0")/../e2e_common.sh"
replay_strategy firefly_algorithm
echo ok
