#!/bin/sh
# pso (Kernel Tuner's particle swarm) on the replayed community spaces:
# every proposal valid, the budget reached in rounds smaller and larger than
# its swarm, the same configs for the same seed, and a resume that measures
# only new configs.  Its comparison with random is
# pso_beats_random_on_conv_replays.sh.
. "$(dirname "$0")/../e2e_common.sh"
replay_strategy pso
echo ok
