/* The library's own GEMM (cl_kernels/gemm_tiled.cl, gemm_direct.cl): float,
 * half or bfloat16 operands (which CLBlast cannot read), the epilogue (bias, activation, the SGU gate) fused.
 * A variant is a tiling's kernel (gemm_tilings.c) compiled for one operand
 * form: operand types, transposes, vector width, precision.  Which variant a
 * product runs is planned once per plan key (its size class and form) and
 * kept in the context's plan (ops/state.h): a call then only indexes it,
 * and runs it whole or split along k (gemm_split.c). */
#include <stdio.h>
#include <string.h>

#include "kernel_abi.h"
#include "ops/gemm_split.h"
#include "ops/state.h"

/* One variant's form (C float, half or bfloat16: gmlp_gemm_check). */
typedef struct form {
    gmlp_elem a_elem, b_elem, c_elem;
    bool ta, tb;
    int vw; /* the widest vector load the operands' alignment allows: 1, 2 or 4 */
    gmlp_gemm_precision precision;
} form;

static gmlp_gemm_form form_kind(const form *f)
{
    return f->ta ? (f->tb ? GMLP_FORM_TT : GMLP_FORM_TN) : (f->tb ? GMLP_FORM_NT : GMLP_FORM_NN);
}

/* Loops unrolled (gemm_common.cl's GMLP_GEMM_UNROLL) everywhere but on CPUs. */
static bool unrolled(const gmlp_devinfo *d)
{
    return (d->type & CL_DEVICE_TYPE_CPU) == 0;
}

static bool on_cpu(const gmlp_context *ctx)
{
    return (ctx->dev.type & CL_DEVICE_TYPE_CPU) != 0;
}

/* The vector width: the direct kernel's arithmetic (vloadn needs no
 * alignment), else the widest the operands' alignment allows up to t's. */
static int vw(const form *f, const gmlp_tiling *t)
{
    return gmlp_tiling_direct(t) || f->vw > t->vw ? t->vw : f->vw;
}

/* The variant's -D options.  FP32 adds none (its kernels are those from
 * before the precision modes, bit for bit); emulate builds a matrix-engine
 * tiling with its instructions emulated (GMLP_ENGINE_EMULATED). */
static int defines(char *buf, size_t size, const form *f, const gmlp_tiling *t, bool unroll, bool emulate)
{
    int n = snprintf(buf, size,
                     "-DGMLP_GEMM_UNROLL=%d -DGMLP_GEMM_A_HALF=%d -DGMLP_GEMM_B_HALF=%d -DGMLP_GEMM_TA=%d "
                     "-DGMLP_GEMM_TB=%d -DGMLP_GEMM_VW=%d -DGMLP_GEMM_TM=%d -DGMLP_GEMM_TN=%d -DGMLP_GEMM_TK=%d "
                     "-DGMLP_GEMM_WM=%d -DGMLP_GEMM_WN=%d",
                     unroll, f->a_elem == GMLP_ELEM_F16, f->b_elem == GMLP_ELEM_F16, f->ta, f->tb, vw(f, t), t->tm,
                     t->tn, t->tk, t->wm, t->wn);
    if (f->a_elem == GMLP_ELEM_BF16 && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " -DGMLP_GEMM_A_BF16=1");
    if (f->b_elem == GMLP_ELEM_BF16 && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " -DGMLP_GEMM_B_BF16=1");
    if (f->c_elem != GMLP_ELEM_F32 && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " -DGMLP_GEMM_C_%s=1", f->c_elem == GMLP_ELEM_BF16 ? "BF16" : "HALF");
    if (f->precision != GMLP_GEMM_FP32 && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " -DGMLP_GEMM_PRECISION=%d", (int)f->precision);
    if (t->stages && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " -DGMLP_MMA_STAGES=%d", t->stages);
    if (t->ldsm && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " -DGMLP_MMA_LDSM=1");
    if (t->defines && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " %s", t->defines);
    if (emulate && t->needs && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " %s", gmlp_engine_of(t->needs)->emulate);
    return n;
}

static gmlp_gemm form_gemm(const form *f)
{
    return (gmlp_gemm){.a = {.elem = f->a_elem, .trans = f->ta},
                       .b = {.elem = f->b_elem, .trans = f->tb},
                       .c = {.elem = f->c_elem},
                       .precision = f->precision};
}

