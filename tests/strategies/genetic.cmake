# tests/strategies/genetic.cmake - the genetic strategy (plugins/strategies/
# genetic) and the synthetic cost model its tests steer it with.
set(HERON_GENETIC_TEST_PLUGIN_DIR ${CMAKE_CURRENT_BINARY_DIR}/plugins)
add_library(testplugin_model_synthetic MODULE plugins/model_synthetic.c)
set_target_properties(testplugin_model_synthetic PROPERTIES PREFIX ""
  OUTPUT_NAME model_synthetic
  LIBRARY_OUTPUT_DIRECTORY ${HERON_GENETIC_TEST_PLUGIN_DIR})
target_include_directories(testplugin_model_synthetic PRIVATE
                           ${CMAKE_SOURCE_DIR}/include)
target_compile_options(testplugin_model_synthetic PRIVATE ${HERON_WARN}
                       -fvisibility=hidden)
target_link_libraries(testplugin_model_synthetic PRIVATE heron)

heron_add_test_file(${CMAKE_CURRENT_SOURCE_DIR}/test_genetic.c TIMEOUT 600)
add_dependencies(test_genetic genetic random linear testplugin_model_synthetic)
# CHECK_OK(expr, &err) tests its pointer argument, which GCC flags under -Waddress.
target_compile_options(test_genetic PRIVATE -Wno-address)
target_compile_definitions(test_genetic PRIVATE
  HERON_GENETIC_PLUGIN="$<TARGET_FILE:genetic>"
  HERON_RANDOM_PLUGIN="$<TARGET_FILE:random>"
  HERON_LINEAR_MODEL="$<TARGET_FILE:linear>"
  HERON_SYNTHETIC_MODEL="$<TARGET_FILE:testplugin_model_synthetic>")
