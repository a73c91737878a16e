/* Split-K (gemm_split.c) and what it needs of the kernel's route
 * (gemm_kernel.c): only those two files include this. */
#ifndef GMLP_GEMM_SPLIT_H
#define GMLP_GEMM_SPLIT_H

#include "ops/ops.h"

/* g on variant k of tiling t, profiled under label (NULL: k's). */
gmlp_status gmlp_gemm_launch(gmlp_context *ctx, const gmlp_gemm *g, const gmlp_kernel *k, const gmlp_tiling *t,
                             const char *label);
/* g on variant k of tiling t: split along k where GMLP_GEMM_SPLIT or the
 * device's split-K row says (unbatched products only), else one launch. */
gmlp_status gmlp_gemm_run(gmlp_context *ctx, const gmlp_gemm *g, const gmlp_kernel *k, const gmlp_tiling *t);
/* Releases the partial sums' buffers (the kernel backend's context_closed). */
void gmlp_gemm_split_close(gmlp_context *ctx);

#endif
