/* tools/suite.h - the suite file the tools read (heron-bench, heron-lib):
 *
 *   {"name", "description", "dtype", "target",
 *    "tasks": [{"name", "op", "shape": {named dimensions}}
 *              | {"name", "t1", "t4"}]}
 *
 * The shape may also be an array in the op's --shape order; trailing
 * dimensions may be left out (the op's defaults fill them).  Every key is
 * checked: an unknown one (a misspelt "dtpye", a task's own "dtype") is a
 * usage error naming the file, the task and the key.  Task names follow
 * CLI_NAME_RULE (they become file names) and differ in more than case. */
#ifndef HERON_TOOLS_SUITE_H
#define HERON_TOOLS_SUITE_H

#include "cli.h"

typedef struct cli_suite_task {
  const char *name;   /* as the suite writes it, following CLI_NAME_RULE */
  cli_task_args args; /* the flags given, the suite's op, shape, dtype and
                         target filled in where no flag set them */
} cli_suite_task;

/* Reads the suite at `path`: each task's arguments start from `flags` (the
 * task flags of the command line: --dtype or --target given there win
 * over the suite's); `select` (--tasks, comma-separated names, matched
 * case-blind; NULL for all) keeps only those tasks, a name the suite lacks
 * being a usage error listing the names it has.  `flag` names the option
 * in messages ("--suite").  Every error is a usage error (exit 2).
 * Returns a malloc'ed array of *n tasks (free it); strings live until
 * cli_free_all. */
cli_suite_task *cli_suite_load(const char *flag, const char *path,
                               const cli_task_args *flags, const char *select,
                               int *n);

#endif
