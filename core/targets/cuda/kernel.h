/* core/targets/cuda/kernel.h - the contract of a generated CUDA kernel, shared
 * by the code generator (core/targets/cuda/codegen.c), the prelude that
 * gives the kernel's macros their meaning (core/targets/cuda/prelude.c), the
 * NVRTC build and the driver-API runner (core/measure/).  Internal.
 *
 * One generated source is both a CUDA kernel and, compiled by the host C
 * compiler with -DHERON_EMULATE, a C program that runs the same lowered loop
 * nest on the CPU (the "CPU check" of docs/targets/cuda.md).  To make that
 * possible the body is written in a small dialect of macros, every one of
 * which has a CUDA meaning and an emulation meaning:
 *
 * Source layout, in this order:
 *
 *   line 1:  / * heron-cuda grid GX GY GZ block BX BY BZ smem BYTES * /
 *            (without the spaces inside the comment markers, i.e. the
 *            comment opener, one blank, "heron-cuda grid 4 4 1 block 128 1
 *            1 smem 16384", one blank, the closer) - the launch, written by
 *            heron__cuda_launch_format, read back by heron__cuda_launch_parse
 *   line 2, only in a TMA kernel (the wgmma path, sm_90a):
 *            / * heron-cuda tmaps in0 I O R BI BO S in1 I O R BI BO S * /
 *            its tensor maps tmap_a and tmap_b (heron__cuda_tmap_spec:
 *            the input, inner and outer extents, row bytes, box, swizzle
 *            span), which the runner makes with heron__cuda_tmap_2d and
 *            passes after (in0, in1, out, bias); heron__cuda_tmaps_format
 *   the include block (heron__cuda_includes()): identical in every kernel,
 *            as NVRTC's precompiled headers (-pch) would need
 *   #define HERON_THREADS  (BX * BY * BZ)
 *   #define HERON_GRID_X / _Y / _Z, HERON_BLOCK_X / _Y / _Z
 *   #define HERON_SMEM_BYTES  dynamic shared bytes (the shared-memory plan)
 *   #define HERON_WM / HERON_WN / HERON_WK   the wmma shape (e.g. 16 16 16)
 *   #define HERON_IN0_ELEMS / HERON_IN1_ELEMS / HERON_OUT_ELEMS /
 *           HERON_BIAS_ELEMS   element counts of the buffers (bias 0: none)
 *   #define HERON_SPLIT_K / _TILES / _WS_ELEMS   only with split_k > 1
 *   the prelude text (heron__cuda_prelude()), then, in a kernel with
 *            asynchronous copies only, heron__cuda_prelude_async(),
 *            in a kernel of the mma.sync path only,
 *            heron__cuda_prelude_mma(), and in a split-K kernel only,
 *            heron__cuda_prelude_split()
 *   HERON_KERNEL(heron_cuda_kernel) { ... body in the dialect ... }
 *   HERON_EMU_ENTRY(heron_cuda_kernel)
 *
 * The kernel's parameters are always (in0, in1, out, bias): the op's two
 * inputs, its output and the bias (NULL when the op has no bias epilogue),
 * all `heron_half` (fp16) in the op's own layouts.  The kernel writes every
 * output element exactly once (never accumulates onto what was there; a
 * split-K kernel sums its partials in its own workspace, and only the
 * last block of a tile stores it).
 *
 * The dialect (the body may also use plain C: int / long long arithmetic,
 * for loops, if, float, and `#pragma unroll N` lines, which the host
 * compiler ignores):
 *
 *   heron_half              fp16 storage type (__half; _Float16 on the host)
 *   HERON_H2F(h), HERON_F2H(f)      conversions half <-> float
 *   HERON_TX, HERON_TY, HERON_TZ    threadIdx.x/.y/.z as int
 *   HERON_BX, HERON_BY, HERON_BZ    blockIdx.x/.y/.z as int
 *   HERON_SYNC()                    __syncthreads()
 *   HERON_SMEM_DECL                 first statement of the body: declares
 *                                   `unsigned char *heron_smem`, the base of
 *                                   the dynamic shared memory (128-byte
 *                                   aligned, HERON_SMEM_BYTES long); written
 *                                   with or without a trailing semicolon
 *   The macros are valid only inside the HERON_KERNEL body (the emulation
 *   passes the thread's state to it as a hidden parameter).
 *
 *   Global <-> shared copies (all pointers / indices in elements; V is an
 *   integer constant expression, a template argument in CUDA):
 *   HERON_GCOPY(dst, base, idx, V, ELEMS)
 *       copies V (1, 2, 4 or 8) halves from base[idx..idx+V) to the shared
 *       pointer dst as one access of 2V bytes; both addresses must be 2V-byte
 *       aligned, 0 <= idx, idx+V <= ELEMS and dst[0..V) inside the shared
 *       plan (the emulation checks all of them)
 *   HERON_GLOAD1(dst, base, idx, ELEMS, cond)
 *       *dst = cond ? base[idx] : 0 (base and idx are only evaluated when
 *       cond holds, and then 0 <= idx < ELEMS must hold); dst is a local or
 *       a shared element (then inside the plan)
 *   HERON_GSTORE(base, idx, ELEMS, src, V)
 *       stores V halves src[0..V) (a local heron_half array) to base[idx..)
 *       as one 2V-byte access: the global address must be 2V-byte aligned
 *       (src need not be), 0 <= idx, idx+V <= ELEMS, and base[idx..idx+V)
 *       must lie inside out.  The emulation also checks that HERON_GSTORE
 *       writes every element of out exactly once, so all of the kernel's
 *       output goes through it.
 *   Asynchronous copies, defined by heron__cuda_prelude_async(), which a
 *   kernel that uses them pastes after the prelude:
 *   HERON_CP_ASYNC(dst, base, idx, V, ELEMS, cond)
 *       an asynchronous copy of V (2, 4 or 8) halves, 2V bytes: when cond
 *       holds, base[idx..idx+V) to the shared dst under HERON_GCOPY's rules;
 *       otherwise dst[0..V) = 0 and base[idx] is not read.  CUDA (sm_80+):
 *       cp.async.ca (4, 8 bytes) or .cg (16 bytes) with src-size 0 for the
 *       zero fill; the data is there only after HERON_CP_WAIT and visible to
 *       other threads only after a HERON_SYNC following it.  Emulation: a
 *       synchronous, checked copy, recorded as pending on its shared bytes
 *       (with this thread's open group) until a HERON_CP_WAIT of this
 *       thread completes the group; a copy onto pending bytes aborts.
 *   HERON_CP_COMMIT()   closes the group of this thread's copies issued
 *       since the last commit (cp.async.commit_group; a group may be
 *       empty, and counts like any other); emulation: counts the group
 *   HERON_CP_WAIT(N)    waits until at most N (a constant) of this thread's
 *       committed groups are pending (cp.async.wait_group N); copies not
 *       yet committed stay pending.  Emulation: completes this thread's
 *       copies of every group but the N committed last.  A fragment load
 *       (HERON_LOAD_A/_B, HERON_LDMATRIX_A/_B) reading, or a
 *       HERON_STORE_ACC / HERON_MSTORE_ACC writing, shared bytes that
 *       are still pending aborts ("read of shared memory whose cp.async
 *       group is still pending"), so a wait count too loose for the
 *       pipeline fails on the CPU.  Plain-C reads of shared memory are
 *       not checked.
 *   The generated pipeline with S stages (the pipeline knob) issues
 *   chunks 0 .. S-2 (one group each) before its loop and, at chunk c,
 *   HERON_CP_WAIT(S - 2); HERON_SYNC(); issues chunk c + S - 1 into ring
 *   slot (c + S - 1) mod S and commits (a group per chunk when S > 2,
 *   empty past the last chunk, so that the count S - 2 holds to the end).
 *
 *   Tensor Core fragments (shape HERON_WM x HERON_WN x HERON_WK; LAYOUT is
 *   the literal token row or col, pasted onto a name, so not a macro; a
 *   load names the layout its fragment was declared with, and NVRTC rejects
 *   a mismatch.  The HERON_FRAG_* declarations are statements of their own:
 *   in the emulation each is two statements, so never the body of an
 *   unbraced if or for):
 *   HERON_FRAG_A(name, COUNT, LAYOUT);   COUNT matrix_a fragments name[COUNT]
 *   HERON_FRAG_B(name, COUNT, LAYOUT);   COUNT matrix_b fragments
 *   HERON_FRAG_ACC(name, COUNT);         COUNT fp32 accumulator fragments
 *   HERON_FILL_ZERO(acc)                 acc = 0 (one fragment, e.g. c[i])
 *   HERON_LOAD_A(frag, ptr, ldm, LAYOUT) frag = the WM x WK tile at the
 *       shared pointer ptr; row: element (m, k) at ptr[m*ldm + k], col: at
 *       ptr[k*ldm + m].  ptr 32-byte aligned, ldm a multiple of 8.
 *   HERON_LOAD_B(frag, ptr, ldm, LAYOUT) the WK x WN tile; row: (k, n) at
 *       ptr[k*ldm + n], col: at ptr[n*ldm + k]
 *   HERON_MMA(acc, a, b)                 acc += a * b (fp32 accumulation)
 *   HERON_STORE_ACC(ptr, acc, ldm, LAYOUT) stores the WM x WN fp32 tile to
 *       the shared float pointer ptr; row: (m, n) at ptr[m*ldm + n], col: at
 *       ptr[n*ldm + m].  ptr 32-byte aligned, ldm a multiple of 4.
 *   mma.sync path (sm_80+), defined by heron__cuda_prelude_mma(), which a
 *   kernel that uses it pastes after the prelude (and the asynchronous
 *   copies).  The HERON_WM x HERON_WN tile (WM 16 or 32, WN a multiple of
 *   8, WK 16) is (WM / 16) x (WN / 8) pieces of
 *   mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32; fragments are
 *   per-lane registers as the PTX ISA lays them out (sections "Matrix
 *   Fragments for mma.m16n8k16 with floating point type" and "ldmatrix"):
 *   HERON_MFRAG_A(name, COUNT);   COUNT A fragments, WM / 16 * 4 .b32
 *       registers per lane (a0..a7 of each m16 piece)
 *   HERON_MFRAG_B(name, COUNT);   WN / 8 * 2 registers per lane
 *   HERON_MFRAG_ACC(name, COUNT); WM / 16 * WN / 8 * 4 fp32 per lane; lane
 *       l holds rows l / 4 and l / 4 + 8, columns (l % 4) * 2 and + 1 of
 *       each m16n8 piece
 *   HERON_MFILL_ZERO(acc)         acc = 0
 *   HERON_LDMATRIX_A(frag, ptr, ldm, LAYOUT)  the WM x 16 tile at the
 *       shared ptr, element (m, k) at ptr[m*ldm + k] (row: ldmatrix .x4)
 *       or ptr[k*ldm + m] (col: .x4.trans); every 8-half row 16-byte
 *       aligned (ptr 16-byte aligned, ldm a multiple of 8)
 *   HERON_LDMATRIX_B(frag, ptr, ldm, LAYOUT)  the 16 x WN tile, (k, n) at
 *       ptr[n*ldm + k] (col: .x4, .x2 for a last n8 piece) or ptr[k*ldm +
 *       n] (row: .trans)
 *   HERON_LDMATRIX_A_SWZ(frag, base, off, ldm, LAYOUT),
 *   HERON_LDMATRIX_B_SWZ(frag, base, off, ldm, LAYOUT)  the same tiles
 *       from an XOR-swizzled shared buffer (the knobs A/B.shared_swz):
 *       base is the buffer (or its pipeline slot), off the tile's
 *       unswizzled element offset row * ldm + col in it; each lane's
 *       row address is base + heron__swz_at(off + its row offset, ldm, 1).
 *       heron__swz(row, col, ldm), the element offset of (row, col) in a
 *       swizzled buffer (chunk (col / 8) ^ key of the row, key = (row /
 *       (8 / per)) % per, per = min(ldm / 8, 8); ldm 8, 16, 32 or a
 *       multiple of 64), is also what the generated stores into such a
 *       buffer use: one function for every access, in both branches.
 *   HERON_MMA_SYNC(acc, a, b)     acc += a * b, one mma.sync per piece
 *       (the generator declares two sets of a and b fragments when a
 *       chunk has 2..16 k-steps, and loads step kf + 1's set before step
 *       kf's HERON_MMA_SYNC: the ldmatrix of the next step overlaps this
 *       one's Tensor Core work)
 *   HERON_MSTORE_ACC(ptr, acc, ldm, LAYOUT)  each lane stores its own
 *       floats to the shared float ptr; row: (m, n) at ptr[m*ldm + n], col:
 *       at ptr[n*ldm + m]
 *   Split-K (the knob split_k = S > 1), defined by
 *   heron__cuda_prelude_split(), which a kernel that uses it pastes last;
 *   the kernel defines HERON_SPLIT_K (S), HERON_SPLIT_TILES (output tiles:
 *   grid x * grid y) and HERON_SPLIT_WS_ELEMS (floats of the workspace)
 *   before the prelude.  The workspace and one counter per tile are arrays
 *   of the module (__device__; static in the emulation), zero at load:
 *   the kernel keeps its parameters and its single launch.
 *   HERON_WS_PUT4(idx, src)   stores 4 floats of the shared src (16-byte
 *       aligned) to workspace[idx..idx+4) (idx a multiple of 4), past L1
 *   HERON_SPLIT_LAST(tile)    block-collective: fences this thread's
 *       workspace stores, barrier, the block's first thread counts the
 *       block in at tile's counter, and a barrier that ORs: nonzero in
 *       every thread of the block that counted the S-th (the tile's last
 *       split), which also resets the counter to 0 for the next launch
 *   HERON_WS_SUM4(dst, idx, STRIDE)  dst[0..4) (shared, 16-byte aligned)
 *       = workspace[idx + z * STRIDE ..] summed over z = 0 .. S-1 in that
 *       order, read past L1
 *   The emulation aborts on a partial written twice before its sum, a sum
 *   of a partial not written since the last sum, or a counter past S.
 *   The per-lane ldmatrix row address (heron__ldm_row) and accumulator
 *   position (heron__macc_m / _n) are one text that both meanings use.
 *   In the emulation each thread holds the registers of all 32 lanes of
 *   its warp ([32][regs]): the arguments are warp-uniform, so it computes
 *   every lane's row address, places each half in the lane and register
 *   half that the ISA's ldmatrix names, and runs mma.sync from the 32
 *   lanes' registers by the ISA's A, B and C/D layouts.
 *   Fragment operations are warp-collective: every lane of a warp executes
 *   them with the same arguments.  The emulation checks that every lane of
 *   a warp runs the same fragment operations (shared pointers, ldm,
 *   layouts, source lines) between two barriers, and that only whole warps
 *   use fragments.
 *   wgmma path (sm_90a; NVRTC needs --gpu-architecture=sm_90a), written
 *   by heron__cuda_prelude_wgmma(b, N) after the other preludes for the
 *   kernel's m64nNk16 (N a multiple of 8 from 8 to 256, also defined as
 *   HERON_WG_N before the prelude; HERON_WG_TRANS_A / _B 1 for an
 *   MN-major operand, 0 or undefined for K-major).  Not yet run on a GPU:
 *   HERON_KERNEL_TMA(name) / HERON_EMU_ENTRY_TMA(name)  HERON_KERNEL and
 *       HERON_EMU_ENTRY with two more parameters, the tensor maps
 *       `heron_tmap tmap_a, tmap_b` (by value, __grid_constant__); the
 *       emulation's heron_kernel takes them as bufs[4] and bufs[5] (with
 *       HERON_TMAP_A / _B defined, the template's kernels, heron_kernel
 *       takes the op's buffers only and encodes the maps these state
 *       over them, and heron_kernel_tma takes them as bufs[4], bufs[5]),
 *       in its own format: q[0] the global address, q[1] / q[2] the extents
 *       of a 2-D fp16 tensor (innermost first), q[3] the row stride in
 *       bytes, q[4] / q[5] the box, q[6] the swizzle span in bytes (0, 32,
 *       64, 128), q[7] 0x70616d74726568 ("hertmap")
 *   HERON_SMEM_ADDR(p)            the shared-window address of a shared
 *       pointer (unsigned; the emulation's window starts at the plan)
 *   HERON_WG_ACC(name);           the accumulator, N / 2 fp32 per lane:
 *       warp w of the warpgroup holds rows 16w .. 16w + 15, lane l in
 *       register i row 16w + l / 4 + 8 * (i / 2 % 2), column 8 * (i / 4) +
 *       2 * (l % 4) + i % 2 (name must be an identifier)
 *   HERON_WG_FILL_ZERO(acc), HERON_WG_STORE_ACC(ptr, acc, ldm)  acc = 0;
 *       each lane's floats to the shared float ptr, (m, n) at ptr[m*ldm+n]
 *   HERON_WG_DESC(p, lbo, sbo, swz)  the matrix descriptor of the
 *       operand at the shared p: leading / stride byte offsets, swizzle
 *       span swz in bytes.  K-major: 0, core matrices of 8 rows of 16
 *       bytes, the two along k16 lbo apart, 8-row groups sbo apart; 32,
 *       64, 128: rows of swz bytes, 8-row groups sbo apart, lbo unused.
 *       MN-major (swizzled only): rows of swz bytes along M / N, one per
 *       k, the two 8-row groups of k16 sbo apart, the next swz / 2
 *       elements of M / N lbo apart
 *   HERON_WG_FENCE(acc), HERON_WG_MMA(acc, desc_a, desc_b),
 *   HERON_WG_COMMIT(acc), HERON_WG_WAIT(acc, N)  wgmma.fence,
 *       wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16 (acc += A * B,
 *       A 64 x 16, B N x 16, both K-major), commit_group, wait_group N;
 *       warpgroup-collective (128 threads)
 *   HERON_MBAR_INIT(bar, count), HERON_MBAR_FENCE_INIT(),
 *   HERON_MBAR_EXPECT_TX(bar, bytes), HERON_MBAR_WAIT(bar, parity)  an
 *       mbarrier (8 shared bytes): init, the init fence, arrive with
 *       expect_tx, spin on try_wait.parity
 *   HERON_TMA_LOAD_2D(dst, map, c0, c1, bar)  the map's box at
 *       coordinates (c0, c1) (innermost first) into the shared dst, rows
 *       packed, swizzled by the map's mode; completes its bytes on bar
 *   The emulation runs each wgmma when issued, from the shared bytes the
 *   descriptors name (decoded from their bits, through the canonical
 *   layout and the address swizzle, so a wrong descriptor reads wrong
 *   values), each thread for its warp's 16 rows and 32 lanes; it fails an
 *   accumulator touched while a wgmma group is in flight or a wgmma
 *   without a fence since, a wait on an mbarrier phase that has not
 *   completed (the threads run in turn, so the arrivals and copies must
 *   come first in thread order), and TMA boxes it does not model.
 *
 * Emulation (HERON_EMULATE): HERON_EMU_ENTRY defines the exported
 *     void heron_kernel(void *const *bufs)
 * of the cpu target's contract (core/sched/sched.h: bufs = in0, in1, out,
 * bias), which runs the whole grid: blocks one after another, and in each
 * block every thread as a coroutine (ucontext) that runs until its next
 * HERON_SYNC, thread by thread; the block's shared memory is one buffer of
 * HERON_SMEM_BYTES.  Each thread holds whole fragments and does the wmma
 * operations in scalar code.  The shared memory is filled with 0xff bytes
 * (NaN as fp16 and as fp32) at the start of every block and fragments are
 * declared full of NaN, so reading what was never written shows up as a
 * wrong result; a plain-C access just past the end of the plan faults (a
 * guard page) and a plain-C write before its start is reported when the
 * block ends.  A broken rule of the dialect (misaligned or out-of-range
 * access, shared access outside the plan, threads that reach a different
 * number of barriers, lanes of a warp that disagree on a fragment
 * operation, an output element not written exactly once) prints
 * "heron-emulate: <what>" to stderr and aborts, so the CPU check reports it
 * as a runtime error.  Nothing in the emulation is global but heron_kernel,
 * so several emulated kernels can be loaded into one process.
 *
 * Bank census (HERON_EMULATE and HERON_EMU_BANKS): the emulation also
 * counts, for every phase of every ldmatrix (8 lanes' 16-byte rows, taken
 * by lane 0 of the warp) and of every 16-byte shared store (HERON_GCOPY
 * or HERON_CP_ASYNC of 8 halves: the 8 lanes of a quarter warp at one
 * instance of one source line between two barriers), whether the 8
 * addresses cover the 32 four-byte banks once, and heron_kernel prints
 * "heron-banks: ldmatrix phases P conflicted C extra E; stores phases P
 * conflicted C extra E" to stderr when it ends (E: the extra wavefronts,
 * the largest multiplicity of a 16-byte bank group less one, summed).
 */
