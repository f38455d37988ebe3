#!/bin/sh
# pso (Kernel Tuner's particle swarm) on the replayed community spaces:
# every proposal valid, the budget reached in rounds smaller and larger than
# its swarm, the same configs for the same seed, and a median best over
# five seeds at 100 trials on convolution-W6600 no worse than random's.
. "$(dirname "$0")/../e2e_common.sh"
replay_strategy pso convolution 100
echo ok
