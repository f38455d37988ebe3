# tests/strategies/bo.cmake - the Gaussian process of plugins/common and the
# two BO strategies that use it (becbo.so, tsbo.so).

# The GP alone, linked statically as the plugins link it.
heron_add_test_file(${CMAKE_CURRENT_SOURCE_DIR}/test_gp.c
                    LIBS heron_plugin_common heron)

# The strategies through their .so files, driven with a real space and the
# engine's history (core/record/record.h, hence heron_internal).
heron_add_test_file(${CMAKE_CURRENT_SOURCE_DIR}/test_bo.c
                    LIBS heron_internal TIMEOUT 600)
add_dependencies(test_bo becbo tsbo random)
target_compile_definitions(test_bo PRIVATE
  HERON_TEST_BECBO="$<TARGET_FILE:becbo>"
  HERON_TEST_TSBO="$<TARGET_FILE:tsbo>"
  HERON_TEST_RANDOM="$<TARGET_FILE:random>")
# The two tests of search quality (3 seeds x 120-160 trials of GP fits
# against random) are left out of the sanitizer stage (no_asan): they
# check what the strategies find, not memory, and the same code runs
# under ASan in every_proposal_is_valid_unique_and_new and the tsbo/becbo
# state tests (about 58 of the sanitizer stage's test-seconds saved).
set_tests_properties(
  test_bo.both_strategies_beat_constrained_random_on_a_smooth_objective
  test_bo.becbo_learns_to_avoid_an_unknown_constraint
  PROPERTIES LABELS no_asan)
