/* The matrix engines' capability ladder.  A tiling that needs an engine
 * (gmlp_tiling.needs) runs on a device only once, for its device and driver:
 *   1. the architecture has the engine (gmlp_engines_detect: NVIDIA's
 *      compute capability 8.0 or later, read through
 *      cl_nv_device_attribute_query, for mma.sync, exactly 9.0 for
 *      wgmma; Intel's extension
 *      strings and smallest sub-group size for XMX; AMD's gfx name under
 *      AMD's own runtime for MFMA and WMMA, the wavefront width for WMMA's);
 *   2. the variant builds and fits (the probe build), and
 *   3. one tile of it agrees with the host bit for bit, on operands that
 *      every format holds exactly and whose sums fp32 holds exactly (in
 *      FP16 of half storage an infinity in each, which the mode saturates),
 * steps 2 and 3 in a throwaway OpenCL context of its own (one per context,
 * made at the first test, dropped after a failure): a kernel that faults
 * kills that context (NVIDIA's), never the caller's.  The verdict of
 * each variant is kept in the context and in the device's cache file
 * (.engines, beside the kernel cache), so that a later process skips the
 * test.  A failure falls back to the portable tilings with one log line. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/clerr.h"
#include "cl/device.h"
#include "cl/program.h"
#include "core/alloc.h"
#include "core/half.h"
#include "core/precision.h"
#include "ops/ops.h"
#include "ops/state.h"

#define GMLP_CL_SUB_GROUP_SIZES_INTEL 0x4108
#define GMLP_CL_WAVEFRONT_WIDTH_AMD 0x4043

/* Whether this process's CPU has AVX512_BF16 (the instructions a CPU device
 * that runs on the host may issue: tested before any is built, as an
 * instruction the CPU lacks would stop the process). */
static bool host_avx512_bf16(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw");
#else
    return false;
#endif
}

void gmlp_engine_facts_query(const gmlp_devinfo *d, gmlp_engine_facts *f)
{
    memset(f, 0, sizeof *f);
    if (!d->device)
        return;
    f->host_bf16 = (gmlp_runtime_facts(d) & GMLP_RUNTIME_CPU_X86_BUILTINS) && host_avx512_bf16();
    size_t sizes[8], n = 0;
    f->intel_mma = gmlp_device_has_extension(d->device, "cl_intel_subgroup_matrix_multiply_accumulate") &&
                   gmlp_device_has_extension(d->device, "cl_intel_required_subgroup_size") &&
                   gmlp_device_has_extension(d->device, "cl_intel_subgroups");
    f->intel_tf32 = f->intel_mma && gmlp_device_has_extension(d->device, "cl_intel_subgroup_matrix_multiply_accumulate_tf32");
    if (f->intel_mma &&
        clGetDeviceInfo(d->device, GMLP_CL_SUB_GROUP_SIZES_INTEL, sizeof sizes, sizes, &n) == CL_SUCCESS)
        for (size_t i = 0; i < n / sizeof *sizes; i++)
            f->min_subgroup = !f->min_subgroup || (int)sizes[i] < f->min_subgroup ? (int)sizes[i] : f->min_subgroup;
    cl_uint wave = 0;
    f->amd_runtime = gmlp_device_has_extension(d->device, "cl_amd_device_attribute_query");
    if (f->amd_runtime && clGetDeviceInfo(d->device, GMLP_CL_WAVEFRONT_WIDTH_AMD, sizeof wave, &wave, NULL) == CL_SUCCESS)
        f->wavefront = (int)wave;
}

