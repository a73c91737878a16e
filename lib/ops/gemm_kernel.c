/* The library's own GEMM (cl_kernels/gemm.cl): float or half operands (which
 * CLBlast cannot read on devices without cl_khr_fp16), the epilogue (bias,
 * activation, the SGU gate) fused.
 * A variant is the kernel compiled for one operand-type pair, one pair of
 * transposes, one vector width and one tiling; each call picks the tiling by
 * the size of its product, among those the device's limits and the compiled
 * kernel allow, and the widest vector loads its operands' alignment allows.
 * The tilings are data (gmlp_gemm_variants lists them for the portability
 * suite). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernel_abi.h"
#include "ops/ops.h"

typedef gmlp_tiling tiles;

/* 8 x 8 outputs per work-item use each staged value most (on PoCL, twice the
 * speed of 4 x 4), 16 x 16 work-items.  NVIDIA first: 8-deep slices, twice
 * the FMAs per local-memory load instruction of TK 2 (16 against 8,
 * bench/NOTES.md), spill-free in 125-129 registers (ptxas -v for sm_80 and
 * sm_90 on clang-15's PTX, 2026-11-24; the portability suite checks it): a
 * static choice until a tuning run on an NVIDIA GPU weighs it against TK 2
 * (the tuner has both).  Elsewhere TK 2: with the epilogue in registers
 * deeper slices spilled on RDNA3 (gfx1100, clang-15: 124 bytes/lane at TK 4,
 * 472 at TK 8; TK 2: 119 VGPRs, none) and on Intel (dg2, tgllp); TK 2 is
 * also NVIDIA's where its own compiler spills the deeper build. */
static const tiles large[] = {{128, 128, 8, 8, 8, 4, 0, 0, 1}, {128, 128, 2, 8, 8, 4, 0, 0, 0}};
#define N_LARGE (sizeof large / sizeof *large)

/* For products too small to keep the device busy with large tiles, and for
 * devices that do not take them: in order of preference. */
static const tiles candidates[] = {
    {64, 64, 8, 4, 4, 4, 0, 0, 0}, /* 16 x 16 work-items */
    {32, 32, 8, 4, 4, 4, 0, 0, 0}, /* 8 x 8 */
    {16, 16, 4, 4, 4, 4, 0, 0, 0}, /* 4 x 4; 8-deep slices spilled on RDNA3 (gfx1100) */
    {4, 4, 4, 4, 4, 4, 0, 0, 0},   /* one work-item, for a device that runs nothing larger */
};
#define N_CANDIDATES (sizeof candidates / sizeof *candidates)

/* Few output tiles over a deep k (fc2 and the stem at batch 1): small tiles
 * give more work-groups, 2 x 2 outputs each, 16-deep slices. */
static const tiles deep = {16, 16, 16, 2, 2, 4, 0, 0, 0}; /* 8 x 8 work-items */

/* Products with at most this many rows or columns (a decoding step, a head
 * of few classes): on GPUs the 16 x 16 tiles, so that little of each tile is
 * padding. */
#define NARROW 16
static const tiles *const narrow = &candidates[2];

/* CPUs take the direct variant (gemm.cl: no local memory, which is only a
 * copy there, no barriers, float8 arithmetic written out) for every product.
 * The blocks are the winners of quiet tuning runs (gmlp-bench --tune,
 * gmlp_ti16_224 at batch 8, PoCL 3.1, 2-core EPYC with AVX2), device time of
 * the model's GEMM group: NT (fc1 + fc2 + stem) 4 x 16 per work-item 9.9 ms
 * (6 x 16: 13.1, the tiled kernel's 128x128x2: 123, CLBlast: 103;
 * 2026-11-23).  NN (the token mixing, its SGU gate fused since): 6 x 16,
 * which three runs on 2026-11-24 put at 1.5-3.3 ms against 3 x 16's 2.0-3.3
 * (tiled: 44, CLBlast: 36); the whole forward, six rounds in turn with each
 * block forced by a tuning file: 32.9 images/s median (6 x 16) against 31.6
 * (3 x 16), 31.8 (4 x 16), 32.4 (4 x 24).  Narrow products (a decoding step,
 * the head): one row of 32. */
