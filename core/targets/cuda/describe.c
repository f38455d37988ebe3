/* core/targets/cuda/describe.c - the describe text of the Tensor Core
 * template (heron__cuda_describe, template.h): its GEMM view, the rule
 * notes and the loop nest of every instruction path. */
#include "core/sched/rules.h"
#include "core/targets/cuda/template.h"

void heron__cuda_describe(const heron__template *t, heron__buf *out) {
  const heron__op *op = &t->op;
  const heron__cuda_sched *s = heron__cuda_sched_of(t);
  heron__buf_printf(out, "cuda (Tensor Core) template for %s (fp16) on %s\n",
                    op->name, t->hw.name[0] ? t->hw.name : "the GPU");
  static const char *const gname[] = {"batch", "M", "N", "K"};
  for (int q = 0; q < HERON__NGROUPS; q++) {
    char names[256];
    heron__gemm_group_names(op, &s->g[q], names, sizeof names);
    heron__buf_printf(out, "%s = %s (%lld, padded %lld)\n", gname[q], names,
                      (long long)s->g[q].extent, (long long)s->padded[q]);
  }
  heron__rule_notes_write(t->rules, t->nrules, out);
  heron__buf_puts(
      out,
      "stages: A.shared, B.shared (cache_read, compute-at shared_at), "
      "A/B wmma.matrix fragments, C.wmma.accumulator, C.shared "
      "(cache_write), C (global, epilogue inlined)\n"
      "loop nest:\n"
      "  blockIdx.x = (i.b, j.b), blockIdx.y = batch; threadIdx.y = (i.w, "
      "j.w) warps, threadIdx.x = 32 lanes\n"
      "    block_swz == G > 1: blockIdx.x walks groups of G rows of M tiles, "
      "down each group's rows first\n"
      "  acc[i.f x j.f] = 0\n"
      "  for ko < k.o\n"
      "    A.shared / B.shared <- chunk of k.m*k.f*wmma_k  (shared_at == 0)\n"
      "    for km < k.m  (unrolled when k.m <= 4^unroll)\n"
      "      A.shared / B.shared <- chunk of k.f*wmma_k  (shared_at == 1)\n"
      "      for kf < k.f, i < i.f, j < j.f: load_matrix_sync a, b; "
      "mma_sync\n"
      "  pipeline == S > 1: A.shared / B.shared rings of S chunk buffers at "
      "the loop of shared_at;\n"
      "    chunks 0 .. S-2 issued first (one cp.async group each), then per "
      "chunk c:\n"
      "    cp.async.wait_group S-2, barrier, issue chunk c+S-1 into slot "
      "(c+S-1) mod S\n"
      "    (cp.async, zero-fill when guarded out; S > 2 commits a group per "
      "chunk, empty past the end), mma\n"
      "  mma == 1 (sm_80+): the same loops on mma.sync.aligned.m16n8k16 "
      "pieces (each wmma tile\n"
      "    (wmma_m / 16) x (wmma_n / 8) of them): ldmatrix .x4/.x2 "
      "(.trans for an M/N-inner tile)\n"
      "    for a and b, mma.sync on per-lane fp32 accumulators, stored per "
      "lane to C.shared;\n"
      "    with 1 < k.f <= 16 two fragment sets ping-pong: step kf+1's "
      "ldmatrix before step kf's mma.sync\n"
      "    X.shared_swz == 1: X.shared's 16-byte chunks XOR-swizzled by row "
      "(heron__swz), pad 0;\n"
      "    its cooperative / cp.async stores and ldmatrix rows use the same "
      "address function\n");
  if (s->wg)
    heron__buf_puts(
        out,
        "  mma == 2 (sm_90a): i.w / 4 warpgroups along M, each a 64 x block.n "
        "tile of wgmma.m64nNk16\n"
        "    (N = block.n) from shared stages that TMA tile copies fill (zero "
        "outside the tensor):\n"
        "    thread 0 issues the first `pipeline` chunks of chunk.k, each "
        "completing an mbarrier;\n"
        "    per chunk: wait on its barrier, chunk.k / 16 wgmma (descriptors, "
        "swizzle span of the\n"
        "    box row), commit, wait_group 0, barrier, thread 0 refills the "
        "slot `pipeline` chunks on\n");
  if (s->ig.fits)
    heron__buf_puts(
        out,
        "  igemm == 1 (sliding windows): A.rows <- per row of the M tile its "
        "base offset and guarded\n"
        "    coordinates, once per block before the k loop; A's loads add "
        "only the K part (no\n"
        "    div / mod of the fused M index in the k loop); A vectors beyond "
        "the index map's copy\n"
        "    2V bytes where both ends pass the guards and the address is "
        "aligned, else element-wise\n");
  heron__buf_puts(
      out, "  C.shared <- store_matrix_sync(acc)  (reuses the A/B space)\n"
           "  C <- C.shared, out.vec halves per thread, epilogue inlined\n");
  if (s->split_k >= 0)
    heron__buf_puts(
        out,
        "  split_k == S > 1: blockIdx.z = split z runs k.o / S of the k.o "
        "chunks; each block writes\n"
        "    its fp32 partial tile from C.shared to the module's workspace, "
        "the last block of the\n"
        "    tile (a counter per tile) sums the S partials in split order and "
        "stores C\n");
}