/* Why a tiling's variant is unusable (gmlp_op_gemm_tiled's *skipped). */
static const char *const why_ladder = "its matrix engine failed the capability ladder on this device";
static const char *const why_sweep =
    "its kernel applies the epilogue in a second sweep over C, which a 16-bit C cannot hold";
const char gmlp_gemm_tiled_too_big[] =
    "its compiled kernel allows fewer work-items (or less local memory) than a tile needs on this device";

/* Tiling t's variant for form f; *k NULL when the compiled kernel cannot
 * run a whole tile (too many registers for that many work-items, say), or
 * its matrix engine failed the capability ladder (gemm_engines.c), *why
 * (if not NULL) then saying which. */
static gmlp_status variant(gmlp_context *ctx, const form *f, const gmlp_tiling *t, const gmlp_kernel **k,
                           const char **why)
{
    static const char *const tr[] = {"N", "T"};
    *k = NULL;
    if (!gmlp_gemm_tiling_stores(t, f->c_elem)) {
        if (why)
            *why = why_sweep;
        return GMLP_OK;
    }
    const gmlp_gemm_operands ops = {f->a_elem, f->b_elem, !f->ta, f->tb, f->precision};
    if (gmlp_gemm_tiling_form_bytes(t, &ops) > ctx->dev.local_mem) { /* float operands of a cp.async tiling */
        if (why)
            *why = gmlp_gemm_tiled_too_big;
        return GMLP_OK;
    }
    char defs[400], label[170];
    defines(defs, sizeof defs, f, t, unrolled(&ctx->dev), (ctx->dev.engines & GMLP_ENGINE_EMULATED) != 0);
    snprintf(label, sizeof label, "%s %s %s%s v%d A:%s B:%s%s%s %s", t->kernel->entry, t->name, tr[f->ta],
             tr[f->tb], vw(f, t), gmlp_elem_name(f->a_elem), gmlp_elem_name(f->b_elem),
             f->c_elem == GMLP_ELEM_F32 ? "" : " C:", f->c_elem == GMLP_ELEM_F32 ? "" : gmlp_elem_name(f->c_elem),
             gmlp_gemm_precision_name(f->precision));
    const gmlp_gemm g = form_gemm(f);
    if (!gmlp_engine_verified(ctx, &g, t, defs, label)) { /* a matrix engine's tiling that failed its ladder */
        if (why)
            *why = why_ladder;
        return GMLP_OK;
    }
    GMLP_TRY(gmlp_kernel_get(ctx, t->kernel, defs, label, k));
    if ((*k)->wg_max < (size_t)(t->tn / t->wn * (t->tm / t->wm)) || (*k)->local_mem > ctx->dev.local_mem) {
        gmlp_log(&ctx->set.log, GMLP_LOG_INFO, "%s on '%s': %zu work-items allowed, too few; trying smaller tiles",
                 label, ctx->dev.name, (*k)->wg_max);
        *k = NULL;
        if (why)
            *why = gmlp_gemm_tiled_too_big;
    }
    return GMLP_OK;
}

/* private memory on a GPU is spilled registers; on a CPU it is the stack
 * every kernel uses (PoCL reports the accumulator arrays) */
static bool spills(const gmlp_context *ctx, const gmlp_kernel *k)
{
    return k->private_mem > 0 && !on_cpu(ctx);
}

/* Of a default row's tilings, the first that fits the device and builds to
 * run, preferring one that does not spill; *k NULL if none. */
static gmlp_status first_of(gmlp_context *ctx, const form *f, const gmlp_gemm_default *row, const gmlp_kernel **k,
                            const gmlp_tiling **t)
{
    const gmlp_kernel *spilling = NULL;
    const gmlp_tiling *spilling_t = NULL;
    for (size_t i = 0; i < GMLP_GEMM_ROW_TILINGS && row->tilings[i]; i++) {
        const gmlp_tiling *c = gmlp_gemm_tiling_named(row->tilings[i]);
        if (!c || !gmlp_gemm_tiling_fits(&ctx->dev, c) || !gmlp_gemm_tiling_runs(c, f->precision))
            continue;
        GMLP_TRY(variant(ctx, f, c, k, NULL));
        if (*k && !spills(ctx, *k)) {
            *t = c;
            return GMLP_OK;
        }
        if (*k && !spilling) {
            gmlp_log(&ctx->set.log, GMLP_LOG_INFO, "GEMM tiling %s spills on '%s' (%llu bytes of private memory)",
                     c->name, ctx->dev.name, (unsigned long long)(*k)->private_mem);
            spilling = *k, spilling_t = c;
        }
    }
    *k = spilling;
    *t = spilling_t;
    return GMLP_OK;
}