static const tiles direct_nt = {16, 32, 1, 4, 16, 8, 1, 1, 0};    /* 2 x 4 work-items */
static const tiles direct = {24, 32, 1, 6, 16, 8, 1, 1, 0};       /* 4 x 2 */
static const tiles direct_narrow = {4, 64, 1, 1, 32, 8, 1, 1, 0}; /* 2 x 4 */

/* Large tiles once they give each compute unit this many work-groups: on
 * a GPU a few, to switch between while others wait on memory (a guess, not
 * measured); a CPU core runs one at a time, and on PoCL large tiles beat
 * small ones even at one per core. */
#define LARGE_GROUPS_PER_GPU_CU 4
#define LARGE_GROUPS_PER_CPU_CU 1
/* The deep tiling when the small one leaves most compute units idle and k is
 * at least this deep. */
#define DEEP_K 256

typedef enum size_class {
    SMALL = GMLP_GEMM_SMALL,
    LARGE = GMLP_GEMM_LARGE,
    NARROW_CLASS = GMLP_GEMM_NARROW,
    DEEP = GMLP_GEMM_DEEP,
    N_CLASSES = GMLP_GEMM_CLASSES
} size_class;

/* Tuning (gemm_tune.c) tries these beside the defaults: neighbours of the
 * defaults in depth, shape and outputs per work-item, picked by hand (not a
 * search).  None is used unless a tuning run on the device chose it.  Left
 * out because they spill somewhere (portability suite, 2026-11-23):
 * 64x64x16/4x4 and 32x32x16/4x4 (gfx1100); 128x128x4/8x8 and 64x64x8/8x8
 * spill on dg2, gfx1100 and tgllp, so they are tried on NVIDIA GPUs only. */
static const tiles extras[] = {
    {128, 64, 4, 8, 4, 4, 0, 0, 0},
    {64, 128, 4, 4, 8, 4, 0, 0, 0},
    {64, 64, 4, 4, 4, 4, 0, 0, 0},
    {32, 64, 8, 4, 4, 4, 0, 0, 0},
    {64, 32, 8, 4, 4, 4, 0, 0, 0},
    {32, 32, 8, 2, 2, 4, 0, 0, 0},
    {16, 16, 8, 2, 2, 4, 0, 0, 0},
    {4, 64, 1, 1, 4, 4, 1, 0, 0},
    {8, 64, 1, 2, 8, 4, 1, 0, 0},
    /* NVIDIA only (spill-free there, 2026-11-24): 4-deep slices of the large
     * tiles, and 8 x 8 per work-item on 64 x 64 tiles for mid-sized products */
    {128, 128, 4, 8, 8, 4, 0, 0, 1},
    {64, 64, 8, 8, 8, 4, 0, 0, 1},
    /* CPUs: other blocks of the direct variant (3 x 16: NN's default until
     * 2026-11-24), and float4 for 128-bit vector units */
    {12, 32, 1, 3, 16, 8, 1, 1, 0},
    {32, 48, 1, 4, 24, 8, 1, 1, 0},
    {24, 16, 1, 6, 8, 8, 1, 1, 0},
    {16, 16, 1, 4, 8, 4, 1, 1, 0},
};

/* the defaults: the large ones, candidates, deep, the three direct ones */
#define N_DEFAULTS (N_LARGE + N_CANDIDATES + 4)

