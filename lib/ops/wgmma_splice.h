/* Hopper's warp-group matrix instruction (wgmma) from OpenCL C, by splicing
 * the PTX (issue #53): NVIDIA's OpenCL compiler writes `.target sm_90`, and
 * wgmma needs `sm_90a`, so a kernel marks each place with an inline-asm
 * comment that carries the real operands (the compiler allocates their
 * registers), the program is built, its PTX read back, and this splice
 * rewrites the target and puts the instructions in; the program is then
 * rebuilt from the PTX text.
 *
 * A marker is one PTX comment line, as `__asm__ volatile("// gmlp.wgmma.v1
 * ..." : operands)` writes it with the operands substituted:
 *   // gmlp.wgmma.v1 fence                      wgmma.fence.sync.aligned
 *   // gmlp.wgmma.v1 proxy                      fence.proxy.async.shared::cta (the
 *       work-item's writes of local memory made visible to wgmma's reads)
 *   // gmlp.wgmma.v1 commit                     wgmma.commit_group.sync.aligned
 *   // gmlp.wgmma.v1 wait N                     wgmma.wait_group.sync.aligned N (0-7)
 *   // gmlp.wgmma.v1 mma m64nNk16.f32.T.T {d0, .., d(N/2-1)}, adesc, bdesc, TA, TB
 *       wgmma.mma_async.sync.aligned: D += A B, A and B in local memory by
 *       their 64-bit descriptors, T bf16 or f16, N 8 to 256 by 8, TA and TB
 *       (0 or 1) the operands' transposes; every accumulator a "+f" operand
 *       of the asm (separate out and in operands read stale values once
 *       unrolled).
 * The splice refuses what it does not recognise rather than leave a kernel
 * that computes zeros: no marker, a malformed one, a target other than
 * sm_90 (or sm_90a), PTX older than ISA 7.0 or without a .version. */
#ifndef GMLP_WGMMA_SPLICE_H
#define GMLP_WGMMA_SPLICE_H

#include <stdbool.h>
#include <stddef.h>

#include "cl/program.h"
#include "core/error.h"

/* The splice's version: the kernel cache and the engines' verdicts are
 * keyed by it (the wgmma rows' -DGMLP_MMA_WGMMA=version), so that a changed
 * splice never meets an old entry; the markers' "v1" is its text. */
#define GMLP_WGMMA_SPLICE_VERSION 1

/* ptx (len bytes, NUL-terminated or not) spliced into *out (NUL-terminated,
 * *out_len bytes without the NUL; the caller frees it), its `.target`
 * sm_90a and its `.version` at least 8.0; *mmas the mma markers replaced.
 * GMLP_ERR_BUILD naming the line for a marker or PTX it does not recognise,
 * GMLP_ERR_UNSUPPORTED for another target, GMLP_ERR_HOST_MEMORY. */
gmlp_status gmlp_wgmma_splice(gmlp_error *err, const char *ptx, size_t len, char **out, size_t *out_len,
                              size_t *mmas);

/* The splice as the program builder's rewrite (cl/program.h): the programs
 * of the wgmma rows (gemm_kernel.c), cached spliced. */
extern const gmlp_program_rewrite gmlp_wgmma_rewrite;

/* Whether ptx (len bytes) is spliced: sm_90a, a wgmma.mma_async in it and
 * no marker left (a cached program is refused on load otherwise). */
bool gmlp_wgmma_is_spliced(const char *ptx, size_t len);

#endif
