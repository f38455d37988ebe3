#!/bin/sh
# pso (Kernel Tuner's particle swarm): over five seeds at 100 trials on the
# replayed convolution-W6600 space, a median best no worse than random's.
# Release only (no_asan): what the search finds, not memory; its validity
# test runs under the sanitizers.
. "$(dirname "$0")/../e2e_common.sh"
replay_beats_random pso convolution 100
echo ok