const gmlp_tiling *const *gmlp_gemm_tilings(size_t *n)
{
    static const tiles *const all[] = {
        &large[0],  &large[1],   &candidates[0], &candidates[1], &candidates[2], &candidates[3], &deep,
        &direct_nt, &direct,     &direct_narrow, &extras[0],     &extras[1],     &extras[2],     &extras[3],
        &extras[4], &extras[5],  &extras[6],     &extras[7],     &extras[8],     &extras[9],     &extras[10],
        &extras[11], &extras[12], &extras[13],   &extras[14]};
    _Static_assert(sizeof all / sizeof *all == N_DEFAULTS + sizeof extras / sizeof *extras,
                   "every tiling listed once");
    *n = sizeof all / sizeof *all;
    return all;
}

/* One variant: operand types, transposes, vector width. */
typedef struct form {
    int a_half, b_half, ta, tb, vw;
} form;

/* Loops unrolled (gemm.cl's GMLP_GEMM_UNROLL) everywhere but on CPUs. */
static int unrolled(const gmlp_context *ctx)
{
    return (ctx->dev.type & CL_DEVICE_TYPE_CPU) == 0;
}

static const gmlp_kernel_spec gemm = {"gemm.cl", "gmlp_gemm"};

/* The vector width: the direct variant's arithmetic (vloadn needs no
 * alignment), else the widest the operands' alignment allows up to t's. */
static int vw(const form *f, const tiles *t)
{
    return t->direct || f->vw > t->vw ? t->vw : f->vw;
}

static int defines(char *buf, size_t size, const form *f, const tiles *t, int unroll)
{
    return snprintf(buf, size,
                    "-DGMLP_GEMM_UNROLL=%d -DGMLP_GEMM_A_HALF=%d -DGMLP_GEMM_B_HALF=%d -DGMLP_GEMM_TA=%d -DGMLP_GEMM_TB=%d "
                    "-DGMLP_GEMM_DIRECT=%d -DGMLP_GEMM_VW=%d -DGMLP_GEMM_TM=%d -DGMLP_GEMM_TN=%d -DGMLP_GEMM_TK=%d "
                    "-DGMLP_GEMM_WM=%d -DGMLP_GEMM_WN=%d",
                    unroll, f->a_half, f->b_half, f->ta, f->tb, t->direct, vw(f, t), t->tm, t->tn, t->tk, t->wm, t->wn);
}

static size_t local_bytes(const tiles *t)
{
    /* gemm.cl: two slices of each operand, rows padded by 4 */
    return t->direct ? 0 : 2 * sizeof(float) * (size_t)t->tk * (size_t)(t->tm + 4 + t->tn + 4);
}

static int is_nvidia(const gmlp_devinfo *d)
{
    return !strncmp(d->vendor, "NVIDIA", 6);
}

static int fits_device(const gmlp_devinfo *d, const tiles *t)
{
    size_t rx = (size_t)(t->tn / t->wn), ry = (size_t)(t->tm / t->wm);
    return (!t->cpu_only || (d->type & CL_DEVICE_TYPE_CPU)) && (!t->nvidia_only || is_nvidia(d)) &&
           rx * ry <= d->max_wg && rx <= d->max_wi[0] && ry <= d->max_wi[1] && local_bytes(t) <= d->local_mem;
}

int gmlp_gemm_tiling_fits(const gmlp_devinfo *dev, const gmlp_tiling *t)
{
    return fits_device(dev, t);
}

/* Tiling t's variant; *k NULL when the compiled kernel cannot run a whole
 * tile (too many registers for that many work-items, say). */
static gmlp_status variant(gmlp_context *ctx, const form *f, const tiles *t, const gmlp_kernel **k)
{
    static const char *const tr[] = {"N", "T"};
    char defs[400], label[160];
    defines(defs, sizeof defs, f, t, unrolled(ctx));
    snprintf(label, sizeof label, "gmlp_gemm%s %dx%dx%d/%dx%d %s%s v%d A:%s B:%s", t->direct ? "_direct" : "", t->tm,
             t->tn, t->tk, t->wm, t->wn, tr[f->ta], tr[f->tb], vw(f, t),
             f->a_half ? "half" : "float", f->b_half ? "half" : "float");
    GMLP_TRY(gmlp_kernel_get(ctx, &gemm, defs, label, k));
    if ((*k)->wg_max < (size_t)(t->tn / t->wn * (t->tm / t->wm)) || (*k)->local_mem > ctx->dev.local_mem) {
        gmlp_log(&ctx->set.log, GMLP_LOG_INFO, "%s on '%s': %zu work-items allowed, too few; trying smaller tiles",
                 label, ctx->dev.name, (*k)->wg_max);
        *k = NULL;
    }
    return GMLP_OK;
}