/* The defaults' variant for a product of this size class: the first
 * matching row's, else the next matching row's (a matrix engine's row
 * names only its tilings), down to the fallback row. */
static gmlp_status pick(gmlp_context *ctx, const form *f, gmlp_gemm_size size, const gmlp_kernel **k,
                        const gmlp_tiling **t)
{
    const gmlp_gemm_default *row = NULL;
    *k = NULL;
    while (!*k && (row = gmlp_gemm_default_next(&ctx->dev, size, form_kind(f), f->precision, row)) != NULL)
        GMLP_TRY(first_of(ctx, f, row, k, t));
    if (!*k)
        return gmlp_fail(&ctx->err, GMLP_ERR_UNSUPPORTED,
                         "no GEMM tiling fits '%s' (work-group size %zu, local memory %llu bytes)", ctx->dev.name,
                         ctx->dev.max_wg, (unsigned long long)ctx->dev.local_mem);
    return GMLP_OK;
}

/* The variant a product of form f and this size class runs: the device's
 * tuned tiling, or the defaults where there is none or it does not build to
 * fit; *tuned says which. */
static gmlp_status choose(gmlp_context *ctx, const form *f, gmlp_gemm_size size, const gmlp_kernel **k,
                          const gmlp_tiling **t, bool *tuned)
{
    const gmlp_gemm g = form_gemm(f);
    const gmlp_tuned_choice *w = gmlp_gemm_tuned(ctx, size, &g);
    *k = NULL;
    if (w && w->tiling && gmlp_gemm_tiling_runs(w->tiling, f->precision)) {
        *t = w->tiling;
        GMLP_TRY(variant(ctx, f, *t, k, NULL));
    }
    *tuned = *k != NULL;
    return *k ? GMLP_OK : pick(ctx, f, size, k, t);
}

/* The plan's entry for a product of form f and this size class, planned on
 * first use. */
static gmlp_status planned(gmlp_context *ctx, const form *f, gmlp_gemm_size size, const gmlp_gemm_plan **out)
{
    static const int vw_index[] = {[1] = 0, [2] = 1, [4] = 2};
    size_t key = ((((((((size_t)size * 2 + f->ta) * 2 + f->tb) * GMLP_ELEMS + f->a_elem) * GMLP_ELEMS + f->b_elem) *
                         GMLP_ELEMS +
                     f->c_elem) *
                        3 +
                    (size_t)vw_index[f->vw]) *
                   GMLP_GEMM_PRECISIONS) +
                 f->precision;
    _Static_assert(GMLP_GEMM_PLAN_KEYS ==
                       GMLP_GEMM_CLASSES * 4 * GMLP_ELEMS * GMLP_ELEMS * GMLP_ELEMS * 3 * GMLP_GEMM_PRECISIONS,
                   "one entry per key");
    gmlp_gemm_plan *p = &ctx->ops->plan[key];
    if (!p->kernel)
        GMLP_TRY(choose(ctx, f, size, &p->kernel, &p->tiling, &p->tuned));
    *out = p;
    return GMLP_OK;
}

/* The model's products with weights stored as w, activations as x and
 * outputs as y, 4-aligned: NT (activations x linear weights: the weights are
 * B) or NN (token mixing: weights x activations, and attention: A). */
static form model_form(gmlp_elem w, gmlp_elem x, gmlp_elem y, bool nt, gmlp_gemm_precision precision)
{
    return nt ? (form){.a_elem = x, .b_elem = w, .c_elem = y, .tb = true, .vw = 4, .precision = precision}
              : (form){.a_elem = w, .b_elem = x, .c_elem = y, .vw = 4, .precision = precision};
}

