/* tools/ranks.h - heron-search and heron-bench across MPI ranks
 * (tools/ranks.c).
 *
 * Under `mpirun -n N` (or srun) with N > 1, heron-search's rank 0 runs the
 * search (the strategy, the model, the history, the log) and ranks 1..N-1
 * measure: each opens a heron_measurer (its own runner, isolated worker
 * processes, the timeout) and answers the configs rank 0 sends it, one at
 * a time, as it becomes free.  heron-bench's ranks take its runs.  With one
 * rank, or without mpirun, nothing here starts MPI and the tools behave as they
 * always did.
 *
 * Built with MPI when CMake finds it (HERON_HAVE_MPI); without it the same
 * functions exist, a job of several ranks is refused with what to do, and
 * the MPI flags (--allow-mixed, --rank-timeout) say they need it.
 */
#ifndef HERON_TOOLS_RANKS_H
#define HERON_TOOLS_RANKS_H

#include "heron/heron.h"

/* The default of --rank-timeout: seconds a measuring rank may take to
 * answer one candidate (its build, its run, the reference on the first)
 * before rank 0 counts it as lost. */
#define CLI_MPI_RANK_TIMEOUT_DEFAULT 600.0

/* 1 when this binary was built with MPI. */
int cli_mpi_built(void);

/* Starts MPI when the process was launched by mpirun or srun with more than
 * one rank (read from the launcher's environment: a plain run starts
 * nothing).  Returns the number of ranks (1 when not distributed) and this
 * rank in *rank (0).  Built without MPI and launched with several ranks:
 * a usage error (exit 2) on every rank. */
int cli_mpi_start(int *argc, char ***argv, int *rank);

/* The number of ranks cli_mpi_start found (1 when not distributed). */
int cli_mpi_size(void);

/* heron-search, every rank, collectively: each reports what it detected
 * itself, whatever --hw says (for the cpu and amx targets its CPU model and
 * instruction-set level as the library detects them, HERON_CPU_ISA's cap
 * included; for a GPU target the GPU it will use, its name and compute
 * capability, probed in a child process; nothing for replay, which
 * measures nothing on the ranks' machines) and the hardware task t was
 * built for (heron_task_describe's "hardware:", the --hw description's
 * name when given).  The CPU and the task's hardware must agree with rank
 * 0's; the GPU among the measuring ranks (rank 0 only searches, often on a
 * node without a GPU).  A difference is refused on every rank (exit 2),
 * naming both ranks, their hosts and what each has, unless allow_mixed
 * (then a warning). */
void cli_mpi_check_hardware(const heron_task *t, int allow_mixed);

/* heron-bench, every rank, collectively: every rank runs kernels, so each
 * reports its CPU (when cpu: a task of the suite runs on the cpu or amx
 * target) and its GPU (when gpu: one runs on a GPU target), as
 * cli_mpi_check_hardware detects them, and a rank that differs from rank
 * 0 is refused on every rank (exit 2) unless allow_mixed. */
void cli_mpi_check_machines(int cpu, int gpu, int allow_mixed);

/* A measuring rank (rank > 0): opens a heron_measurer for t with m (seed:
 * the run's, for a replay task's surrogate), tells
 * rank 0 whether that worked, then measures what rank 0 sends until it
 * says stop.  Ends MPI and returns the process's exit status. */
int cli_mpi_measure_for_rank0(const heron_task *t,
                              const heron_measure_options *m, uint64_t seed);

/* Rank 0: waits until every measuring rank is ready (a rank that could not
 * open its measurer ends the job, exit 1, with its reason), then sets
 * o->remote so heron_tune's rounds are measured by the other ranks.
 * rank_timeout_s: see CLI_MPI_RANK_TIMEOUT_DEFAULT. */
void cli_mpi_search_on_ranks(heron_tune_options *o, const heron_task *t,
                             double rank_timeout_s);

/* Rank 0 at the end: tells the measuring ranks to stop and ends MPI.  When
 * a rank was lost, the process exits here with `status`, or 1 when status
 * is 0 (the log and summary were written before): when every lost rank's
 * process has ended, after telling the others to end, without
 * MPI_Finalize (whose fence may wait for the lost rank forever); else (a
 * rank that stopped answering may still be running) with MPI_Abort. */
void cli_mpi_finish(int status);

/* This process's rank (0 when not distributed). */
int cli_mpi_rank(void);

/* Every rank, collectively: waits until all ranks are here. */
void cli_mpi_barrier(void);

/* heron-bench: every rank, collectively, after running its share of the
 * comparison (the runs it claimed): sums each rank's complete and failed
 * counts into rank 0's and takes the first stop signal any rank saw.
 * Ranks other than 0 then end MPI.  Rank 0 waits for the others without
 * spinning, and counts a rank whose process ended before it reported as
 * one failed run. */
void cli_mpi_bench_gather(int *complete, int *failed, int *stopped);

/* Rank 0 at the very end (heron-bench): ends MPI (only returns after a
 * rank was lost: see cli_mpi_finish). */
void cli_mpi_end(void);

#endif