/* The first of list[0..n) that the device and the compiled kernel take; NULL if none. */
static gmlp_status first_fitting(gmlp_context *ctx, const form *f, const tiles *list, size_t n,
                                 const gmlp_kernel **k, const tiles **t)
{
    *k = NULL;
    for (size_t i = 0; i < n && !*k; i++)
        if (fits_device(&ctx->dev, &list[i])) {
            GMLP_TRY(variant(ctx, f, &list[i], k));
            *t = &list[i];
        }
    return GMLP_OK;
}

/* The same, preferring one that does not spill on a GPU (private memory
 * there is spilled registers), else the first that builds: for the large
 * tiles, whose NVIDIA-only deep slices are worth it only in registers. */
static gmlp_status first_unspilled(gmlp_context *ctx, const form *f, const tiles *list, size_t n,
                                   const gmlp_kernel **k, const tiles **t)
{
    const gmlp_kernel *spilling = NULL;
    const tiles *spilling_t = NULL;
    for (size_t i = 0; i < n; i++) {
        GMLP_TRY(first_fitting(ctx, f, &list[i], 1, k, t));
        if (*k && ((ctx->dev.type & CL_DEVICE_TYPE_CPU) || (*k)->private_mem == 0))
            return GMLP_OK;
        if (*k && !spilling) {
            gmlp_log(&ctx->set.log, GMLP_LOG_INFO, "GEMM tiling %dx%dx%d spills on '%s' (%llu bytes of private memory)",
                     list[i].tm, list[i].tn, list[i].tk, ctx->dev.name, (unsigned long long)(*k)->private_mem);
            spilling = *k, spilling_t = *t;
        }
    }
    *k = spilling;
    *t = spilling_t;
    return GMLP_OK;
}

/* NVIDIA GPUs' defaults where a tuning run beat the ones above (gmlp-bench
 * --tune --model gmlp_s16_224 --batch 1,256 --weights f32,f16 on an H100
 * 80GB HBM3, driver 580.159.04, 2026-11-24; device time per call, float
 * weights, then half):
 * - large NN (the spatial matmul at batch 256): 32x64x8/4x4 671 / 762 us,
 *   128x128x8/8x8 789 / 854, 64x64x8/4x4 774 / 882, CLBlast 1432;
 * - small NN (it at batch 1): the deep tiling 16x16x16/2x2 14.5 / 15.7 us,
 *   64x64x8/4x4 21.5 / 25.2, 32x32x8/4x4 18.3 / 23.1, CLBlast 24.6;
 * - narrow NT (the head at batch 1): 16x16x16/2x2 13.2 / 16.6 us,
 *   16x16x4/4x4 25.5 / 28.9.
 * Large NT (fc1, fc2) kept 128x128x8/8x8, the best kernel there (2609 us per
 * fc1 + fc2, 64x64x8/8x8 2783); deep NT kept the deep tiling. */
static const struct {
    size_class size;
    int ta, tb;
    const tiles *t;
} nvidia_defaults[] = {{LARGE, 0, 0, &extras[3]}, {SMALL, 0, 0, &deep}, {NARROW_CLASS, 0, 1, &deep}};