gmlp_status gmlp_gemm_prepare(gmlp_context *ctx, gmlp_elem weights, gmlp_elem inputs, gmlp_gemm_precision precision,
                              gmlp_elem *outputs)
{
    /* activations and outputs: float; inputs (as only GEMMs read them) to float; inputs to inputs' format (a
     * product only GEMMs read, of such inputs: BF16's bfloat16, FP16's half) */
    const gmlp_elem acts[3] = {GMLP_ELEM_F32, inputs, inputs}, outs[3] = {GMLP_ELEM_F32, GMLP_ELEM_F32, inputs};
    *outputs = inputs;
    for (int nt = 1; nt >= 0; nt--)
        for (int size = GMLP_GEMM_SMALL; size < GMLP_GEMM_CLASSES; size++) {
            const gmlp_gemm_plan *p[3] = {NULL, NULL, NULL};
            for (int x = 0; x < (inputs == GMLP_ELEM_F32 ? 1 : 3); x++) {
                const form f = model_form(weights, acts[x], outs[x], nt, precision);
                const gmlp_gemm g = form_gemm(&f);
                if (!gmlp_gemm_on_clblast(ctx, size, &g)) /* else CLBlast, then epilogue.cl */
                    GMLP_TRY(planned(ctx, &f, (gmlp_gemm_size)size, &p[x]));
            }
            if (p[1] && p[2] && p[1]->tiling != p[2]->tiling)
                *outputs = GMLP_ELEM_F32;
        }
    return GMLP_OK;
}

gmlp_status gmlp_gemm_engine(gmlp_context *ctx, gmlp_elem weights, gmlp_gemm_precision precision, const char **engine)
{
    const form f = model_form(weights, GMLP_ELEM_F32, GMLP_ELEM_F32, true, precision); /* the linear layers' */
    const gmlp_gemm g = form_gemm(&f);
    const gmlp_gemm_plan *p;
    if (gmlp_gemm_on_clblast(ctx, GMLP_GEMM_LARGE, &g)) {
        *engine = "CLBlast";
        return GMLP_OK;
    }
    GMLP_TRY(planned(ctx, &f, GMLP_GEMM_LARGE, &p));
    *engine = gmlp_gemm_tiling_engine(p->tiling, precision);
    return GMLP_OK;
}

void gmlp_gemm_plan_clear(gmlp_context *ctx)
{
    memset(ctx->ops->plan, 0, sizeof ctx->ops->plan);
}

/* One size class's choice, as the report prints it. */
typedef struct chosen {
    const gmlp_tiling *t; /* NULL: CLBlast */
    bool tuned;
} chosen;

static gmlp_status chosen_for(gmlp_context *ctx, const form *f, gmlp_gemm_size size, chosen *c)
{
    const gmlp_gemm g = form_gemm(f);
    const gmlp_gemm_plan *p;
    if (gmlp_gemm_on_clblast(ctx, size, &g)) {
        *c = (chosen){NULL, ctx->set.gemm != GMLP_GEMM_CLBLAST};
        return GMLP_OK;
    }
    GMLP_TRY(planned(ctx, f, size, &p));
    *c = (chosen){p->tiling, p->tuned};
    return GMLP_OK;
}

gmlp_status gmlp_gemm_describe(gmlp_context *ctx, gmlp_elem a, gmlp_elem b, gmlp_gemm_precision precision, char *buf,
                               size_t size)
{
    static const char *const uses[] = {"", " for large products", " for narrow ones", " for deep ones"};
    const bool deep = gmlp_gemm_sizes_for(&ctx->dev)->deep_k != 0; /* else no product is deep (gmlp_gemm_class) */
    size_t n = 0;
    if (size)
        buf[0] = 0;
    for (int tb = 1; tb >= 0; tb--) { /* NT, then NN */
        const form f = {.a_elem = a, .b_elem = b, .tb = tb, .vw = 4, .precision = precision};
        chosen c[GMLP_GEMM_CLASSES];
        for (int s = GMLP_GEMM_SMALL; s < GMLP_GEMM_CLASSES; s++)
            GMLP_TRY(chosen_for(ctx, &f, (gmlp_gemm_size)s, &c[s]));
        n += (size_t)snprintf(buf + (n < size ? n : size), n < size ? size - n : 0, "%s", tb ? "NT: " : "; NN: ");
        for (int s = GMLP_GEMM_SMALL; s < GMLP_GEMM_CLASSES; s++) {
            bool same = c[s].t == c[GMLP_GEMM_SMALL].t && c[s].tuned == c[GMLP_GEMM_SMALL].tuned;
            if (s != GMLP_GEMM_SMALL && (same || (s == GMLP_GEMM_DEEP && !deep)))
                continue;
            n += (size_t)snprintf(buf + (n < size ? n : size), n < size ? size - n : 0, "%s%s%s%s",
                                  s == GMLP_GEMM_SMALL ? "" : ", ", c[s].t ? c[s].t->name : "CLBlast",
                                  c[s].tuned ? " (tuned)" : "", uses[s]);
        }
    }
    return GMLP_OK;
}

