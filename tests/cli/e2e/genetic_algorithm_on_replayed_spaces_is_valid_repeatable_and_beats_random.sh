#!/bin/sh
# genetic_algorithm (Kernel Tuner's GA, not Heron's genetic) on the replayed
# community spaces: every proposal valid, the budget reached in rounds
# smaller and larger than its population, the same configs for the same
# seed, and a median best over five seeds at 400 trials on
# convolution-W6600 no worse than random's.
. "$(dirname "$0")/../e2e_common.sh"
replay_strategy genetic_algorithm convolution 400
echo ok
