/* Every GEMM program variant the library may build for a GPU (ops.h's
 * gmlp_gemm_variants, gmlp_diag_programs): the portable tilings in the
 * forms listed below, each matrix engine's tilings in every form a model
 * runs in each precision they run.  The portability suite compiles them
 * offline, sampling the engines' (tests/test_portability.sh). */
#include <stdio.h>
#include <string.h>

#include "ops/ops.h"
#include "ops/gemm_variant.h"

/* Which tilings a portable form is listed for. */
typedef enum listed_on {
    EVERY_TILING,
    DEFAULTS,       /* the tilings some default row names */
    DEFAULT_BLOCKS, /* those of more than one work-item: not the one-item fallback tiled_4x4x4_4x4, whose FP16
                     * staging NVIDIA's sm_80/sm_90 build puts in a 128-byte stack frame (a device runs it only where
                     * nothing larger fits, and prefers any unspilled tiling) */
} listed_on;

#define F16 GMLP_ELEM_F16
#define BF16 GMLP_ELEM_BF16
#define PREC(p) .precision = GMLP_GEMM_##p
/* Float operands with each pair of transposes, the model's half-weight
 * forms (NT with half B, NN with half A), its BF16 mode's forms of
 * bfloat16 weights and activations (with bfloat16 outputs too, which apply
 * the epilogue in registers where float ones sweep), the FP16 mode's of
 * half weights, activations and outputs, and the float forms rounding to
 * FP16 (the precision modes' costliest rounding); the fused LayerNorm's
 * prologues, fc1's (NT, float x) in FP32 and the spatial GEMM's (NN) in
 * BF16; all with float4 loads, whose staging needs the most registers. */
static const struct listed {
    gmlp_gemm_variant v;
    listed_on on;
} portable[] = {
    {{.tb = 1, .vw = 4}, EVERY_TILING},
    {{.vw = 4}, EVERY_TILING},
    {{.b = F16, .tb = 1, .vw = 4}, EVERY_TILING},
    {{.a = F16, .vw = 4}, EVERY_TILING},
    {{.ta = 1, .vw = 4}, DEFAULTS},
    {{.ta = 1, .tb = 1, .vw = 4}, DEFAULTS},
    {{.tb = 1, .vw = 4, PREC(FP16)}, DEFAULT_BLOCKS},
    {{.vw = 4, PREC(FP16)}, DEFAULT_BLOCKS},
    {{.a = BF16, .b = BF16, .tb = 1, .vw = 4, PREC(BF16)}, DEFAULT_BLOCKS},
    {{.a = BF16, .b = BF16, .vw = 4, PREC(BF16)}, DEFAULT_BLOCKS},
    {{.a = BF16, .b = BF16, .c = BF16, .tb = 1, .vw = 4, PREC(BF16)}, DEFAULT_BLOCKS},
    {{.a = BF16, .b = BF16, .c = BF16, .vw = 4, PREC(BF16)}, DEFAULT_BLOCKS},
    {{.a = F16, .b = F16, .c = F16, .tb = 1, .vw = 4, PREC(FP16)}, DEFAULT_BLOCKS},
    {{.a = F16, .b = F16, .c = F16, .vw = 4, PREC(FP16)}, DEFAULT_BLOCKS},
    {{.tb = 1, .vw = 4, .prologue = GMLP_PROLOGUE_NORM_A}, DEFAULT_BLOCKS},
    {{.a = BF16, .b = BF16, .c = BF16, .vw = 4, PREC(BF16), .prologue = GMLP_PROLOGUE_NORM_B}, DEFAULT_BLOCKS},
};

static bool listed_for(const struct listed *l, const gmlp_tiling *t)
{
    const bool one_item = t->tm == t->wm && t->tn == t->wn;
    return l->on == EVERY_TILING || (gmlp_gemm_tiling_is_default(t) && (l->on == DEFAULTS || !one_item));
}