size_t gmlp_gemm_variants(char *buf, size_t size)
{
    /* every default tiling with each pair of transposes on float operands,
     * the model's half-weight forms (NT with half B, NN with half A), its
     * BF16 mode's forms of bfloat16 weights and activations (default
     * tilings; with bfloat16 outputs too, which apply the epilogue in
     * registers where float ones sweep: not the one-work-item tiling), the
     * FP16 mode's of half weights, activations and outputs (the same), and
     * the model's float forms rounding to FP16 (the precision modes'
     * costliest rounding; not the one-work-item fallback tiled_4x4x4_4x4,
     * whose FP16 staging NVIDIA's sm_80/sm_90 build puts in a 128-byte
     * stack frame: a device runs it only where nothing larger fits, and
     * prefers any unspilled tiling); the tuner's other tilings in the model's forms;
     * all with float4 loads, whose staging needs the most registers,
     * unrolled as on GPUs.  CPU-only tilings are left out (tests/test_gemm
     * runs them), and so are the matrix engines' (the portability suite
     * builds those for their architectures); NVIDIA-only ones are marked
     * "FILE@nvidia". */
    static const form forms[] = {
        {.tb = true, .vw = 4},
        {.vw = 4},
        {.b_elem = GMLP_ELEM_F16, .tb = true, .vw = 4},
        {.a_elem = GMLP_ELEM_F16, .vw = 4},
        {.ta = true, .vw = 4},
        {.ta = true, .tb = true, .vw = 4},
        {.tb = true, .vw = 4, .precision = GMLP_GEMM_FP16},
        {.vw = 4, .precision = GMLP_GEMM_FP16},
        {.a_elem = GMLP_ELEM_BF16, .b_elem = GMLP_ELEM_BF16, .tb = true, .vw = 4, .precision = GMLP_GEMM_BF16},
        {.a_elem = GMLP_ELEM_BF16, .b_elem = GMLP_ELEM_BF16, .vw = 4, .precision = GMLP_GEMM_BF16},
        {.a_elem = GMLP_ELEM_BF16, .b_elem = GMLP_ELEM_BF16, .c_elem = GMLP_ELEM_BF16, .tb = true, .vw = 4,
         .precision = GMLP_GEMM_BF16},
        {.a_elem = GMLP_ELEM_BF16, .b_elem = GMLP_ELEM_BF16, .c_elem = GMLP_ELEM_BF16, .vw = 4,
         .precision = GMLP_GEMM_BF16},
        {.a_elem = GMLP_ELEM_F16, .b_elem = GMLP_ELEM_F16, .c_elem = GMLP_ELEM_F16, .tb = true, .vw = 4,
         .precision = GMLP_GEMM_FP16},
        {.a_elem = GMLP_ELEM_F16, .b_elem = GMLP_ELEM_F16, .c_elem = GMLP_ELEM_F16, .vw = 4,
         .precision = GMLP_GEMM_FP16},
    };
    size_t need = 0, n_all;
    char line[480];
    if (buf && size)
        buf[0] = 0;
    const gmlp_tiling *all = gmlp_gemm_tilings(&n_all);
    for (const gmlp_tiling *t = all; t < all + n_all; t++) {
        if (t->devices == CL_DEVICE_TYPE_CPU || t->needs)
            continue;
        const bool one_item = t->tm == t->wm && t->tn == t->wn;
        for (size_t h = 0; h < (gmlp_gemm_tiling_is_default(t) ? one_item ? 6 : 14 : 4); h++) {
            if (!gmlp_gemm_tiling_stores(t, forms[h].c_elem))
                continue;
            char defs[400];
            defines(defs, sizeof defs, &forms[h], t, true, false);
            int n = snprintf(line, sizeof line, "%s%s %s\n", t->kernel->file,
                             t->vendor == GMLP_VENDOR_NVIDIA ? "@nvidia" : "", defs);
            if (buf && need + (size_t)n < size)
                memcpy(buf + need, line, (size_t)n + 1);
            need += (size_t)n;
        }
    }
    return need;
}

/* The widest of 4, 2, 1 that divides an operand's offset, leading
 * dimension and batch stride: vector pointers need that alignment (the
 * tensor cores' staging loads 16-bit operands so too; the portable kernels
 * take them through vload_halfN or vloadN, which need none). */
static int vector_width(const gmlp_view *v)
{
    size_t bits = v->off | v->ld | v->stride;
    return bits % 4 == 0 ? 4 : bits % 2 == 0 ? 2 : 1;
}