unsigned gmlp_engines_for(const gmlp_devinfo *d, const gmlp_engine_facts *f)
{
    int sm = 0;
    unsigned e = 0;
    if (d->vendor_id == GMLP_VENDOR_NVIDIA && sscanf(d->arch, "sm_%d", &sm) == 1 && sm >= 80)
        e |= GMLP_ENGINE_MMA_SYNC;
    /* Intel: the extensions themselves, never a successful build (ocloc
     * "builds" the call for tgllp, which has no XMX); the smallest
     * sub-group size is the one the instructions take */
    if (d->vendor_id == GMLP_VENDOR_INTEL && f->intel_mma)
        e |= f->min_subgroup == 8 ? GMLP_ENGINE_XMX8 : f->min_subgroup == 16 ? GMLP_ENGINE_XMX16 : 0;
    if (d->vendor_id == GMLP_VENDOR_INTEL && f->intel_tf32 && f->min_subgroup == 16) /* the extension takes N = 16 */
        e |= GMLP_ENGINE_XMX16_TF32;
    if (f->host_bf16)
        e |= GMLP_ENGINE_AVX512_BF16;
    /* NVIDIA's other engines and AMD's: the architectures their rows list
     * (wgmma: sm_90 exactly); AMD's under AMD's own compiler (ROCm: the
     * builtins are not Mesa's), in the wavefront a row needs (WMMA's layout
     * differs in wave32 and wave64) */
    size_t n;
    const gmlp_engine *rows = gmlp_engines(&n);
    for (const gmlp_engine *r = rows; r < rows + n; r++)
        if (r->vendor == d->vendor_id && gmlp_engine_has_arch(r, d->arch) &&
            (r->vendor == GMLP_VENDOR_NVIDIA ||
             (r->vendor == GMLP_VENDOR_AMD && f->amd_runtime && (!r->wave || (r->wave == 64) == (f->wavefront == 64)))))
            e |= r->bit;
    return e;
}

const char *gmlp_engines_missing(const gmlp_devinfo *d, const gmlp_engine_facts *f, char *buf, size_t size)
{
    if (!(d->type & CL_DEVICE_TYPE_GPU) || gmlp_engines_for(d, f))
        return NULL;
    if (d->vendor_id == GMLP_VENDOR_NVIDIA)
        snprintf(buf, size, "%s%s: mma.sync needs sm_80", d->arch[0] ? "architecture " : "no compute capability",
                 d->arch);
    else if (d->vendor_id == GMLP_VENDOR_INTEL && f->intel_mma)
        snprintf(buf, size, "smallest sub-group size %d: XMX takes 8 or 16", f->min_subgroup);
    else if (d->vendor_id == GMLP_VENDOR_INTEL)
        snprintf(buf, size, "no cl_intel_subgroup_matrix_multiply_accumulate (or its sub-group extensions)");
    else if (d->vendor_id == GMLP_VENDOR_AMD && f->amd_runtime)
        snprintf(buf, size, "%s has neither MFMA nor a WMMA of known layout", d->arch);
    else if (d->vendor_id == GMLP_VENDOR_AMD)
        snprintf(buf, size, "not AMD's own runtime (no cl_amd_device_attribute_query)");
    else
        return NULL;
    return buf;
}

void gmlp_engines_detect(gmlp_context *ctx)
{
    gmlp_engine_facts f;
    char why[160];
    gmlp_engine_facts_query(&ctx->dev, &f);
    if (!ctx->set.engines) {
        gmlp_log(&ctx->set.log, GMLP_LOG_INFO, "GMLP_ENGINES=0: the precision modes run on the portable kernels");
        return;
    }
    ctx->dev.engines |= gmlp_engines_for(&ctx->dev, &f);
    if (gmlp_engines_missing(&ctx->dev, &f, why, sizeof why))
        gmlp_log(&ctx->set.log, GMLP_LOG_INFO, "no matrix engine on '%s' (%s): the precision modes run on the "
                 "portable kernels", ctx->dev.name, why);
}

/* A context of its own on ctx's device (p zeroed), sharing nothing with ctx
 * but the settings (its failures unlogged: the ladder logs one line). */
