/* tools/heron_lib_build.c - compiling a library heron-lib wrote
 * (heron_lib.h): each kernel with the flags it was tuned with, the
 * library's own code, then lib/libNAME.a (ar in deterministic mode) and
 * lib/libNAME.so (only the header's names exported).  Every command runs
 * in OUT/src on relative paths, so no absolute path reaches the objects
 * and the same sources give the same files. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heron_lib.h"

typedef struct job {
  const char *what; /* for messages: "kernel 3 (mylib_gemm_...)" */
  char **argv;
  const char *out; /* its output file, in src/ */
  pid_t pid;
} job;

/* Splits "gcc -O3 -march=native" at blanks into words appended to argv. */
static int split_words(const char *text, char **argv, int n) {
  char *copy = cli_strdup(text);
  for (char *w = strtok(copy, " \t"); w; w = strtok(NULL, " \t"))
    argv[n++] = w;
  return n;
}

static char *command_text(char **argv) {
  char *s = cli_strdup("");
  for (int i = 0; argv[i]; i++)
    s = cli_printf("%s%s%s", s, i ? " " : "", argv[i]);
  return s;
}

static pid_t start(const char *dir, job *j) {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(j->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (chdir(dir) != 0)
      _exit(126);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    execvp(j->argv[0], j->argv);
    fprintf(stderr, "cannot run %s: %s\n", j->argv[0], strerror(errno));
    _exit(127);
  }
  return pid;
}

/* Exits with the failing job's command and output. */
static void fail(const job *j, int status) {
  fprintf(stderr, "%s: building %s failed (%s %d): %s\n", cli_prog(), j->what,
          WIFSIGNALED(status) ? "signal" : "exit status",
          WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
          command_text(j->argv));
  FILE *f = fopen(j->out, "r");
  if (f) {
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, f) && n++ < 40)
      fputs(line, stderr);
    fclose(f);
  }
  exit(CLI_EXIT_FAILURE);
}

/* Runs jobs[0..n) in dir, at most `par` at once; exits on the first
 * failure (after the running ones end). */
static void run_jobs(const char *dir, job *jobs, int n, int par) {
  int next = 0, running = 0;
  while (next < n || running) {
    while (next < n && running < par) {
      jobs[next].pid = start(dir, &jobs[next]);
      if (jobs[next].pid < 0) {
        fprintf(stderr, "%s: fork: %s\n", cli_prog(), strerror(errno));
        exit(CLI_EXIT_FAILURE);
      }
      next++;
      running++;
    }
    int status;
    pid_t pid = wait(&status);
    if (pid < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    running--;
    for (int i = 0; i < next; i++)
      if (jobs[i].pid == pid && !(WIFEXITED(status) && !WEXITSTATUS(status))) {
        while (running > 0 && wait(NULL) > 0)
          running--;
        fail(&jobs[i], status);
      }
  }
}

static char **new_argv(int cap) {
  char **argv = calloc((size_t)cap, sizeof *argv);
  if (!argv) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    exit(CLI_EXIT_FAILURE);
  }
  return argv;
}

/* The job compiling the library's own file src/BASE.c into argv (with
 * OpenMP: NAME.c sets the kernels' thread count). */
static job own_code(const lib_settings *s, const char *base, char **argv) {
  int n = split_words(s->cc, argv, 0);
  const char *flags[] = {"-O2", "-fPIC", "-fopenmp", "-I../include", "-c"};
  for (size_t f = 0; f < sizeof flags / sizeof *flags; f++)
    argv[n++] = (char *)flags[f];
  argv[n++] = cli_printf("%s.c", base);
  argv[n++] = "-o";
  argv[n++] = cli_printf("%s.o", base);
  return (job){cli_printf("%s.c", base), argv,
               cli_printf("%s/src/%s.log", s->out, base), 0};
}

/* ---- The cuda kernels' images -------------------------------------------- */

static unsigned char *read_bytes(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  unsigned char *buf = NULL;
  long n = -1;
  if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 &&
      fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n)) &&
      fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  if (f)
    fclose(f);
  if (!buf) {
    fprintf(stderr, "%s: cannot read %s: %s\n", cli_prog(), path,
            errno ? strerror(errno) : "empty");
    exit(CLI_EXIT_FAILURE);
  }
  *size = (size_t)n;
  return buf;
}

/* src/NAME_k<i>_host.c: the kernel's source built as its CPU emulation,
 * its kernel function renamed, and the entry the fake driver calls in its
 * place: heron_cuda_kernel(params), params pointing at the four 64-bit
 * device pointers as cuLaunchKernel passes them. */