int gmlp_gemm_class(const gmlp_context *ctx, const gmlp_gemm *g)
{
    const gmlp_gemm_sizes *s = gmlp_gemm_sizes_for(&ctx->dev);
    const size_t batch = g->batch ? g->batch : 1, m = g->m, n = g->n, cus = ctx->dev.compute_units;
    const size_t large_groups = (m + s->large_tile - 1) / s->large_tile * ((n + s->large_tile - 1) / s->large_tile);
    const size_t small_groups = (m + s->small_tile - 1) / s->small_tile * ((n + s->small_tile - 1) / s->small_tile);
    if (m <= s->narrow || n <= s->narrow)
        return GMLP_GEMM_NARROW;
    if (large_groups * batch >= s->large_groups_per_cu * cus)
        return GMLP_GEMM_LARGE;
    if (s->deep_k && g->k >= s->deep_k && small_groups * batch < cus)
        return GMLP_GEMM_DEEP;
    return GMLP_GEMM_SMALL;
}

static form form_of(const gmlp_gemm *g)
{
    int va = vector_width(&g->a), vb = vector_width(&g->b);
    return (form){.a_elem = g->a.elem, .b_elem = g->b.elem, .c_elem = g->c.elem, .ta = g->a.trans != 0,
                  .tb = g->b.trans != 0, .vw = va < vb ? va : vb, .precision = g->precision};
}

gmlp_status gmlp_gemm_launch(gmlp_context *ctx, const gmlp_gemm *g, const gmlp_kernel *k, const gmlp_tiling *t,
                             const char *label)
{
    const size_t batch = g->batch ? g->batch : 1, m = g->m, n = g->n;
    GMLP_TRY(gmlp_kernel_args(ctx, k, ARG_INT(m), ARG_INT(n), ARG_INT(g->k), ARG_MEM(g->a.buf), ARG_ULONG(g->a.off),
                              ARG_ULONG(g->a.ld), ARG_ULONG(g->a.stride), ARG_MEM(g->b.buf), ARG_ULONG(g->b.off),
                              ARG_ULONG(g->b.ld), ARG_ULONG(g->b.stride), ARG_FLOAT(g->beta), ARG_MEM(g->c.buf),
                              ARG_ULONG(g->c.off), ARG_ULONG(g->c.ld), ARG_ULONG(g->c.stride), GMLP_EPI_ARGS(g),
                              GMLP_ARG_END));
    size_t rx = (size_t)(t->tn / t->wn), ry = (size_t)(t->tm / t->wm);
    size_t global[3] = {(n + (size_t)t->tn - 1) / (size_t)t->tn * rx, (m + (size_t)t->tm - 1) / (size_t)t->tm * ry,
                        batch};
    size_t local[3] = {rx, ry, 1};
    return gmlp_kernel_launch_as(ctx, k, label ? label : k->label, 3, global, local);
}

gmlp_status gmlp_op_gemm_kernel(gmlp_context *ctx, const gmlp_gemm *g)
{
    if (g->m == 0 || g->n == 0)
        return GMLP_OK;
    GMLP_TRY(gmlp_gemm_check(ctx, g));
    const form f = form_of(g);
    const gmlp_gemm_plan *p;
    GMLP_TRY(planned(ctx, &f, (gmlp_gemm_size)gmlp_gemm_class(ctx, g), &p));
    return gmlp_gemm_run(ctx, g, p->kernel, p->tiling);
}

gmlp_status gmlp_op_gemm_tiled(gmlp_context *ctx, const gmlp_gemm *g, const gmlp_tiling *t, const char **skipped)
{
    *skipped = "an empty product";
    if (g->m == 0 || g->n == 0)
        return GMLP_OK;
    *skipped = "the tiling is not for this device (its type, vendor, engines or limits)";
    if (!gmlp_gemm_tiling_fits(&ctx->dev, t))
        return GMLP_OK;
    GMLP_TRY(gmlp_gemm_check(ctx, g));
    const form f = form_of(g);
    const gmlp_kernel *k;
    GMLP_TRY(variant(ctx, &f, t, &k, skipped));
    if (k && spills(ctx, k))
        *skipped = "its compiled kernel spills registers on this device";
    if (!k || spills(ctx, k))
        return GMLP_OK;
    *skipped = NULL;
    return gmlp_gemm_run(ctx, g, k, t);
}