static gmlp_status probe_open(const gmlp_context *ctx, gmlp_context *p)
{
    p->dev = ctx->dev;
    p->set = ctx->set;
    p->set.profiling = 0;
    p->set.mem_limit = 0;
    p->borrowed = 1; /* released by probe_close, not through the shared contexts */
    cl_int e;
    p->cl = clCreateContext(NULL, 1, &p->dev.device, NULL, NULL, &e);
    if (e != CL_SUCCESS) {
        p->cl = NULL;
        return gmlp_fail_cl(&p->err, "clCreateContext", e);
    }
    p->queue = clCreateCommandQueue(p->cl, p->dev.device, 0, &e);
    if (e != CL_SUCCESS) {
        p->queue = NULL;
        return gmlp_fail_cl(&p->err, "clCreateCommandQueue", e);
    }
    return GMLP_OK;
}

static void probe_close(gmlp_context *p)
{
    cl_command_queue q = p->queue;
    cl_context cl = p->cl;
    gmlp_context_close(p); /* borrowed: the kernels only */
    if (q)
        clReleaseCommandQueue(q);
    if (cl)
        clReleaseContext(cl);
    free(p);
}

void gmlp_engines_close(gmlp_context *ctx)
{
    if (ctx->ops && ctx->ops->probe) {
        probe_close(ctx->ops->probe);
        ctx->ops->probe = NULL;
    }
}

/* Operand element (i, j): a multiple of 1/16 in [-15/16, 15/16], exact in
 * TF32, FP16 and BF16, so that rounding changes nothing and every partial
 * sum (multiples of 1/256 below 2^10) is exact in fp32. */
static float probe_value(size_t i, size_t j, unsigned salt)
{
    return (float)((int)((i * 7 + j * 13 + salt) % 31) - 15) / 16.0f;
}

/* The self-test's operands: probe values (salt 1: A, 2: B) but, in FP16
 * of half storage, one infinity in each operand (A's +, B's -), which the
 * mode saturates at +-65504: the tensor cores take stored halves as the
 * instruction's bits and must saturate them (gemm_mma.cl's gmlp_mma_sat).
 * Every sum stays exact (multiples of 1/256 below 2^16): A's infinity at
 * k = qa meets B's values, B's at k = qb A's, and where the two's row and
 * column meet, A is zero at qb. */
typedef struct probe {
    size_t inf[2][2]; /* operand x's infinity at stored (row, column); past the matrix: none */
} probe;

static float probe_at(const probe *pr, int x, size_t i, size_t j)
{
    if (i == pr->inf[x][0] && j == pr->inf[x][1])
        return x ? -INFINITY : INFINITY;
    return probe_value(i, j, (unsigned)x + 1);
}

/* op(A)'s element (i, q) and op(B)'s (q, j) */
static float probe_a(const probe *pr, const gmlp_gemm *g, size_t i, size_t q)
{
    return g->a.trans ? probe_at(pr, 0, q, i) : probe_at(pr, 0, i, q);
}
static float probe_b(const probe *pr, const gmlp_gemm *g, size_t q, size_t j)
{
    return g->b.trans ? probe_at(pr, 1, j, q) : probe_at(pr, 1, q, j);
}

/* The infinities' places for product g (m, k >= 32). */
static probe probe_plan(const gmlp_gemm *g)
{
    probe pr = {{{SIZE_MAX, SIZE_MAX}, {SIZE_MAX, SIZE_MAX}}};
    const size_t ia = 1, qa = 3, jb = 2;
    size_t qb = qa + 1;
    while (qb < g->k && probe_a(&pr, g, ia, qb) != 0.0f) /* a zero within 31 */
        qb++;
    if (g->precision == GMLP_GEMM_FP16 && g->a.elem == GMLP_ELEM_F16) {
        pr.inf[0][0] = g->a.trans ? qa : ia;
        pr.inf[0][1] = g->a.trans ? ia : qa;
    }
    if (g->precision == GMLP_GEMM_FP16 && g->b.elem == GMLP_ELEM_F16 && qb < g->k) {
        pr.inf[1][0] = g->b.trans ? jb : qb;
        pr.inf[1][1] = g->b.trans ? qb : jb;
    }
    return pr;
}

