# tests/strategies/llm_server.cmake - the scripted OpenAI-compatible chat
# server the llm strategy's tests talk to (tests/strategies/llm/).
#
# heron_fake_llm: the server as a static library (fake_server.h), linked by
#   the plugin's own tests, which start it in-process.
# fake-llm-server: the same server as a program, for shell tests and manual
#   runs (build/bin/fake-llm-server --help).
# test_fake_server: the server's own tests, through libcurl like the plugin.

add_library(heron_fake_llm STATIC ${CMAKE_CURRENT_SOURCE_DIR}/llm/fake_server.c)
target_include_directories(heron_fake_llm PUBLIC
                           ${CMAKE_SOURCE_DIR}/tests/strategies/llm)
target_compile_options(heron_fake_llm PRIVATE ${HERON_WARN})
# accept4, pipe2 and memmem are GNU extensions.
target_compile_definitions(heron_fake_llm PRIVATE _GNU_SOURCE)
target_link_libraries(heron_fake_llm PUBLIC PkgConfig::JANSSON Threads::Threads)

add_executable(fake-llm-server ${CMAKE_CURRENT_SOURCE_DIR}/llm/fake_server_main.c)
set_target_properties(fake-llm-server PROPERTIES
                      RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
target_compile_options(fake-llm-server PRIVATE ${HERON_WARN})
target_compile_definitions(fake-llm-server PRIVATE _GNU_SOURCE)
target_link_libraries(fake-llm-server PRIVATE heron_fake_llm)

find_package(CURL REQUIRED)
heron_add_test_file(${CMAKE_CURRENT_SOURCE_DIR}/llm/test_fake_server.c
                    LIBS heron_fake_llm CURL::libcurl TIMEOUT 120)
add_dependencies(test_fake_server fake-llm-server)
target_compile_definitions(test_fake_server PRIVATE
  HERON_FAKE_LLM_SERVER="$<TARGET_FILE:fake-llm-server>")
