/* tools/ranks_mpi.h - what tools/ranks.c shares with tools/ranks_hw.c in a
 * build with MPI (tools/ranks.h is the tools' interface to both). */
#ifndef HERON_TOOLS_RANKS_MPI_H
#define HERON_TOOLS_RANKS_MPI_H

/* The host name rank r reported when MPI started. */
const char *ranks_host(int r);

/* Each measuring rank's GPU (heron-search, before the hardware is
 * compared, so each reports the GPU it will use): CUDA_VISIBLE_DEVICES =
 * local rank modulo the node's GPUs (counted by the driver or given by
 * HERON_GPUS_PER_NODE), unless the launcher bound one already. */
void ranks_bind_gpu(void);

#endif /* HERON_TOOLS_RANKS_MPI_H */