/* operand x's rows x cols, as elem, into a buffer of p. */
static gmlp_status probe_operand(gmlp_context *p, const probe *pr, int x, size_t rows, size_t cols, gmlp_elem elem,
                                 cl_mem *out)
{
    const size_t n = rows * cols;
    float *v = gmlp_malloc(n * sizeof *v);
    void *host = gmlp_malloc(n * gmlp_elem_size(elem));
    gmlp_status st = GMLP_OK;
    if (!v || !host)
        st = gmlp_fail(&p->err, GMLP_ERR_HOST_MEMORY, "out of host memory");
    for (size_t i = 0; st == GMLP_OK && i < rows; i++)
        for (size_t j = 0; j < cols; j++)
            v[i * cols + j] = probe_at(pr, x, i, j);
    if (st == GMLP_OK) {
        gmlp_elem_pack(elem, v, n, host);
        st = gmlp_buffer_create(p, n * gmlp_elem_size(elem), host, "an engine's self-test", out);
    }
    free(v);
    free(host);
    return st;
}

/* Step 3 in p: one tile of t in g's form (operand storages, transposes,
 * precision); GMLP_OK with *agrees set, or a failure of the device. */
static gmlp_status probe_tile(gmlp_context *p, const gmlp_gemm *form, const gmlp_tiling *t, bool *agrees)
{
    const size_t m = (size_t)t->tm, n = (size_t)t->tn, k = 4 * (size_t)t->tk; /* four slices: both buffers, twice */
    gmlp_gemm g = *form;
    g.m = m, g.n = n, g.k = k;
    g.a.ld = g.a.trans ? m : k;
    g.b.ld = g.b.trans ? k : n;
    g.c = (gmlp_view){.ld = n, .elem = form->c.elem}; /* float, bfloat16 or half, as the variant stores */
    const probe pr = probe_plan(&g);
    const bool c16 = g.c.elem != GMLP_ELEM_F32;
    const size_t c_bytes = m * n * gmlp_elem_size(g.c.elem);
    float *c = gmlp_malloc(m * n * sizeof *c);
    uint16_t *bits = c16 ? gmlp_malloc(m * n * sizeof *bits) : NULL;
    if (!c || (c16 && !bits)) {
        free(c), free(bits);
        return gmlp_fail(&p->err, GMLP_ERR_HOST_MEMORY, "out of host memory");
    }
    gmlp_status st = probe_operand(p, &pr, 0, g.a.trans ? k : m, g.a.ld, g.a.elem, &g.a.buf);
    if (st == GMLP_OK)
        st = probe_operand(p, &pr, 1, g.b.trans ? n : k, g.b.ld, g.b.elem, &g.b.buf);
    if (st == GMLP_OK)
        st = gmlp_buffer_create(p, c_bytes, NULL, "an engine's self-test", &g.c.buf);
    const char *skipped = NULL;
    if (st == GMLP_OK)
        st = gmlp_op_gemm_tiled(p, &g, t, &skipped);
    if (st == GMLP_OK && skipped)
        st = gmlp_fail(&p->err, GMLP_ERR_UNSUPPORTED, "it does not build to run whole tiles unspilled");
    cl_int e = st == GMLP_OK ? clEnqueueReadBuffer(p->queue, g.c.buf, CL_TRUE, 0, c_bytes, c16 ? (void *)bits : c, 0,
                                                   NULL, NULL)
                             : CL_SUCCESS;
    if (e != CL_SUCCESS)
        st = gmlp_fail_cl(&p->err, "clEnqueueReadBuffer", e);
    for (size_t i = 0; c16 && st == GMLP_OK && i < m * n; i++)
        c[i] = gmlp_elem_value(g.c.elem, bits[i]);
    *agrees = st == GMLP_OK;
    for (size_t i = 0; *agrees && i < m; i++)
        for (size_t j = 0; *agrees && j < n; j++) {
            float want = 0.0f; /* exact: see probe_value */
            for (size_t q = 0; q < k; q++)
                want += gmlp_round_operand(probe_a(&pr, &g, i, q), g.precision) *
                        gmlp_round_operand(probe_b(&pr, &g, q, j), g.precision);
            if (c16) { /* rounded as C stores it */
                uint16_t w;
                gmlp_elem_pack(g.c.elem, &want, 1, &w);
                want = gmlp_elem_value(g.c.elem, w);
            }
            if (c[i * n + j] != want) {
                *agrees = false;
                gmlp_fail(&p->err, GMLP_ERR_UNSUPPORTED, "its tile differs from the host's at (%zu, %zu): %g, not %g", i,
                          j, (double)c[i * n + j], (double)want);
            }
        }
    gmlp_buffer_release(p, &g.a.buf);
    gmlp_buffer_release(p, &g.b.buf);
    gmlp_buffer_release(p, &g.c.buf);
    free(c);
    free(bits);
    return st;
}