#ifndef HERON_CORE_CODEGEN_CUDA_KERNEL_H
#define HERON_CORE_CODEGEN_CUDA_KERNEL_H

#include <stdint.h>

/* The name of the __global__ function in every generated source. */
#define HERON__CUDA_KERNEL_NAME "heron_cuda_kernel"

/* A kernel's launch geometry and dynamic shared memory. */
/* The tensor map a TMA kernel (HERON_KERNEL_TMA) takes as a parameter,
 * as line 2 of its source states it: over op input `input` (0 or 1), a
 * row-major fp16 matrix of `outer` rows of `inner` elements, `row_bytes`
 * apart; boxes of box_inner x box_outer elements, swizzle span swz bytes
 * (heron__cuda_tmap_2d's arguments). */
typedef struct heron__cuda_tmap_spec {
  int input;
  int box_inner, box_outer, swz;
  int64_t inner, outer, row_bytes;
} heron__cuda_tmap_spec;

/* A kernel's launch geometry and dynamic shared memory; a TMA kernel's
 * (the sm_90a path) also its two tensor maps, tmap_a and tmap_b (ntmaps 2;
 * 0 in every other kernel). */
typedef struct heron__cuda_launch {
  int grid[3];
  int block[3];
  int64_t smem_bytes;
  int ntmaps;
  heron__cuda_tmap_spec tmap[2];
} heron__cuda_launch;

