/* The library's own GEMM (cl_kernels/gemm_tiled.cl, gemm_direct.cl): float,
 * half or bfloat16 operands (which CLBlast cannot read), the epilogue (bias, activation, the SGU gate) fused.
 * A variant is a tiling's kernel (gemm_tilings.c) compiled for one value of
 * each axis (gemm_variant.c): storages, transposes, vector width, precision.
 * Which variant a product runs is planned once per plan key (its size class and form) and
 * kept in the context's plan (ops/state.h): a call then only indexes it,
 * and runs it whole or split along k (gemm_split.c). */
#include <stdio.h>
#include <string.h>

#include "kernel_abi.h"
#include "ops/gemm_split.h"
#include "ops/gemm_variant.h"
#include "ops/state.h"
#include "ops/wgmma_splice.h"

typedef gmlp_gemm_variant form; /* a product's: its vector width the operands' alignment */

static gmlp_gemm_form form_kind(const form *f)
{
    return f->ta ? (f->tb ? GMLP_FORM_TT : GMLP_FORM_TN) : (f->tb ? GMLP_FORM_NT : GMLP_FORM_NN);
}

static bool on_cpu(const gmlp_context *ctx)
{
    return (ctx->dev.type & CL_DEVICE_TYPE_CPU) != 0;
}

static gmlp_gemm form_gemm(const form *f)
{
    return (gmlp_gemm){.a = {.elem = f->a, .trans = f->ta},
                       .b = {.elem = f->b, .trans = f->tb, .pairs = f->pairs},
                       .c = {.elem = f->c},
                       .precision = f->precision};
}

/* Why a tiling's variant is unusable (gmlp_op_gemm_tiled's *skipped). */
static const char *const why_ladder = "its matrix engine failed the capability ladder on this device";
static const char *const why_sweep =
    "its kernel applies the epilogue in a second sweep over C, which a 16-bit C cannot hold";
static const char *const why_fused = "its kernel has no prologue or row statistics (the portable kernels' alone)";
static const char *const why_form = "it takes the instruction's 16-bit operands only (wgmma)";
static const char *const why_pairs = "its kernel reads no B stored as pairs along k (the direct kernel's alone)";
const char gmlp_gemm_tiled_too_big[] =
    "its compiled kernel allows fewer work-items (or less local memory) than a tile needs on this device";

/* The local memory of the tiled kernel's prologue: (mean, rstd) of its
 * rows (gemm_tiled.cl's NORM_ROWS) */
static size_t prologue_bytes(int prologue, const gmlp_tiling *t)
{
    if (gmlp_tiling_direct(t) || prologue == GMLP_PROLOGUE_NONE)
        return 0;
    return 2 * sizeof(float) * (prologue == GMLP_PROLOGUE_NORM_A ? (size_t)t->tm : GMLP_NORM_B_ROWS);
}

/* Whether g's prologue is deeper than tiling t holds: NORM_B's rows on the
 * tiled kernel */
static bool prologue_too_deep(const gmlp_gemm *g, const gmlp_tiling *t)
{
    return g->norm.w && g->norm.of == GMLP_NORM_OF_B && !gmlp_tiling_direct(t) && g->k > GMLP_NORM_B_ROWS;
}

/* Tiling t's variant for form f; *k NULL when the compiled kernel cannot
 * run a whole tile (too many registers for that many work-items, say), or
 * its matrix engine failed the capability ladder (gemm_engines.c), *why
 * (if not NULL) then saying which. */
