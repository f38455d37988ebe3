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
