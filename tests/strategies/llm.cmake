# tests/strategies/llm.cmake - the LLM-prompt proposer (plugins/strategies/
# llm) against the scripted server of llm_server.cmake (heron_fake_llm).
heron_add_test_file(${CMAKE_CURRENT_SOURCE_DIR}/test_llm.c TIMEOUT 300)
add_dependencies(test_llm llm)
target_link_libraries(test_llm PRIVATE heron_fake_llm PkgConfig::JANSSON)
# CHECK_OK(expr, &err) tests its pointer argument, which GCC flags under -Waddress.
target_compile_options(test_llm PRIVATE -Wno-address)
target_compile_definitions(test_llm PRIVATE
  HERON_LLM_PLUGIN="$<TARGET_FILE:llm>")