/* The cache file's verdict on variant `defines`: 1 passed, 0 failed, -1 none. */
static int cached_verdict(const gmlp_context *ctx, const char *defines)
{
    char path[1100], line[600];
    if (!gmlp_cache_kernels_file(ctx, ".engines", path, sizeof path))
        return -1;
    FILE *f = fopen(path, "r");
    int verdict = -1;
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        const char *sp = strchr(line, ' ');
        if (sp && !strcmp(sp + 1, defines))
            verdict = !strncmp(line, "pass", 4);
    }
    if (f)
        fclose(f);
    return verdict;
}

static void cache_verdict(const gmlp_context *ctx, const char *defines, bool pass)
{
    char path[1100];
    FILE *f;
    if (gmlp_cache_kernels_file(ctx, ".engines", path, sizeof path) && (f = fopen(path, "a"))) {
        fprintf(f, "%s %s\n", pass ? "pass" : "fail", defines); /* one short append: whole lines */
        fclose(f);
    }
}

bool gmlp_engine_verified(gmlp_context *ctx, const gmlp_gemm *form, const gmlp_tiling *t, const char *defines,
                          const char *label)
{
    if (!t->needs || !ctx->ops) /* no engine; or ctx is a probe context itself */
        return true;
    struct gmlp_engine_verdict *v = ctx->ops->verdicts;
    for (size_t i = 0; i < ctx->ops->n_verdicts; i++)
        if (!strcmp(v[i].defines, defines))
            return v[i].pass;
    if (ctx->ops->n_verdicts == GMLP_ENGINE_VERDICTS) /* more variants than a model has: test again */
        ctx->ops->n_verdicts = 0;
    int cached = cached_verdict(ctx, defines);
    bool pass = cached == 1;
    if (cached < 0) {
        gmlp_context *p = ctx->ops->probe;
        gmlp_status st = GMLP_OK;
        if (!p && (p = ctx->ops->probe = gmlp_calloc(1, sizeof *p)) != NULL)
            st = probe_open(ctx, p);
        if (p && st == GMLP_OK) {
            p->dev = ctx->dev; /* as the caller now sees it (tests change what it pretends to be) */
            st = probe_tile(p, form, t, &pass);
        }
        if (!pass) {
            gmlp_log(&ctx->set.log, GMLP_LOG_INFO, "%s on '%s' failed its self-test (%s): the portable kernels run instead",
                     label, ctx->dev.name, p ? p->err.msg : "out of host memory");
            gmlp_engines_close(ctx); /* it may have faulted: the next test gets a fresh context */
        }
        if (p) /* out of host memory is no verdict on the variant */
            cache_verdict(ctx, defines, pass);
    }
    struct gmlp_engine_verdict *slot = &v[ctx->ops->n_verdicts++];
    snprintf(slot->defines, sizeof slot->defines, "%s", defines);
    slot->pass = pass;
    return pass;
}
