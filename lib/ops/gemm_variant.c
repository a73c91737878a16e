/* The GEMM variants' axis table (gemm_variant.h) and the loops over it. */
#include "ops/gemm_variant.h"

#include <stdio.h>
#include <string.h>

#include "ops/wgmma_splice.h"

_Static_assert(GMLP_ELEM_F32 == GMLP_STORE_FLOAT && GMLP_ELEM_F16 == GMLP_STORE_HALF &&
                   GMLP_ELEM_BF16 == GMLP_STORE_BF16,
               "the kernels' storage codes are gmlp_elem's");

#define AXIS(f) .field = #f, .offset = offsetof(gmlp_gemm_variant, f)
#define STORAGE {GMLP_ELEM_F32, GMLP_ELEM_F16, GMLP_ELEM_BF16}

/* In label order (the labels of the variants from before the table);
 * a macro's spelling is part of the kernel cache's and the engines'
 * verdicts' keys: renaming one rebuilds each variant once. */
static const gmlp_gemm_axis axes[] = {
    {AXIS(ta), "GMLP_GEMM_TA", 2, {0, 1}, {" N", " T"}, 1},
    {AXIS(tb), "GMLP_GEMM_TB", 2, {0, 1}, {"N", "T"}, 1},
    /* 8: 16-bit operands' 16-byte copies (the wgmma rows'); the direct kernel's 8, 16 its own */
    {AXIS(vw), "GMLP_GEMM_VW", 4, {1, 2, 4, 8}, {" v%d", " v%d", " v%d", " v%d"}, 1},
    {AXIS(a), "GMLP_GEMM_A", GMLP_ELEMS, STORAGE, {" A:float", " A:half", " A:bf16"}, 1},
    {AXIS(b), "GMLP_GEMM_B", GMLP_ELEMS, STORAGE, {" B:float", " B:half", " B:bf16"}, 1},
    {AXIS(c), "GMLP_GEMM_C", GMLP_ELEMS, STORAGE, {"", " C:half", " C:bf16"}, 1},
    {AXIS(precision), "GMLP_GEMM_PRECISION", GMLP_GEMM_PRECISIONS,
     {GMLP_GEMM_FP32, GMLP_GEMM_TF32, GMLP_GEMM_FP16, GMLP_GEMM_BF16}, {" fp32", " tf32", " fp16", " bf16"}, 1},
    {AXIS(prologue), "GMLP_GEMM_PROLOGUE", GMLP_PROLOGUES,
     {GMLP_PROLOGUE_NONE, GMLP_PROLOGUE_NORM_A, GMLP_PROLOGUE_NORM_B}, {"", " norm(A)", " norm(B)"}, 1},
    /* no macro: the direct kernel writes the statistics where its argument is set, one program either way
     * (keyed: a product writing them is planned on a tiling that has them) */
    {AXIS(stats), NULL, 2, {GMLP_GEMM_STATS_NONE, GMLP_GEMM_STATS_ROWS}, {"", " stats"}, 1},
    {AXIS(pairs), "GMLP_GEMM_B_PAIRS", 2, {0, 1}, {"", " B:pairs"}, 1},
    {AXIS(issue), "GMLP_GEMM_ISSUE", GMLP_ISSUES, {GMLP_ISSUE_NATIVE, GMLP_ISSUE_EMULATED, GMLP_ISSUE_SHUFFLES},
     {"", " emulated", " emulated by shuffles"}, 0},
};
enum { N_AXES = sizeof axes / sizeof *axes };

const gmlp_gemm_axis *gmlp_gemm_axes(size_t *n)
{
    *n = N_AXES;
    return axes;
}

static int value_of(const gmlp_gemm_variant *v, const gmlp_gemm_axis *x)
{
    return ((const uint8_t *)v)[x->offset];
}

/* The value's index on its axis: the first where the value is none of them
 * (a direct tiling's own vector width, 8 or 16, which no product's
 * alignment gives; gmlp_gemm_check refused other such products before any
 * variant is asked for). */
static int index_of(const gmlp_gemm_variant *v, const gmlp_gemm_axis *x)
{
    for (int i = 0; i < x->radix; i++)
        if (x->values[i] == value_of(v, x))
            return i;
    return 0;
}

gmlp_elem gmlp_gemm_precision_inputs(gmlp_gemm_precision p)
{
    return p == GMLP_GEMM_BF16 ? GMLP_ELEM_BF16 : p == GMLP_GEMM_FP16 ? GMLP_ELEM_F16 : GMLP_ELEM_F32;
}

int gmlp_gemm_model_acts(gmlp_elem inputs)
{
    return inputs == GMLP_ELEM_F32 ? 1 : GMLP_GEMM_MODEL_ACTS;
}

gmlp_gemm_variant gmlp_gemm_model_form(gmlp_elem w, gmlp_elem inputs, int x, gmlp_model_product prod,
                                       gmlp_gemm_precision p)
{
    const uint8_t in = (uint8_t)(x == 0 ? GMLP_ELEM_F32 : inputs), out = (uint8_t)(x == 2 ? inputs : GMLP_ELEM_F32);
    /* a model's dimensions are multiples of 8: 16-bit operands 16 bytes aligned (a tiling takes its own
     * width at most: gmlp_gemm_variant_on) */
    const uint8_t vw = w != GMLP_ELEM_F32 && in != GMLP_ELEM_F32 ? 8 : 4;
    if (prod == GMLP_PRODUCT_MIXING)
        return (gmlp_gemm_variant){.a = (uint8_t)w, .b = in, .c = out, .vw = vw, .precision = (uint8_t)p};
    return (gmlp_gemm_variant){.a = in, .b = (uint8_t)w, .c = out, .tb = prod == GMLP_PRODUCT_LINEAR,
                               .pairs = prod == GMLP_PRODUCT_LINEAR_PAIRS, .vw = vw, .precision = (uint8_t)p};
}

