/* Float GEMMs on CLBlast (GMLP_GEMM_CLBLAST, the reference path), then the
 * epilogue as a kernel of its own: a GEMM backend (gemm_backend.c).  The only
 * file that calls CLBlast, built only where meson finds it (-Dclblast). */
#include <clblast_c.h>
#include <pthread.h>
#include <stdlib.h>

#include "cl/clerr.h"
#include "core/alloc.h"
#include "ops/gemm_backend.h"

/* CLBlast 1.5.3 races when two threads fill its program cache at once, and
 * its cache retains the cl_contexts it compiled for: calls are serialised,
 * and the cache is cleared once no open context has used CLBlast. */
static pthread_mutex_t clblast_lock = PTHREAD_MUTEX_INITIALIZER;
static const gmlp_context **users;
static size_t n_users, cap_users;

static void note_user(const gmlp_context *ctx)
{
    for (size_t i = 0; i < n_users; i++)
        if (users[i] == ctx)
            return;
    if (n_users == cap_users) {
        const gmlp_context **grown = gmlp_realloc(users, (cap_users ? 2 * cap_users : 8) * sizeof *grown);
        if (!grown)
            return; /* unrecorded: the cache is cleared a little early, which only costs a recompile */
        users = grown;
        cap_users = cap_users ? 2 * cap_users : 8;
    }
    users[n_users++] = ctx;
}

static void context_closed(gmlp_context *ctx)
{
    pthread_mutex_lock(&clblast_lock);
    for (size_t i = 0; i < n_users; i++)
        if (users[i] == ctx) {
            users[i] = users[--n_users];
            if (n_users == 0)
                CLBlastClearCache();
            break;
        }
    pthread_mutex_unlock(&clblast_lock);
}

#define NAME(x) case x: return #x

static const char *status_name(CLBlastStatusCode s)
{
    if (s > -1024)
        return gmlp_cl_error_name(s);
    switch (s) {
    NAME(CLBlastNotImplemented); NAME(CLBlastInvalidMatrixA); NAME(CLBlastInvalidMatrixB);
    NAME(CLBlastInvalidMatrixC); NAME(CLBlastInvalidVectorX); NAME(CLBlastInvalidVectorY);
    NAME(CLBlastInvalidDimension); NAME(CLBlastInvalidLeadDimA); NAME(CLBlastInvalidLeadDimB);
    NAME(CLBlastInvalidLeadDimC); NAME(CLBlastInvalidIncrementX); NAME(CLBlastInvalidIncrementY);
    NAME(CLBlastInsufficientMemoryA); NAME(CLBlastInsufficientMemoryB); NAME(CLBlastInsufficientMemoryC);
    NAME(CLBlastInsufficientMemoryX); NAME(CLBlastInsufficientMemoryY); NAME(CLBlastInsufficientMemoryTemp);
    NAME(CLBlastInvalidBatchCount); NAME(CLBlastInvalidOverrideKernel); NAME(CLBlastMissingOverrideParameter);
    NAME(CLBlastInvalidLocalMemUsage); NAME(CLBlastNoHalfPrecision); NAME(CLBlastNoDoublePrecision);
    NAME(CLBlastInvalidVectorScalar); NAME(CLBlastInsufficientMemoryScalar); NAME(CLBlastDatabaseError);
    NAME(CLBlastUnknownError); NAME(CLBlastUnexpectedError);
    default: break;
    }
    return "unknown CLBlast error";
}

/* CLBlast's SGEMM reads float operands only, row-major (no pairs along
 * k), and rounds none. */
static int supports(const gmlp_gemm *g)
{
    return g->a.elem == GMLP_ELEM_F32 && g->b.elem == GMLP_ELEM_F32 && g->c.elem == GMLP_ELEM_F32 &&
           g->precision == GMLP_GEMM_FP32 && !gmlp_gemm_fused(g) && !g->b.pairs;
}

static gmlp_status run(gmlp_context *ctx, const gmlp_gemm *g)
{
    const size_t batch = g->batch ? g->batch : 1;
    if (g->m == 0 || g->n == 0)
        return GMLP_OK;
    if (gmlp_recording_on(ctx)) /* CLBlast enqueues its kernels itself */
        return gmlp_record_refuse(ctx, "a CLBlast GEMM");
    GMLP_TRY(gmlp_gemm_check(ctx, g));
    CLBlastTranspose ta = g->a.trans ? CLBlastTransposeYes : CLBlastTransposeNo;
    CLBlastTranspose tb = g->b.trans ? CLBlastTransposeYes : CLBlastTransposeNo;
    cl_event from = NULL, ev = NULL, *evp = ctx->set.profiling ? &ev : NULL;
    /* profiled from a marker before the call: CLBlast's event is its last
     * kernel's, after the pads, transposes and copies it may run first */
    if (evp) {
        cl_int e = clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, &from);
        if (e != CL_SUCCESS)
            return gmlp_fail_cl(&ctx->err, "clEnqueueMarkerWithWaitList", e);
    }
    CLBlastStatusCode s;
    pthread_mutex_lock(&clblast_lock);
    note_user(ctx);
    if (batch == 1)
        s = CLBlastSgemm(CLBlastLayoutRowMajor, ta, tb, g->m, g->n, g->k, 1.0f, g->a.buf, g->a.off, g->a.ld, g->b.buf,
                         g->b.off, g->b.ld, g->beta, g->c.buf, g->c.off, g->c.ld, &ctx->queue, evp);
    else
        s = CLBlastSgemmStridedBatched(CLBlastLayoutRowMajor, ta, tb, g->m, g->n, g->k, 1.0f, g->a.buf, g->a.off,
                                       g->a.ld, g->a.stride, g->b.buf, g->b.off, g->b.ld, g->b.stride, g->beta,
                                       g->c.buf, g->c.off, g->c.ld, g->c.stride, batch, &ctx->queue, evp);
    pthread_mutex_unlock(&clblast_lock);
    if (s != CLBlastSuccess) {
        if (from)
            clReleaseEvent(from);
        return gmlp_fail(&ctx->err, s == CLBlastOpenCLOutOfResources ? GMLP_ERR_DEVICE_MEMORY : GMLP_ERR_OPENCL,
                         "CLBlastSgemm%s(m=%zu n=%zu k=%zu batch=%zu) failed: %s (%d)",
                         batch == 1 ? "" : "StridedBatched", g->m, g->n, g->k, batch, status_name(s), (int)s);
    }
    if (ev)
        GMLP_TRY(gmlp_profile_record(ctx, batch == 1 ? "CLBlastSgemm" : "CLBlastSgemmStridedBatched", from, ev,
                                     gmlp_gemm_moves(g, GMLP_MOVES_PRODUCT)));
    else if (from)
        clReleaseEvent(from);
    return gmlp_op_epilogue(ctx, g);
}

const gmlp_gemm_backend_i gmlp_gemm_backend_clblast = {
    .name = "CLBlast",
    .supports = supports,
    .run = run,
    .context_closed = context_closed,
};
