#!/bin/sh
# genetic_algorithm (Kernel Tuner's GA, not Heron's genetic): over five seeds at 400 trials on the
# replayed convolution-W6600 space, a median best no worse than random's.
# Release only (no_asan): what the search finds, not memory; its validity
# test runs under the sanitizers.
. "$(dirname "$0")/../e2e_common.sh"
replay_beats_random genetic_algorithm convolution 400
echo ok
