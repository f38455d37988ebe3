# tests/models/models.cmake: the xgb and linear cost models, each loaded
# through the host (heron__model_open, hence heron_internal) from the build
# tree's plugins folder.
heron_add_test_file(test_xgb.c LIBS heron_internal LABELS models TIMEOUT 120)
heron_add_test_file(test_linear.c LIBS heron_internal LABELS models TIMEOUT 120)
add_dependencies(test_xgb xgb)
add_dependencies(test_linear linear)
# CHECK_OK(expr, &err) tests its pointer argument, which GCC flags under
# -Waddress.
target_compile_options(test_xgb PRIVATE -Wno-address)
target_compile_options(test_linear PRIVATE -Wno-address)

# XGBoost runs on OpenMP, whose idle threads spin by default.  When ctest
# -j runs other tests on the same cores the spinning threads starve each
# other and a 0.1 s test takes several seconds; passive waiting keeps the
# xgb tests fast on a busy machine without changing what they compute.
file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/test_xgb.c xgb_tests REGEX "^TEST\\(")
foreach(t ${xgb_tests})
  string(REGEX REPLACE "^TEST\\(([A-Za-z0-9_]+)\\).*" "\\1" name "${t}")
  set_property(TEST test_xgb.${name} APPEND PROPERTY ENVIRONMENT
               OMP_WAIT_POLICY=passive)
endforeach()