static const tiles *vendor_default(const gmlp_devinfo *d, const form *f, size_class size)
{
    if (!(d->type & CL_DEVICE_TYPE_GPU) || !is_nvidia(d))
        return NULL;
    for (size_t i = 0; i < sizeof nvidia_defaults / sizeof *nvidia_defaults; i++)
        if (nvidia_defaults[i].size == size && nvidia_defaults[i].ta == f->ta && nvidia_defaults[i].tb == f->tb)
            return nvidia_defaults[i].t;
    return NULL;
}

/* The variant for a product of this size class: the vendor's default or its
 * own tiling when it fits, else the small one. */
static gmlp_status pick(gmlp_context *ctx, const form *f, size_class size, const gmlp_kernel **k, const tiles **t)
{
    int cpu = (ctx->dev.type & CL_DEVICE_TYPE_CPU) != 0;
    const tiles *vendor = vendor_default(&ctx->dev, f, size);
    *k = NULL;
    if (vendor)
        GMLP_TRY(first_fitting(ctx, f, vendor, 1, k, t));
    if (*k)
        return GMLP_OK;
    if (cpu)
        GMLP_TRY(first_fitting(ctx, f, size == NARROW_CLASS ? &direct_narrow : !f->ta && f->tb ? &direct_nt : &direct, 1, k,
                               t));
    else if (size == LARGE)
        GMLP_TRY(first_unspilled(ctx, f, large, N_LARGE, k, t));
    else if (size == DEEP)
        GMLP_TRY(first_fitting(ctx, f, &deep, 1, k, t));
    else if (size == NARROW_CLASS)
        GMLP_TRY(first_fitting(ctx, f, narrow, (size_t)(candidates + N_CANDIDATES - narrow), k, t));
    if (!*k)
        GMLP_TRY(first_fitting(ctx, f, candidates, N_CANDIDATES, k, t));
    if (!*k)
        return gmlp_fail(&ctx->err, GMLP_ERR_UNSUPPORTED,
                         "no GEMM tiling fits '%s' (work-group size %zu, local memory %llu bytes)", ctx->dev.name,
                         ctx->dev.max_wg, (unsigned long long)ctx->dev.local_mem);
    return GMLP_OK;
}

/* The variant a product of g's form and this size class runs: the device's
 * tuned tiling, or the defaults where there is none or it does not build to
 * fit; *tuned (if asked) says which. */
static gmlp_status choose(gmlp_context *ctx, const form *f, const gmlp_gemm *g, size_class size, const gmlp_kernel **k,
                          const tiles **t, int *tuned)
{
    const gmlp_tuned_choice *w = gmlp_gemm_tuned(ctx, size, g);
    *k = NULL;
    if (w && w->tiling) {
        *t = w->tiling;
        GMLP_TRY(variant(ctx, f, *t, k));
    }
    if (tuned)
        *tuned = *k != NULL;
    return *k ? GMLP_OK : pick(ctx, f, size, k, t);
}

static gmlp_gemm form_gemm(const form *f)
{
    return (gmlp_gemm){.a = {.half = f->a_half, .trans = f->ta}, .b = {.half = f->b_half, .trans = f->tb}};
}

gmlp_status gmlp_gemm_prepare(gmlp_context *ctx, int half_weights)
{
    /* {a_half, b_half, ta, tb}: the model's products, NT (activations x
     * linear weights) and NN (token mixing: weights x activations, and
     * attention), with 4-aligned operands; others build on first use */
    const int forms[][4] = {{0, 0, 0, 1}, {0, 0, 0, 0}, {0, 1, 0, 1}, {1, 0, 0, 0}};
    const gmlp_kernel *k;
    const tiles *t;
    for (size_t i = half_weights ? 2 : 0; i < (half_weights ? 4 : 2); i++) {
        const form f = {forms[i][0], forms[i][1], forms[i][2], forms[i][3], 4};
        const gmlp_gemm g = form_gemm(&f);
        for (int size = SMALL; size < N_CLASSES; size++)
            if (!gmlp_gemm_on_clblast(ctx, size, &g)) /* else CLBlast, then epilogue.cl */
                GMLP_TRY(choose(ctx, &f, &g, (size_class)size, &k, &t, NULL));
    }
    return GMLP_OK;
}

