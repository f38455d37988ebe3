#!/bin/sh
# genetic_algorithm (Kernel Tuner's GA, not Heron's genetic) on the replayed community spaces:
# every proposal valid, the budget reached in rounds smaller and larger than
# its population, the same configs for the same seed, and a resume that measures
# only new configs.  Its comparison with random is
# genetic_algorithm_beats_random_on_conv_replays.sh.
. "$(dirname "$0")/../e2e_common.sh"
replay_strategy genetic_algorithm
echo ok