static const char *host_source(const lib_settings *s, const lib_kernel *k,
                               int i) {
  const char *base = cli_printf("%s_k%d_host", s->name, i);
  lib_write_text(
      cli_printf("%s/src/%s.c", s->out, base),
      cli_printf("/* %s, kernel %d of %s: its CPU emulation as a host shared "
                 "object,\n * the test aid of --cuda-image host (only the "
                 "tests' fake driver loads it). */\n"
                 "#define %s heron__host_body\n%s#undef %s\n\n"
                 "__attribute__((visibility(\"default\"))) void %s(void "
                 "**params) {\n"
                 "  void *bufs[4];\n"
                 "  for (int i = 0; i < 4; i++)\n"
                 "    bufs[i] = (void *)(unsigned long)*(unsigned long long "
                 "*)params[i];\n"
                 "  heron_kernel(bufs);\n}\n",
                 k->fn, i, s->name, k->image.entry, k->source, k->image.entry,
                 k->image.entry));
  return base;
}

void lib_build_images(lib_settings *s) {
  job *jobs = calloc((size_t)s->nk + 1, sizeof *jobs);
  if (!jobs) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    exit(CLI_EXIT_FAILURE);
  }
  int nj = 0;
  const char *src = cli_printf("%s/src", s->out);
  if (cli_make_dirs(src) != 0) {
    fprintf(stderr, "%s: cannot create %s: %s\n", cli_prog(), src,
            strerror(errno));
    exit(CLI_EXIT_FAILURE);
  }
  for (int i = 0; i < s->nk; i++) {
    lib_kernel *k = &s->k[i];
    if (!k->cuda)
      continue;
    heron_error err;
    heron_error_clear(&err);
    int rc = heron_cuda_image_build(k->task, k->source, !s->host_image,
                                    &k->image, &err);
    if (rc == HERON_EBUILD || rc == HERON_EUNSUPPORTED)
      cli_usage("task %s (log %s): cannot build its cubin for sm_%d: %s "
                "(--sm picks the architecture)",
                k->key, k->log, k->image.sm, err.text);
    if (rc)
      cli_die(CLI_EXIT_FAILURE, rc, &err, "task %s (log %s)", k->key, k->log);
    if (!s->host_image) {
      /* The cubin beside the launcher that embeds it, for cuobjdump. */
      k->embed = malloc(k->image.cubin_size);
      if (!k->embed) {
        fprintf(stderr, "%s: out of memory\n", cli_prog());
        exit(CLI_EXIT_FAILURE);
      }
      memcpy(k->embed, k->image.cubin, k->image.cubin_size);
      k->embed_size = k->image.cubin_size;
      FILE *f = fopen(cli_printf("%s/%s_k%d.cubin", src, s->name, i), "wb");
      if (!f || fwrite(k->embed, 1, k->embed_size, f) != k->embed_size ||
          fclose(f) != 0) {
        fprintf(stderr, "%s: cannot write %s/%s_k%d.cubin\n", cli_prog(), src,
                s->name, i);
        exit(CLI_EXIT_FAILURE);
      }
      continue;
    }
    const char *base = host_source(s, k, i);
    char **argv = new_argv(128);
    int n = split_words(s->cc, argv, 0);
    n = split_words(heron_task_cflags(k->task), argv, n);
    argv[n++] = cli_printf("%s.c", base);
    argv[n++] = "-o";
    argv[n++] = cli_printf("%s.so", base);
    jobs[nj++] = (job){cli_printf("the host image of kernel %d (%s)", i, k->fn),
                       argv, cli_printf("%s/%s.log", src, base), 0};
  }
  run_jobs(src, jobs, nj, s->jobs);
  for (int j = 0; j < nj; j++) {
    unlink(jobs[j].out);
    free(jobs[j].argv);
  }
  free(jobs);
  for (int i = 0; i < s->nk; i++)
    if (s->k[i].cuda && s->host_image)
      s->k[i].embed =
          read_bytes(cli_printf("%s/%s_k%d_host.so", src, s->name, i),
                     &s->k[i].embed_size);
}