static gmlp_status variant(gmlp_context *ctx, const form *f, const gmlp_tiling *t, const gmlp_kernel **k,
                           const char **why)
{
    *k = NULL;
    if (!gmlp_gemm_tiling_stores(t, f->c)) {
        if (why)
            *why = why_sweep;
        return GMLP_OK;
    }
    if ((f->prologue || f->stats) && !gmlp_tiling_fuses(t)) {
        if (why)
            *why = why_fused;
        return GMLP_OK;
    }
    if (f->pairs && !gmlp_tiling_direct(t)) {
        if (why)
            *why = why_pairs;
        return GMLP_OK;
    }
    const gmlp_gemm_operands ops = {f->a, f->b, !f->ta, f->tb, f->precision};
    if (!gmlp_gemm_tiling_takes(t, &ops)) {
        if (why)
            *why = why_form;
        return GMLP_OK;
    }
    /* float operands of a cp.async tiling; the tiled kernel's prologue rows */
    const size_t local_limit = gmlp_gemm_tiling_local_limit(&ctx->dev, t);
    if (gmlp_gemm_tiling_form_bytes(t, &ops) + prologue_bytes(f->prologue, t) > local_limit) {
        if (why)
            *why = gmlp_gemm_tiled_too_big;
        return GMLP_OK;
    }
    char defs[400], label[170];
    gmlp_gemm_variant v = gmlp_gemm_variant_on(f, t);
    if (t->needs && (ctx->dev.engines & GMLP_ENGINE_EMULATED))
        v.issue = GMLP_ISSUE_EMULATED;
    gmlp_gemm_variant_defines(&v, t, gmlp_gemm_code(&ctx->dev), defs, sizeof defs);
    gmlp_gemm_variant_label(&v, t, label, sizeof label);
    gmlp_gemm g = form_gemm(f);
    g.b.pairs = 0; /* the self-test's operands are row-major: it proves the engine on the tiling's plain form */
    if (!gmlp_engine_verified(ctx, &g, t, defs, label)) { /* a matrix engine's tiling that failed its ladder */
        if (why)
            *why = why_ladder;
        return GMLP_OK;
    }
    /* wgmma's instructions spliced into the PTX (not where emulated: no PTX) */
    const gmlp_program_rewrite *rw = t->wgmma && v.issue == GMLP_ISSUE_NATIVE ? &gmlp_wgmma_rewrite : NULL;
    GMLP_TRY(gmlp_kernel_get_rewritten(ctx, t->kernel, defs, rw, label, k));
    if ((*k)->wg_max < (size_t)(t->tn / t->wn * (t->tm / t->wm)) || (*k)->local_mem > local_limit) {
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
    gmlp_gemm_plan *p = &ctx->ops->plan[(size_t)size * GMLP_GEMM_VARIANT_KEYS + gmlp_gemm_variant_key(f)];
    if (!p->kernel)
        GMLP_TRY(choose(ctx, f, size, &p->kernel, &p->tiling, &p->tuned));
    *out = p;
    return GMLP_OK;
}

/* The fused LayerNorms' prologue forms of a model's plain form f (planned
 * as p) on a portable kernel, where the device fuses: fc1 (a linear
 * product) on float x storing the model's inputs (its [u | v] or hidden
 * product); a token-axis product (mixing) on its B as f has it (the SGU's
 * v) or on float x (the token MLPs).  The row statistics need no program
 * of their own. */
static gmlp_status prepare_fused(gmlp_context *ctx, form f, gmlp_model_product prod, gmlp_gemm_size size,
                                 const gmlp_gemm_plan *p, gmlp_elem inputs)
{
    const gmlp_gemm_plan *q;
    if (!p || !gmlp_tiling_fuses(p->tiling))
        return GMLP_OK;
    if (prod == GMLP_PRODUCT_MIXING) {
        if (!gmlp_gemm_fusing(ctx, GMLP_NORM_OF_B))
            return GMLP_OK;
        f.prologue = GMLP_PROLOGUE_NORM_B;
        GMLP_TRY(planned(ctx, &f, size, &q));
        f.b = GMLP_ELEM_F32;
        return planned(ctx, &f, size, &q);
    }
    if (!gmlp_gemm_fusing(ctx, GMLP_NORM_OF_A) || f.a != GMLP_ELEM_F32)
        return GMLP_OK;
    f.prologue = GMLP_PROLOGUE_NORM_A;
    f.c = (uint8_t)inputs;
    return planned(ctx, &f, size, &q);
}

gmlp_status gmlp_gemm_prepare(gmlp_context *ctx, gmlp_elem weights, gmlp_elem inputs, gmlp_gemm_precision precision,
                              gmlp_linear_layout linear, gmlp_elem *outputs)
{
    /* the NT form stays: attention's q . k^T is NT, on the same operands in FP32 */
    const gmlp_model_product products[] = {GMLP_PRODUCT_LINEAR, GMLP_PRODUCT_MIXING, gmlp_linear_product(linear)};
    *outputs = inputs;
    for (size_t i = 0; i < 2u + (linear != GMLP_LINEAR_FILE); i++)
        for (int size = GMLP_GEMM_SMALL; size < GMLP_GEMM_CLASSES; size++) {
            const gmlp_gemm_plan *p[GMLP_GEMM_MODEL_ACTS] = {NULL, NULL, NULL};
            for (int x = 0; x < gmlp_gemm_model_acts(inputs); x++) {
                const form f = gmlp_gemm_model_form(weights, inputs, x, products[i], precision);
                const gmlp_gemm g = form_gemm(&f);
                if (!gmlp_gemm_on_clblast(ctx, size, &g)) /* else CLBlast, then epilogue.cl */
                    GMLP_TRY(planned(ctx, &f, (gmlp_gemm_size)size, &p[x]));
                GMLP_TRY(prepare_fused(ctx, f, products[i], (gmlp_gemm_size)size, p[x], inputs));
            }
            if (p[1] && p[2] && p[1]->tiling != p[2]->tiling)
                *outputs = GMLP_ELEM_F32;
        }
    return GMLP_OK;
}

gmlp_status gmlp_gemm_engine(gmlp_context *ctx, gmlp_elem weights, gmlp_gemm_precision precision,
                             gmlp_linear_layout linear, const char **engine)
{
    const form f = gmlp_gemm_model_form(weights, GMLP_ELEM_F32, 0, gmlp_linear_product(linear),
                                        precision); /* the linear layers' */
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
        const form f = {.a = (uint8_t)a, .b = (uint8_t)b, .tb = (uint8_t)tb, .vw = 4, .precision = (uint8_t)precision};
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

/* The widest of 4, 2, 1 (8 for 16-bit storage: 16 bytes) that divides an
 * operand's offset, leading dimension and batch stride: vector pointers
 * need that alignment (the tensor cores' staging loads 16-bit operands so
 * too; the portable kernels take them through vload_halfN or vloadN, which
 * need none). */
static int vector_width(const gmlp_view *v)
{
    size_t bits = v->off | v->ld | v->stride;
    return bits % 8 == 0 && v->elem != GMLP_ELEM_F32 ? 8 : bits % 4 == 0 ? 4 : bits % 2 == 0 ? 2 : 1;
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
    return (form){.a = (uint8_t)g->a.elem, .b = (uint8_t)g->b.elem, .c = (uint8_t)g->c.elem, .ta = g->a.trans != 0,
                  .tb = g->b.trans != 0, .pairs = g->b.pairs != 0, .vw = (uint8_t)(va < vb ? va : vb), .precision = (uint8_t)g->precision,
                  .prologue = (uint8_t)(!g->norm.w                     ? GMLP_PROLOGUE_NONE
                                        : g->norm.of == GMLP_NORM_OF_B ? GMLP_PROLOGUE_NORM_B
                                                                       : GMLP_PROLOGUE_NORM_A),
                  .stats = (uint8_t)(g->stats ? GMLP_GEMM_STATS_ROWS : GMLP_GEMM_STATS_NONE)};
}

/* Tiling t's work-items along n for g: its statistics' parts per row. */
static size_t parts_on(const gmlp_gemm *g, const gmlp_tiling *t)
{
    return (g->n + (size_t)t->tn - 1) / (size_t)t->tn * (size_t)(t->tn / t->wn);
}

size_t gmlp_gemm_stats_parts_max(size_t n)
{
    size_t count, most = 1;
    const gmlp_tiling *all = gmlp_gemm_tilings(&count);
    for (const gmlp_tiling *t = all; t < all + count; t++) {
        const gmlp_gemm g = {.n = n};
        if (gmlp_tiling_fuses(t) && parts_on(&g, t) > most)
            most = parts_on(&g, t);
    }
    return most;
}

gmlp_status gmlp_gemm_stats_parts(gmlp_context *ctx, const gmlp_gemm *g, size_t *parts)
{
    const form f = form_of(g);
    const gmlp_gemm_plan *p;
    GMLP_TRY(planned(ctx, &f, (gmlp_gemm_size)gmlp_gemm_class(ctx, g), &p));
    *parts = parts_on(g, p->tiling);
    return GMLP_OK;
}

bool gmlp_gemm_fusing(const gmlp_context *ctx, gmlp_gemm_norm_of of)
{
    const gmlp_gemm_forms_row *r = gmlp_gemm_forms_for(&ctx->dev);
    return ctx->set.fuse == GMLP_FUSE_ALL || (ctx->set.fuse && (of == GMLP_NORM_OF_B ? r->norm_b : r->norm_a));
}

gmlp_linear_layout gmlp_gemm_linear_layout(const gmlp_context *ctx, gmlp_gemm_precision p)
{
    const gmlp_gemm_forms_row *r = gmlp_gemm_forms_for(&ctx->dev);
    if (!ctx->set.pack)
        return GMLP_LINEAR_FILE;
    if ((r->pairs_precisions & GMLP_GEMM_PREC_SET(p)) && !(r->pairs_needs & ~ctx->dev.engines))
        return GMLP_LINEAR_PAIRS;
    return ctx->set.pack == GMLP_PACK_ALL || r->linear_kn ? GMLP_LINEAR_KN : GMLP_LINEAR_FILE;
}

gmlp_status gmlp_gemm_fuses(gmlp_context *ctx, const gmlp_gemm *g, bool *fuses)
{
    gmlp_gemm plain = *g;
    plain.norm = (gmlp_gemm_norm){0};
    plain.stats = NULL;
    const int cls = gmlp_gemm_class(ctx, g);
    *fuses = false;
    /* a producer of statistics alone fuses where either prologue does */
    const bool fusing = g->norm.w ? gmlp_gemm_fusing(ctx, g->norm.of)
                                  : gmlp_gemm_fusing(ctx, GMLP_NORM_OF_A) || gmlp_gemm_fusing(ctx, GMLP_NORM_OF_B);
    const bool transposed = g->norm.w && (g->norm.of == GMLP_NORM_OF_B ? g->b.trans : g->a.trans);
    if (!fusing || !g->m || !g->n || transposed || gmlp_gemm_on_clblast(ctx, cls, &plain))
        return GMLP_OK;
    /* only where the plain product's own tiling has the halves: a matrix
     * engine's row would give way to a portable one; then planned on such a
     * family (variant() refuses the others), prepared at load
     * (gmlp_gemm_prepare), so nothing builds */
    const form pf = form_of(&plain), f = form_of(g);
    const gmlp_gemm_plan *pp, *p;
    GMLP_TRY(planned(ctx, &pf, (gmlp_gemm_size)cls, &pp));
    if (!gmlp_tiling_fuses(pp->tiling))
        return GMLP_OK;
    GMLP_TRY(planned(ctx, &f, (gmlp_gemm_size)cls, &p));
    *fuses = !prologue_too_deep(g, p->tiling);
    return GMLP_OK;
}

gmlp_status gmlp_gemm_launch(gmlp_context *ctx, const gmlp_gemm *g, const gmlp_kernel *k, const gmlp_tiling *t,
                             const char *label)
{
    const size_t batch = g->batch ? g->batch : 1, m = g->m, n = g->n;
    if (g->stats)
        GMLP_TRY(gmlp_gemm_check_stats(ctx, "the row statistics", g->stats, g->m, parts_on(g, t), g->batch));
    if (prologue_too_deep(g, t))
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT,
                         "gemm: the prologue normalises %zu rows of B; the tiled kernel holds at most %d", g->k,
                         GMLP_NORM_B_ROWS);
    GMLP_TRY(gmlp_kernel_args(ctx, k, ARG_INT(m), ARG_INT(n), ARG_INT(g->k), ARG_MEM(g->a.buf), ARG_ULONG(g->a.off),
                              ARG_ULONG(g->a.ld), ARG_ULONG(g->a.stride), ARG_MEM(g->b.buf), ARG_ULONG(g->b.off),
                              ARG_ULONG(g->b.ld), ARG_ULONG(g->b.stride), ARG_FLOAT(g->beta), ARG_MEM(g->c.buf),
                              ARG_ULONG(g->c.off), ARG_ULONG(g->c.ld), ARG_ULONG(g->c.stride), GMLP_EPI_ARGS(g),
                              GMLP_NORM_ARGS(g), GMLP_ARG_END));
    size_t rx = (size_t)(t->tn / t->wn), ry = (size_t)(t->tm / t->wm);
    size_t global[3] = {(n + (size_t)t->tn - 1) / (size_t)t->tn * rx, (m + (size_t)t->tm - 1) / (size_t)t->tm * ry,
                        batch};
    size_t local[3] = {rx, ry, 1};
    gmlp_launch_moves(ctx, gmlp_gemm_moves(g, GMLP_MOVES_PRODUCT | GMLP_MOVES_EPILOGUE));
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