/* One size class's choice, as the report prints it. */
typedef struct chosen {
    const tiles *t; /* NULL: CLBlast */
    int tuned;
} chosen;

/* c into buf: in full for the first of a form, else briefly. */
static void choice_text(char *buf, size_t size, chosen c, int first)
{
    const char *mark = c.tuned ? ", tuned" : "";
    if (!c.t)
        snprintf(buf, size, "CLBlast%s", c.tuned ? " (tuned)" : "");
    else
        snprintf(buf, size, first ? "%s%dx%dx%d tiles (%dx%d per work-item%s)" : "%s%dx%dx%d (%dx%d%s)",
                 c.t->direct ? "direct " : "", c.t->tm, c.t->tn, c.t->tk, c.t->wm, c.t->wn, mark);
}

gmlp_status gmlp_gemm_describe(gmlp_context *ctx, int a_half, int b_half, char *buf, size_t size)
{
    static const char *const uses[] = {"", "large products", "narrow ones", "deep ones"};
    const int cpu = (ctx->dev.type & CL_DEVICE_TYPE_CPU) != 0; /* no deep class there (gmlp_gemm_class) */
    size_t n = 0;
    if (size)
        buf[0] = 0;
    for (int tb = 1; tb >= 0; tb--) { /* NT, then NN */
        const form f = {a_half, b_half, 0, tb, 4};
        const gmlp_gemm g = form_gemm(&f);
        chosen c[N_CLASSES];
        char first[96], other[96];
        for (int s = SMALL; s < N_CLASSES; s++) {
            const gmlp_kernel *k;
            c[s] = (chosen){NULL, 0};
            if (gmlp_gemm_on_clblast(ctx, s, &g))
                c[s].tuned = ctx->set.gemm != GMLP_GEMM_CLBLAST;
            else
                GMLP_TRY(choose(ctx, &f, &g, (size_class)s, &k, &c[s].t, &c[s].tuned));
        }
        choice_text(first, sizeof first, c[SMALL], 1);
        n += (size_t)snprintf(buf + (n < size ? n : size), n < size ? size - n : 0, "%s%s: %s", tb ? "" : "; ",
                              tb ? "NT" : "NN", first);
        for (int s = LARGE; s < N_CLASSES; s++)
            if ((c[s].t != c[SMALL].t || c[s].tuned != c[SMALL].tuned) && (s != DEEP || !cpu)) {
                choice_text(other, sizeof other, c[s], 0);
                n += (size_t)snprintf(buf + (n < size ? n : size), n < size ? size - n : 0, ", %s for %s", other,
                                      uses[s]);
            }
    }
    return GMLP_OK;
}

size_t gmlp_gemm_variants(char *buf, size_t size)
{
    /* every default tiling with each pair of transposes on float operands
     * and the model's half-weight forms (NT with half B, NN with half A);
     * the tuner's extras in the model's forms; all with float4 loads, whose
     * staging needs the most registers, unrolled as on GPUs.  CPU-only
     * tilings are left out (tests/test_gemm runs them); NVIDIA-only ones are
     * marked "gemm.cl@nvidia". */
    static const int forms[][4] = {{0, 0, 0, 1}, {0, 0, 0, 0}, {0, 1, 0, 1}, {1, 0, 0, 0}, {0, 0, 1, 0}, {0, 0, 1, 1}};
    size_t need = 0, n_all;
    char line[480];
    if (buf && size)
        buf[0] = 0;
    const tiles *const *all = gmlp_gemm_tilings(&n_all);
    for (size_t i = 0; i < n_all; i++) {
        if (all[i]->cpu_only)
            continue;
        for (size_t h = 0; h < (i < N_DEFAULTS ? 6 : 4); h++) {
            char defs[400];
            const form f = {forms[h][0], forms[h][1], forms[h][2], forms[h][3], 4};
            defines(defs, sizeof defs, &f, all[i], 1);
            int n = snprintf(line, sizeof line, "%s%s %s\n", gemm.file, all[i]->nvidia_only ? "@nvidia" : "", defs);
            if (buf && need + (size_t)n < size)
                memcpy(buf + need, line, (size_t)n + 1);
            need += (size_t)n;
        }
    }
    return need;
}

