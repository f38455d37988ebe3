/* tests/registration/test_registration.c - TESTs written the ways
 * clang-format and people write them are each registered as their own
 * ctest (tests/CMakeLists.txt), and run under their own name; what only
 * looks like a TEST is not registered.
 *
 * The ctest `registration.every_test_is_registered`
 * (check_registration.py) compares these TESTs - as every test file's -
 * with ctest's list, so a form the registration misses, or a mention below
 * it takes for a test, fails there, naming the TEST.  Mentions that are no
 * tests:
TEST(at_the_start_of_a_comment_line)
 * TEST(in_a_comment)
 */
#include "test.h"

// TEST(in_a_line_comment)
#define NOT_A_TEST TEST(in_a_macro)

static const char *const not_a_test = "TEST(in_a_string)";

static int ran_as(const char *name) {
  return heron_test_current && strcmp(heron_test_current, name) == 0;
}

/* clang-format would join the forms this file is about. */
// clang-format off

TEST(on_one_line) { CHECK(ran_as("on_one_line")); }

TEST(
    the_name_on_the_line_after_the_parenthesis_as_clang_format_wraps_it) {
  CHECK(ran_as(
      "the_name_on_the_line_after_the_parenthesis_as_clang_format_wraps_it"));
}

TEST( blanks_inside_the_parentheses ) {
  CHECK(ran_as("blanks_inside_the_parentheses"));
}

TEST
(the_parenthesis_on_the_next_line) {
  CHECK(ran_as("the_parenthesis_on_the_next_line"));
}

  TEST(indented) { CHECK(ran_as("indented")); }
// clang-format on

TEST(mentions_of_tests_in_strings_are_no_tests) {
  CHECK(ran_as("mentions_of_tests_in_strings_are_no_tests"));
  CHECK_STR_CONTAINS(not_a_test, "TEST(");
}
