/* tools/heron_search_checks.c - what heron-search checks before a run
 * starts: the plugins load, the --log, --emit and --resume paths are what
 * they must be (and their folders are made). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heron_search.h"

/* ---- Checks before tuning ------------------------------------------------ */

/* What an existing path is, for messages. */
static const char *file_kind(mode_t m) {
  return S_ISREG(m)    ? "a file"
         : S_ISDIR(m)  ? "a folder"
         : S_ISFIFO(m) ? "a FIFO (named pipe)"
         : S_ISCHR(m)  ? "a character device"
         : S_ISBLK(m)  ? "a block device"
         : S_ISSOCK(m) ? "a socket"
                       : "not a regular file";
}

/* Resolves and loads a plugin once before the task's long setup, so that a
 * wrong name or a broken file is reported against its flag.  A path (a
 * name with '/') is looked at here first, so that its reason is named
 * whatever the path's length. */
void check_plugin(const char *flag, const char *name, const char *kind) {
  heron_error err;
  char path[4096];
  struct stat st;
  if (strchr(name, '/') && stat(name, &st) != 0)
    cli_usage("%s: cannot read the %s plugin '%s': %s", flag, kind, name,
              strerror(errno));
  if (strchr(name, '/') && !S_ISREG(st.st_mode))
    cli_usage("%s: '%s' is %s, not a %s plugin (a .so file)", flag, name,
              file_kind(st.st_mode), kind);
  heron_error_clear(&err);
  int rc = heron_plugin_resolve(name, kind, path, sizeof path, &err);
  if (rc != HERON_OK)
    cli_die(CLI_EXIT_USAGE, rc, &err, "%s: no %s plugin '%s'", flag, kind,
            name);
  FILE *sink = fopen("/dev/null", "w");
  heron_error_clear(&err);
  rc = heron_plugin_describe(path, kind, sink ? sink : stderr, &err);
  if (sink)
    fclose(sink);
  if (rc != HERON_OK)
    cli_die(CLI_EXIT_USAGE, rc, &err, "%s: '%s' is not a usable %s plugin",
            flag, path, kind);
}

static const char *parent_dir(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    return ".";
  if (slash == path)
    return "/";
  return cli_printf("%.*s", (int)(slash - path), path);
}

/* Checks that a file of that name can be created in `dir`, without
 * creating it: the name's length against the file system's limits, then a
 * uniquely named probe file made and removed again (a read-only file
 * system, a folder without write permission, no inodes left).  Returns 0
 * or an errno. */
static int can_create_in(const char *dir, const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  long name_max = pathconf(dir, _PC_NAME_MAX);
  if (strlen(path) >= PATH_MAX ||
      (name_max > 0 && strlen(base) > (size_t)name_max))
    return ENAMETOOLONG;
  char *probe = cli_printf("%s/.heron-probe-XXXXXX", dir);
  int fd = mkstemp(probe);
  if (fd < 0)
    return errno;
  close(fd);
  unlink(probe);
  return 0;
}

/* --log (or the log --resume appends to) is checked, and its folders made,
 * before tuning starts, so a typo costs nothing rather than a task setup
 * and a round of builds, and every reason is named whatever the path's
 * length.  A log must be a regular file, or a name where one can be
 * created: a run locks it, appends to it and moves an older one aside, and
 * --resume reads it back.  A FIFO (which would block the run), a device
 * (/dev/null, /dev/full) or a folder is refused; leaving --log out keeps no
 * log.  Nothing is created but the folders. */
void prepare_log(const char *path) {
  if (!path[0])
    cli_usage("--log: the file name is empty (leave --log out to keep no "
              "log)");
  const char *base = strrchr(path, '/');
  if (base && !base[1])
    cli_usage("--log: '%s' ends in '/': give a file name, such as '%srun."
              "jsonl'",
              path, path);
  const char *dir = parent_dir(path);
  int e = cli_make_dirs(dir);
  if (e)
    cli_usage("--log: cannot write '%s': folder '%s': %s", path, dir,
              strerror(e));
  struct stat st;
  if (stat(path, &st) == 0) {
    if (!S_ISREG(st.st_mode))
      cli_usage("--log: '%s' is %s, not a regular file: a log is locked, "
                "appended to and read back by --resume (leave --log out to "
                "keep no log)",
                path, file_kind(st.st_mode));
    /* O_NONBLOCK: should the path become a FIFO since stat, this fails
     * instead of waiting for a reader. */
    int fd = open(path, O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
      cli_usage("--log: cannot write '%s': %s", path, strerror(errno));
    close(fd);
    return;
  }
  if (errno != ENOENT)
    cli_usage("--log: cannot write '%s': %s", path, strerror(errno));
  if (lstat(path, &st) == 0)
    cli_usage("--log: '%s' is a symbolic link to a file that does not exist",
              path);
  e = can_create_in(dir, path);
  if (e)
    cli_usage("--log: cannot create '%s': %s", path, strerror(e));
}

/* --emit names a folder: an existing one must be a folder this run can
 * write in; a new one's parent folders are made now. */
void prepare_emit(const char *dir) {
  if (!dir[0])
    cli_usage("--emit: the folder name is empty (leave --emit out to write "
              "no kernel)");
  struct stat st;
  if (stat(dir, &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      cli_usage("--emit: '%s' is %s, not a folder", dir, file_kind(st.st_mode));
    if (access(dir, W_OK | X_OK) != 0)
      cli_usage("--emit: cannot write in '%s': %s", dir, strerror(errno));
    return;
  }
  if (errno != ENOENT)
    cli_usage("--emit: cannot use '%s': %s", dir, strerror(errno));
  const char *parent = parent_dir(dir);
  int e = cli_make_dirs(parent);
  if (e)
    cli_usage("--emit: cannot write '%s': folder '%s': %s", dir, parent,
              strerror(e));
  e = can_create_in(parent, dir);
  if (e)
    cli_usage("--emit: cannot create '%s': %s", dir, strerror(e));
}

/* --resume reads a log: a regular file (a FIFO would block the run, a
 * device such as /dev/zero never ends). */
void check_resume(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0 || access(path, R_OK) != 0)
    cli_usage("--resume: cannot read '%s': %s", path, strerror(errno));
  if (!S_ISREG(st.st_mode))
    cli_usage("--resume: '%s' is %s, not a log file", path,
              file_kind(st.st_mode));
}
