/* GEMMs: the library's kernel (gemm_kernel.c), or CLBlast for float operands
 * when the context chose it, followed by the epilogue as a kernel of its own. */
#include <clblast_c.h>

#include "cl/clerr.h"
#include "ops/ops.h"

static int has_epilogue(const gmlp_epilogue *epi)
{
    return epi && (epi->bias || epi->gelu || epi->mul);
}

gmlp_status gmlp_op_gemm(gmlp_context *ctx, size_t m, size_t n, size_t k, gmlp_mat a, gmlp_mat b, float beta,
                         gmlp_mat c, size_t batch, const gmlp_epilogue *epi)
{
    if (ctx->gemm_backend != GMLP_GEMM_CLBLAST || a.half || b.half || c.half)
        return gmlp_op_gemm_kernel(ctx, m, n, k, a, b, beta, c, batch, epi);
    if (m == 0 || n == 0 || batch == 0)
        return GMLP_OK;
    CLBlastTranspose ta = a.trans ? CLBlastTransposeYes : CLBlastTransposeNo;
    CLBlastTranspose tb = b.trans ? CLBlastTransposeYes : CLBlastTransposeNo;
    CLBlastStatusCode s;
    gmlp_clblast_lock();
    if (batch == 1)
        s = CLBlastSgemm(CLBlastLayoutRowMajor, ta, tb, m, n, k, 1.0f, a.buf, a.off, a.ld, b.buf, b.off, b.ld, beta,
                         c.buf, c.off, c.ld, &ctx->queue, NULL);
    else
        s = CLBlastSgemmStridedBatched(CLBlastLayoutRowMajor, ta, tb, m, n, k, 1.0f, a.buf, a.off, a.ld, a.stride,
                                       b.buf, b.off, b.ld, b.stride, beta, c.buf, c.off, c.ld, c.stride, batch,
                                       &ctx->queue, NULL);
    gmlp_clblast_unlock();
    if (s != CLBlastSuccess)
        return gmlp_ctx_fail(ctx, s == CLBlastOpenCLOutOfResources ? GMLP_ERR_DEVICE_MEMORY : GMLP_ERR_OPENCL,
                             "CLBlastSgemm%s(m=%zu n=%zu k=%zu batch=%zu) failed: %s (%d)",
                             batch == 1 ? "" : "StridedBatched", m, n, k, batch, gmlp_clblast_error_name(s), (int)s);
    return has_epilogue(epi) ? gmlp_op_epilogue(ctx, m, n, c, batch, epi) : GMLP_OK;
}
