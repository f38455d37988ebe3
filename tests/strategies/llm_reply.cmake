# tests/strategies/llm_reply.cmake - the llm strategy's reply parser
# (plugins/strategies/llm/reply.c), compiled into the test directly: it is
# internal to llm.so, which exports nothing else.
heron_add_test_file(${CMAKE_CURRENT_SOURCE_DIR}/test_llm_reply.c
                    LIBS heron PkgConfig::JANSSON)
target_sources(test_llm_reply PRIVATE
               ${CMAKE_SOURCE_DIR}/plugins/strategies/llm/reply.c)
# CHECK_STR_CONTAINS(why, ...) tests its array argument, which GCC flags
# under -Waddress.
target_compile_options(test_llm_reply PRIVATE -Wno-address)

# One ctest per reply case file: the TEST `cases` reads the file named by
# LLM_REPLY_CASE (run without it, it goes through the whole folder).
file(GLOB HERON_LLM_REPLY_CASES CONFIGURE_DEPENDS
     ${CMAKE_CURRENT_SOURCE_DIR}/llm/replies/*.case)
foreach(case ${HERON_LLM_REPLY_CASES})
  get_filename_component(name ${case} NAME_WE)
  add_test(NAME test_llm_reply.case.${name}
           COMMAND test_llm_reply cases
           WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
  set_tests_properties(test_llm_reply.case.${name} PROPERTIES TIMEOUT 60
    ENVIRONMENT "LLM_REPLY_CASE=${case};HERON_PLUGIN_PATH=;ASAN_OPTIONS=detect_leaks=1")
endforeach()