void lib_build(const lib_settings *s) {
  const char *src = cli_printf("%s/src", s->out);
  const char *N = s->name;
  int nj = s->nk + 2;
  job *jobs = calloc((size_t)nj, sizeof *jobs);
  /* The argument lists: one per job, and ar's and the two links'. */
  char ***kept = calloc((size_t)(nj + 3), sizeof *kept);
  if (!jobs || !kept) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    exit(CLI_EXIT_FAILURE);
  }
  int nkept = 0;
  for (int i = 0; i < s->nk; i++) {
    char **argv = kept[nkept++] = new_argv(128);
    int n = split_words(s->cc, argv, 0);
    n = split_words(s->k[i].cflags, argv, n);
    argv[n++] = "-c";
    argv[n++] = cli_printf("%s_k%d.c", N, i);
    argv[n++] = "-o";
    argv[n++] = cli_printf("%s_k%d.o", N, i);
    jobs[i] = (job){cli_printf("kernel %d (%s)", i, s->k[i].fn), argv,
                    cli_printf("%s/%s_k%d.log", src, N, i), 0};
  }
  jobs[s->nk] = own_code(s, N, kept[nkept++] = new_argv(32));
  jobs[s->nk + 1] =
      own_code(s, cli_printf("%s_blas", N), kept[nkept++] = new_argv(32));
  run_jobs(src, jobs, nj, s->jobs);
  if (cli_make_dirs(cli_printf("%s/lib", s->out)) != 0) {
    fprintf(stderr, "%s: cannot create %s/lib: %s\n", cli_prog(), s->out,
            strerror(errno));
    exit(CLI_EXIT_FAILURE);
  }
  /* ar adds to an archive that exists: start from none. */
  const char *a = cli_printf("%s/lib/lib%s.a", s->out, N);
  if (unlink(a) != 0 && errno != ENOENT) {
    fprintf(stderr, "%s: cannot replace %s: %s\n", cli_prog(), a,
            strerror(errno));
    exit(CLI_EXIT_FAILURE);
  }
  char **ar = kept[nkept++] = new_argv(s->nk + 8);
  char **shim = kept[nkept++] = new_argv(s->nk + 32);
  char **so = kept[nkept++] = new_argv(s->nk + 32);
  int na = 0, ns = split_words(s->cc, so, 0);
  ar[na++] = "ar";
  ar[na++] = "rcsD";
  ar[na++] = cli_printf("../lib/lib%s.a", N);
  const char *sof[] = {"-shared", "-fopenmp", "-Wl,-soname"};
  for (size_t f = 0; f < sizeof sof / sizeof *sof; f++)
    so[ns++] = (char *)sof[f];
  so[ns++] = cli_printf("-Wl,lib%s.so", N);
  so[ns++] = cli_printf("-Wl,--version-script=%s.map", N);
  so[ns++] = "-o";
  so[ns++] = cli_printf("../lib/lib%s.so", N);
  ar[na++] = so[ns++] = cli_printf("%s.o", N);
  for (int i = 0; i < s->nk; i++)
    ar[na++] = so[ns++] = cli_printf("%s_k%d.o", N, i);
  so[ns++] = "-ldl";
  so[ns++] = "-lm";
  /* The shim: the same objects behind the BLAS symbols. */
  int nh = split_words(s->cc, shim, 0);
  for (size_t f = 0; f < sizeof sof / sizeof *sof; f++)
    shim[nh++] = (char *)sof[f];
  shim[nh++] = cli_printf("-Wl,lib%s_blas.so", N);
  shim[nh++] = cli_printf("-Wl,--version-script=%s_blas.map", N);
  shim[nh++] = "-o";
  shim[nh++] = cli_printf("../lib/lib%s_blas.so", N);
  shim[nh++] = cli_printf("%s_blas.o", N);
  shim[nh++] = cli_printf("%s.o", N);
  for (int i = 0; i < s->nk; i++)
    shim[nh++] = cli_printf("%s_k%d.o", N, i);
  shim[nh++] = "-ldl";
  shim[nh++] = "-lm";
  job link[3] = {
      {cli_printf("lib%s.a", N), ar, cli_printf("%s/ar.log", src), 0},
      {cli_printf("lib%s.so", N), so, cli_printf("%s/ld.log", src), 0},
      {cli_printf("lib%s_blas.so", N), shim, cli_printf("%s/ld_blas.log", src),
       0}};
  run_jobs(src, link, 3, 3);
  /* The build's outputs that say nothing when all went well. */
  for (int i = 0; i < nj; i++)
    unlink(jobs[i].out);
  for (int i = 0; i < 3; i++)
    unlink(link[i].out);
  for (int i = 0; i < nkept; i++)
    free(kept[i]);
  free(kept);
  free(jobs);
}