gmlp_model_product gmlp_linear_product(gmlp_linear_layout linear)
{
    return linear == GMLP_LINEAR_PAIRS ? GMLP_PRODUCT_LINEAR_PAIRS
           : linear == GMLP_LINEAR_KN  ? GMLP_PRODUCT_LINEAR_KN
                                       : GMLP_PRODUCT_LINEAR;
}

gmlp_gemm_variant gmlp_gemm_variant_on(const gmlp_gemm_variant *v, const gmlp_tiling *t)
{
    gmlp_gemm_variant on = *v;
    on.vw = (uint8_t)(gmlp_tiling_direct(t) || v->vw > t->vw ? t->vw : v->vw);
    return on;
}

size_t gmlp_gemm_variant_key(const gmlp_gemm_variant *v)
{
    size_t key = 0;
    for (const gmlp_gemm_axis *x = axes; x < axes + N_AXES; x++)
        if (x->keyed)
            key = key * (size_t)x->radix + (size_t)index_of(v, x);
    return key;
}

/* snprintf appending at *n of buf's size (a count past size: nothing more written) */
#define APPEND(buf, size, n, ...)                                                                            \
    (*(n) += snprintf((buf) + (*(n) < (int)(size) ? *(n) : 0), *(n) < (int)(size) ? (size) - (size_t)*(n) : 0, \
                      __VA_ARGS__))

int gmlp_gemm_code(const gmlp_devinfo *d)
{
    if (!(d->type & CL_DEVICE_TYPE_CPU))
        return GMLP_GEMM_CODE_UNROLLED;
    return gmlp_runtime_facts(d) & GMLP_RUNTIME_CPU_CLANG ? GMLP_GEMM_CODE_PREFETCH | GMLP_GEMM_CODE_WHOLE : 0;
}

int gmlp_gemm_tiling_defines(const gmlp_tiling *t, int code, char *buf, size_t size)
{
    int n = 0;
    APPEND(buf, size, &n, "-DGMLP_GEMM_UNROLL=%d -DGMLP_GEMM_TM=%d -DGMLP_GEMM_TN=%d -DGMLP_GEMM_TK=%d -DGMLP_GEMM_WM=%d "
           "-DGMLP_GEMM_WN=%d", (code & GMLP_GEMM_CODE_UNROLLED) != 0, t->tm, t->tn, t->tk, t->wm, t->wn);
    if (t->stages)
        APPEND(buf, size, &n, " -DGMLP_MMA_STAGES=%d", t->stages);
    if (t->ldsm)
        APPEND(buf, size, &n, " -DGMLP_MMA_LDSM=1");
    if (t->swizzle)
        APPEND(buf, size, &n, " -DGMLP_MMA_SWIZZLE=1");
    if (t->frag2)
        APPEND(buf, size, &n, " -DGMLP_MMA_FRAG2=1");
    if (t->raster)
        APPEND(buf, size, &n, " -DGMLP_MMA_RASTER=%d", t->raster);
    if (t->wgmma) /* the splice's version: the kernel cache and the ladder's verdicts keyed by it */
        APPEND(buf, size, &n, " -DGMLP_MMA_WGMMA=%d", GMLP_WGMMA_SPLICE_VERSION);
    if (t->devices == CL_DEVICE_TYPE_CPU) /* a block for CPUs alone: code shaped for them (gemm_direct.cl) */
        APPEND(buf, size, &n, " -DGMLP_GEMM_CPU=1%s%s", code & GMLP_GEMM_CODE_PREFETCH ? " -DGMLP_GEMM_PREFETCH=1" : "",
               code & GMLP_GEMM_CODE_WHOLE ? " -DGMLP_GEMM_WHOLE=1" : "");
    if (t->defines)
        APPEND(buf, size, &n, " %s", t->defines);
    return n;
}

int gmlp_gemm_variant_defines(const gmlp_gemm_variant *v, const gmlp_tiling *t, int code, char *buf, size_t size)
{
    int n = 0;
    if (size)
        buf[0] = 0;
    for (const gmlp_gemm_axis *x = axes; x < axes + N_AXES; x++)
        if (x->macro && value_of(v, x) != x->values[0])
            APPEND(buf, size, &n, "-D%s=%d ", x->macro, value_of(v, x));
    char *rest = buf + (n < (int)size ? n : 0);
    return n + gmlp_gemm_tiling_defines(t, code, rest, n < (int)size ? size - (size_t)n : 0);
}

int gmlp_gemm_variant_label(const gmlp_gemm_variant *v, const gmlp_tiling *t, char *buf, size_t size)
{
    int n = 0;
    if (size)
        buf[0] = 0;
    APPEND(buf, size, &n, "%s %s", t->kernel->entry, t->name);
    for (const gmlp_gemm_axis *x = axes; x < axes + N_AXES; x++)
        APPEND(buf, size, &n, x->labels[index_of(v, x)], value_of(v, x));
    return n;
}
