/* The GEMM backends by their gmlp_gemm_backend value: the one place that
 * knows which this build holds. */
#include "ops/gemm_backend.h"
#include "ops/gemm_split.h"

static int any_operands(const gmlp_gemm *g)
{
    (void)g;
    return 1;
}

static const gmlp_gemm_backend_i kernel = {
    .name = "the library's kernel",
    .supports = any_operands,
    .run = gmlp_op_gemm_kernel,
    .context_closed = gmlp_gemm_split_close,
};

/* Each backend's interface, or (i NULL) why this build has none. */
static const struct {
    const gmlp_gemm_backend_i *i;
    const char *absent;
} backends[] = {
    [GMLP_GEMM_KERNEL] = {.i = &kernel},
#if GMLP_HAVE_CLBLAST
    [GMLP_GEMM_CLBLAST] = {.i = &gmlp_gemm_backend_clblast},
#else
    [GMLP_GEMM_CLBLAST] = {.absent = "built without CLBlast (meson setup -Dclblast=enabled to add it)"},
#endif
};
#define N_BACKENDS (sizeof backends / sizeof *backends)

const gmlp_gemm_backend_i *gmlp_gemm_backend_find(gmlp_gemm_backend which)
{
    return (size_t)which < N_BACKENDS ? backends[which].i : NULL;
}

gmlp_status gmlp_gemm_backend_refuse(gmlp_error *err, const char *who, gmlp_gemm_backend which)
{
    if ((size_t)which < N_BACKENDS && backends[which].absent)
        return gmlp_fail(err, GMLP_ERR_UNSUPPORTED, "%s: %s", who, backends[which].absent);
    return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT, "%s: unknown backend %d", who, (int)which);
}

gmlp_status gmlp_op_gemm_on(gmlp_context *ctx, gmlp_gemm_backend which, const gmlp_gemm *g)
{
    const gmlp_gemm_backend_i *b = gmlp_gemm_backend_find(which);
    if (!b)
        return gmlp_gemm_backend_refuse(&ctx->err, "gemm", which);
    if (!b->supports(g))
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "gemm: %s does not take A %s, B %s and C %s in %s",
                         b->name, gmlp_elem_name(g->a.elem), gmlp_elem_name(g->b.elem), gmlp_elem_name(g->c.elem),
                         gmlp_gemm_precision_name(g->precision));
    return b->run(ctx, g);
}

gmlp_status gmlp_op_gemm_clblast(gmlp_context *ctx, const gmlp_gemm *g)
{
    return gmlp_op_gemm_on(ctx, GMLP_GEMM_CLBLAST, g);
}

void gmlp_gemm_context_closed(gmlp_context *ctx)
{
    for (size_t i = 0; i < N_BACKENDS; i++)
        if (backends[i].i && backends[i].i->context_closed)
            backends[i].i->context_closed(ctx);
}