/* The widest of 4, 2, 1 that divides a float operand's offset, leading
 * dimension and batch stride (vector pointers need that alignment); half
 * operands load through vload_halfN, which needs none. */
static int vector_width(const gmlp_view *v)
{
    if (v->half)
        return 4;
    size_t bits = v->off | v->ld | v->stride;
    return bits % 4 == 0 ? 4 : bits % 2 == 0 ? 2 : 1;
}

int gmlp_gemm_class(const gmlp_context *ctx, const gmlp_gemm *g)
{
    const size_t batch = g->batch ? g->batch : 1, m = g->m, n = g->n;
    const size_t tm = (size_t)large[0].tm, tn = (size_t)large[0].tn; /* every large tiling's */
    size_t groups = (m + tm - 1) / tm * ((n + tn - 1) / tn);
    size_t small_groups = (m + 63) / 64 * ((n + 63) / 64) * batch;
    int cpu = (ctx->dev.type & CL_DEVICE_TYPE_CPU) != 0;
    size_t per_cu = cpu ? LARGE_GROUPS_PER_CPU_CU : LARGE_GROUPS_PER_GPU_CU;
    size_class size = m <= NARROW || n <= NARROW                                ? NARROW_CLASS
                      : groups * batch >= per_cu * (size_t)ctx->dev.compute_units ? LARGE
                      : !cpu && g->k >= DEEP_K && small_groups < ctx->dev.compute_units ? DEEP
                                                                                     : SMALL;
    return size;
}

static form form_of(const gmlp_gemm *g)
{
    int va = vector_width(&g->a), vb = vector_width(&g->b);
    return (form){g->a.half, g->b.half, g->a.trans != 0, g->b.trans != 0, va < vb ? va : vb};
}

/* g on variant k of tiling t. */
static gmlp_status launch(gmlp_context *ctx, const gmlp_gemm *g, const gmlp_kernel *k, const tiles *t)
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
    return gmlp_kernel_launch(ctx, k, 3, global, local);
}

gmlp_status gmlp_op_gemm_kernel(gmlp_context *ctx, const gmlp_gemm *g)
{
    if (g->m == 0 || g->n == 0)
        return GMLP_OK;
    GMLP_TRY(gmlp_gemm_check(ctx, g));
    const size_class size = (size_class)gmlp_gemm_class(ctx, g);
    const form f = form_of(g);
    const gmlp_kernel *k;
    const tiles *t;
    GMLP_TRY(choose(ctx, &f, g, size, &k, &t, NULL));
    return launch(ctx, g, k, t);
}

gmlp_status gmlp_op_gemm_tiled(gmlp_context *ctx, const gmlp_gemm *g, const gmlp_tiling *t, int *ran)
{
    *ran = 0;
    if (g->m == 0 || g->n == 0 || !fits_device(&ctx->dev, t))
        return GMLP_OK;
    GMLP_TRY(gmlp_gemm_check(ctx, g));
    const form f = form_of(g);
    const gmlp_kernel *k;
    GMLP_TRY(variant(ctx, &f, t, &k));
    /* private memory on a GPU is spilled registers; on a CPU it is the
     * stack every kernel uses (PoCL reports the accumulator arrays) */
    if (!k || (k->private_mem > 0 && !(ctx->dev.type & CL_DEVICE_TYPE_CPU)))
        return GMLP_OK;
    *ran = 1;
    return launch(ctx, g, k, t);
}