/* An engine tiling's forms in precision p: each weight storage a model may
 * have in p (lib/model's gmlp_weights_stored: float only where p keeps
 * float activations), each activation form, NT and NN; those whose C the
 * kernel stores and whose staging fits the engine's local memory.  GPUs
 * keep the linear weights as the file stores them (gemm_tilings.c's forms;
 * packed, the linear layers' NN differs from token mixing's only in which
 * operand is float in the first activation form). */
static const gmlp_model_product gpu_products[] = {GMLP_PRODUCT_LINEAR, GMLP_PRODUCT_MIXING};
static void engine_forms(const gmlp_tiling *t, gmlp_gemm_precision p, gmlp_gemm_program_fn fn, void *user)
{
    const gmlp_engine *e = gmlp_engine_of(t->needs);
    const gmlp_elem inputs = gmlp_gemm_precision_inputs(p);
    for (int w = inputs == GMLP_ELEM_F32 ? GMLP_ELEM_F32 : GMLP_ELEM_F16; w < GMLP_ELEMS; w++)
        for (int x = 0; x < gmlp_gemm_model_acts(inputs); x++)
            for (int i = 0; i < 2; i++) {
                const gmlp_gemm_variant v = gmlp_gemm_model_form((gmlp_elem)w, inputs, x, gpu_products[i], p);
                const gmlp_gemm_operands o = {v.a, v.b, !v.ta, v.tb, p};
                if (gmlp_gemm_tiling_stores(t, v.c) && gmlp_gemm_tiling_takes(t, &o) &&
                    gmlp_gemm_tiling_form_bytes(t, &o) <= (e->probed_local_mem ? e->probed_local_mem : e->local_mem))
                    fn(user, t, &v, e->prefix);
            }
}

void gmlp_gemm_programs(gmlp_gemm_program_fn fn, void *user)
{
    size_t n_all;
    const gmlp_tiling *all = gmlp_gemm_tilings(&n_all);
    for (const gmlp_tiling *t = all; t < all + n_all; t++) {
        if (t->devices == CL_DEVICE_TYPE_CPU) /* tests/test_gemm runs these */
            continue;
        for (int p = GMLP_GEMM_FP32; t->needs && p < GMLP_GEMM_PRECISIONS; p++)
            if (gmlp_gemm_tiling_runs(t, (gmlp_gemm_precision)p))
                engine_forms(t, (gmlp_gemm_precision)p, fn, user);
        for (size_t i = 0; !t->needs && i < sizeof portable / sizeof *portable; i++)
            if (listed_for(&portable[i], t) && gmlp_gemm_tiling_stores(t, portable[i].v.c))
                fn(user, t, &portable[i].v, t->vendor == GMLP_VENDOR_NVIDIA ? "nvidia" : NULL);
    }
}

/* gmlp_gemm_variants' text so far */
typedef struct text {
    char *buf;
    size_t size, need;
} text;

static void write_line(void *user, const gmlp_tiling *t, const gmlp_gemm_variant *v, const char *target)
{
    text *s = user;
    char line[480];
    const gmlp_gemm_variant on = gmlp_gemm_variant_on(v, t);
    int n = snprintf(line, sizeof line, "%s%s%s ", t->kernel->file, target ? "@" : "", target ? target : "");
    n += gmlp_gemm_variant_defines(&on, t, 1, line + n, sizeof line - (size_t)n);
    n += snprintf(line + n, sizeof line - (size_t)n, "\n");
    if (s->buf && s->need + (size_t)n < s->size)
        memcpy(s->buf + s->need, line, (size_t)n + 1);
    s->need += (size_t)n;
}

size_t gmlp_gemm_variants(char *buf, size_t size)
{
    text s = {buf, size, 0};
    if (buf && size)
        buf[0] = 0;
    gmlp_gemm_programs(write_line, &s);
    return s.need;
}