/* The prelude text that defines the dialect above for both CUDA (NVRTC) and
 * the host emulation.  Static. */
const char *heron__cuda_prelude(void);

/* The definitions of HERON_CP_ASYNC / COMMIT / WAIT, for both branches;
 * pasted right after heron__cuda_prelude() only by kernels that use them.
 * Static. */
const char *heron__cuda_prelude_async(void);

/* The definitions of the mma.sync path (HERON_MFRAG_*, HERON_LDMATRIX_*,
 * HERON_MMA_SYNC, HERON_MFILL_ZERO, HERON_MSTORE_ACC), for both branches;
 * pasted after heron__cuda_prelude() (and heron__cuda_prelude_async())
 * only by kernels that use them.  Static. */
const char *heron__cuda_prelude_mma(void);

/* The split-K workspace and reduction (HERON_WS_PUT4, HERON_WS_SUM4,
 * HERON_SPLIT_LAST), for both branches; pasted last, only by kernels of
 * split_k > 1, which define HERON_SPLIT_K, HERON_SPLIT_TILES and
 * HERON_SPLIT_WS_ELEMS before the prelude.  Static. */
const char *heron__cuda_prelude_split(void);

/* Appends the definitions of the wgmma path (HERON_WG_*, HERON_MBAR_*,
 * HERON_TMA_LOAD_2D, HERON_KERNEL_TMA), for both branches, written for
 * m64nNk16 with N = n (a multiple of 8 from 8 to 256), to b; pasted after
 * the other preludes by kernels that use them. */
struct heron__buf;
void heron__cuda_prelude_wgmma(struct heron__buf *b, int n);

/* The include block every generated source starts with (after line 1).
 * Static. */
const char *heron__cuda_includes(void);

/* Reads the launch from line 1 of a generated source, and the tensor maps
 * from line 2 when it is a "heron-cuda tmaps" line (ntmaps 0 otherwise).
 * 0 on success, -1 when line 1 is missing or malformed, or line 2 starts
 * a tmaps line that is malformed. */
int heron__cuda_launch_parse(const char *src, heron__cuda_launch *l);

/* Writes line 1 ("/ * heron-cuda grid ... * /" and a newline, without the
 * inner spaces) into buf[cap]; returns the length as snprintf does. */
int heron__cuda_launch_format(const heron__cuda_launch *l, char *buf, int cap);

/* Writes line 2 of a TMA kernel ("/ * heron-cuda tmaps in0 INNER OUTER
 * ROW_BYTES BOX_INNER BOX_OUTER SWZ in1 ... * /" and a newline, without
 * the inner spaces: l's two maps) into buf[cap]; returns the length as
 * snprintf does.  A source with this line is built for sm_90a. */
int heron__cuda_tmaps_format(const heron__cuda_launch *l, char *buf, int cap);

/* The host compiler flags that build a generated source as the emulation
 * .so (the cpu target's contract); static. */
#define HERON__CUDA_EMU_CFLAGS                                                 \
  "-O1 -g0 -fPIC -shared -x c -std=gnu11 -DHERON_EMULATE "                     \
  "-fno-strict-aliasing -Wno-unknown-pragmas"

#endif
