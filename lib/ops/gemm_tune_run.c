/* The tuning run behind gmlp_tune: every candidate on each group of a
 * model's GEMM shapes, timed, checked against the default kernel, the
 * fastest kept. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cl/clerr.h"
#include "core/alloc.h"
#include "core/half.h"
#include "ops/gemm_tune.h"
#include "ops/state.h"

/* A candidate's time: the fastest of this many calls.  On a shared machine
 * other work only adds time, so the minimum is the steady figure: on PoCL
 * (2 cores, 2026-11-24) the median of 3 let one block's time swing 1.5-3.3 ms
 * between runs and flip the winner; the minimum of 5 held within 3% in three
 * runs, each picking the same winners. */
#define TIMED_RUNS 5

/* CLBlast (1.5.3) keeps no disk cache: each process compiles its kernels on
 * the first call (about a second per routine on PoCL), where the library's
 * own variants come from the kernel cache.  A CLBlast candidate is charged
 * that first call's excess over its fastest, spread over this many calls of
 * the shape (a process that runs a 30-block model three times or so). */
#define CLBLAST_CALLS_PER_PROCESS 100

/* One shape's device buffers and the default kernel's result. */
typedef struct shape {
    gmlp_gemm g;
    cl_mem a, b, c, bias, gate;
    float *c0;   /* C's starting values */
    float *want; /* the default kernel's C */
    size_t c_elems;
} shape;

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static float next_value(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((rng >> 40) & 0xffffff) / (float)0x1000000 - 0.5f;
}

static gmlp_status filled(gmlp_context *ctx, size_t elems, gmlp_elem elem, cl_mem *out, float *keep)
{
    const size_t bytes = elems * gmlp_elem_size(elem);
    float *v = keep ? keep : gmlp_malloc(elems * sizeof *v);
    void *host = gmlp_malloc(bytes);
    gmlp_status st = GMLP_OK;
    if (!v || !host) {
        st = gmlp_fail(&ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory tuning");
    } else {
        for (size_t i = 0; i < elems; i++)
            v[i] = next_value();
        gmlp_elem_pack(elem, v, elems, host);
        st = gmlp_buffer_create(ctx, bytes, host, "a tuning operand", out);
    }
    if (v != keep)
        free(v);
    free(host);
    return st;
}

static void shape_free(gmlp_context *ctx, shape *s)
{
    gmlp_buffer_release(ctx, &s->a);
    gmlp_buffer_release(ctx, &s->b);
    gmlp_buffer_release(ctx, &s->c);
    gmlp_buffer_release(ctx, &s->bias);
    gmlp_buffer_release(ctx, &s->gate);
    free(s->c0);
    free(s->want);
}

static gmlp_status reset_c(gmlp_context *ctx, shape *s)
{
    cl_int e = clEnqueueWriteBuffer(ctx->queue, s->c, CL_TRUE, 0, s->c_elems * 4, s->c0, 0, NULL, NULL);
    return e == CL_SUCCESS ? GMLP_OK : gmlp_fail_cl(&ctx->err, "clEnqueueWriteBuffer", e);
}

static gmlp_status read_c(gmlp_context *ctx, shape *s, float *out)
{
    cl_int e = clEnqueueReadBuffer(ctx->queue, s->c, CL_TRUE, 0, s->c_elems * 4, out, 0, NULL, NULL);
    return e == CL_SUCCESS ? GMLP_OK : gmlp_fail_cl(&ctx->err, "clEnqueueReadBuffer", e);
}

/* Contiguous operands of the recorded shape, random values, and the default
 * kernel's result on them. */
static gmlp_status shape_make(gmlp_context *ctx, const gmlp_gemm *rec, shape *s)
{
    memset(s, 0, sizeof *s);
    s->g = *rec;
    gmlp_gemm *g = &s->g;
    size_t ar = g->a.trans ? g->k : g->m, ac = g->a.trans ? g->m : g->k;
    size_t br = g->b.trans ? g->n : g->k, bc = g->b.trans ? g->k : g->n;
    g->a = (gmlp_view){.ld = ac, .stride = ar * ac, .trans = rec->a.trans, .elem = rec->a.elem};
    g->b = (gmlp_view){.ld = bc, .stride = br * bc, .trans = rec->b.trans, .elem = rec->b.elem};
    g->c = (gmlp_view){.ld = g->n, .stride = g->m * g->n};
    s->c_elems = g->m * g->n * g->batch;
    s->c0 = gmlp_malloc(s->c_elems * sizeof *s->c0);
    s->want = gmlp_malloc(s->c_elems * sizeof *s->want);
    if (!s->c0 || !s->want)
        return gmlp_fail(&ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory tuning");
    GMLP_TRY(filled(ctx, ar * ac * g->batch, g->a.elem, &s->a, NULL));
    GMLP_TRY(filled(ctx, br * bc * g->batch, g->b.elem, &s->b, NULL));
    GMLP_TRY(filled(ctx, s->c_elems, GMLP_ELEM_F32, &s->c, s->c0));
    if (rec->bias)
        GMLP_TRY(filled(ctx, g->bias_rows ? g->m : g->n, GMLP_ELEM_F32, &s->bias, NULL));
    if (rec->gate.buf) {
        const gmlp_elem gate = gmlp_gemm_precision_inputs(g->precision);
        GMLP_TRY(filled(ctx, s->c_elems, gate, &s->gate, NULL));
        g->gate = (gmlp_view){.buf = s->gate, .ld = g->n, .stride = g->m * g->n, .elem = gate};
    }
    g->a.buf = s->a;
    g->b.buf = s->b;
    g->c.buf = s->c;
    g->bias = s->bias;
    gmlp_tuned *tuned = ctx->ops->tuned; /* the reference: the default choice */
    ctx->ops->tuned = NULL;
    gmlp_gemm_plan_clear(ctx);
    gmlp_status st = gmlp_op_gemm_kernel(ctx, g);
    ctx->ops->tuned = tuned;
    gmlp_gemm_plan_clear(ctx);
    GMLP_TRY(st);
    return read_c(ctx, s, s->want);
}

/* Candidate c of a group: index 0 .. n_tilings-1 a tiling, n_tilings CLBlast. */
static gmlp_status run_one(gmlp_context *ctx, const gmlp_gemm *g, const gmlp_tiling *t, int *ran)
{
    const char *skipped = NULL;
    GMLP_TRY(t ? gmlp_op_gemm_tiled(ctx, g, t, &skipped) : gmlp_op_gemm_clblast(ctx, g));
    *ran = skipped == NULL;
    return GMLP_OK;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Seconds of one call: summed profiled device time of its launches (kernel,
 * epilogue), else host time around a finish. */
static gmlp_status timed(gmlp_context *ctx, const gmlp_gemm *g, const gmlp_tiling *t, double *sec)
{
    int ran;
    gmlp_profile_clear(ctx);
    double t0 = now();
    GMLP_TRY(run_one(ctx, g, t, &ran));
    cl_int e = clFinish(ctx->queue);
    *sec = now() - t0;
    if (e != CL_SUCCESS)
        return gmlp_fail_cl(&ctx->err, "clFinish", e);
    if (!ctx->set.profiling)
        return GMLP_OK;
    double dev = 0;
    for (size_t i = 0; i < ctx->n_profile; i++) {
        cl_ulong ns;
        if ((e = gmlp_profile_ns(&ctx->profile[i], &ns)) != CL_SUCCESS)
            return gmlp_fail_cl(&ctx->err, "clGetEventProfilingInfo", e);
        dev += (double)ns * 1e-9;
    }
    gmlp_profile_clear(ctx);
    *sec = dev;
    return GMLP_OK;
}

/* Candidate t (NULL: CLBlast) on shape s: *sec its fastest call, or a reason
 * in *skipped. */
static gmlp_status try_candidate(gmlp_context *ctx, shape *s, const gmlp_tiling *t, float *got, double *sec,
                                 const char **skipped)
{
    int ran;
    GMLP_TRY(reset_c(ctx, s));
    double first = now();
    GMLP_TRY(run_one(ctx, &s->g, t, &ran)); /* also the first call, which may compile */
    if (!t) { /* CLBlast's compile, charged below (the kernel's variants come from the cache) */
        cl_int e = clFinish(ctx->queue);
        if (e != CL_SUCCESS)
            return gmlp_fail_cl(&ctx->err, "clFinish", e);
        first = now() - first;
    }
    if (!ran) {
        *skipped = "does not fit the compiled kernel, or spills";
        return GMLP_OK;
    }
    GMLP_TRY(read_c(ctx, s, got));
    /* float rounding in another summation order grows with k */
    double worst = 0, scale = 0;
    for (size_t i = 0; i < s->c_elems; i++) {
        double d = fabs((double)got[i] - s->want[i]);
        worst = d > worst || isnan(d) ? (isnan(d) ? INFINITY : d) : worst;
        scale = fabs(s->want[i]) > scale ? fabs(s->want[i]) : scale;
    }
    if (!(worst <= 1e-6 * (double)(s->g.k + 16) * (scale + 1))) {
        *skipped = "wrong result";
        return GMLP_OK;
    }
    *sec = INFINITY;
    for (int r = 0; r < TIMED_RUNS; r++) {
        double run;
        GMLP_TRY(timed(ctx, &s->g, t, &run));
        *sec = run < *sec ? run : *sec;
    }
    if (!t && first > *sec)
        *sec += (first - *sec) / CLBLAST_CALLS_PER_PROCESS;
    return GMLP_OK;
}

static void label(const gmlp_tiling *t, char *buf, size_t size)
{
    if (t)
        snprintf(buf, size, "kernel %s", t->name);
    else
        snprintf(buf, size, "clblast");
}

/* The candidates on the shapes of one slot. */
static gmlp_status tune_group(gmlp_context *ctx, size_t slot, shape *shapes, size_t n_shapes,
                              gmlp_tune_progress progress, void *user, gmlp_tuned *out, double *us)
{
    size_t n_tilings;
    const gmlp_tiling *tilings = gmlp_gemm_tilings(&n_tilings);
    /* CLBlast, where this build has it, for float operands in fp32 */
    const gmlp_tune_key key = gmlp_tune_slot_key(slot);
    int floats = key.a == GMLP_ELEM_F32 && key.b == GMLP_ELEM_F32 && key.precision == GMLP_GEMM_FP32 &&
                 gmlp_gemm_backend_find(GMLP_GEMM_CLBLAST);
    size_t count = n_tilings + (size_t)floats, max_c = 0;
    for (size_t i = 0; i < n_shapes; i++)
        max_c = shapes[i].c_elems > max_c ? shapes[i].c_elems : max_c;
    float *got = gmlp_malloc(max_c * sizeof *got);
    if (!got)
        return gmlp_fail(&ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory tuning");
    char group[64], name[64], best_name[64] = "";
    gmlp_tune_slot_name(slot, group, sizeof group);
    double best = INFINITY;
    gmlp_status st = GMLP_OK;
    for (size_t c = 0; c < count && st == GMLP_OK; c++) {
        const gmlp_tiling *t = c < n_tilings ? &tilings[c] : NULL;
        const char *skipped = NULL;
        double total = 0;
        label(t, name, sizeof name);
        if (t && !gmlp_gemm_tiling_fits(&ctx->dev, t))
            skipped = "does not fit the device";
        else if (t && !gmlp_gemm_tiling_runs(t, key.precision))
            skipped = "does not run this precision";
        for (size_t i = 0; i < n_shapes && !skipped && st == GMLP_OK; i++) {
            double sec = 0;
            st = try_candidate(ctx, &shapes[i], t, got, &sec, &skipped);
            total += sec;
        }
        if (st != GMLP_OK && !t) { /* CLBlast failing on a shape is a lost candidate, not a failed run */
            gmlp_log(&ctx->set.log, GMLP_LOG_INFO, "tuning %s: %s", group, ctx->err.msg);
            skipped = "CLBlast failed";
            st = GMLP_OK;
        }
        if (st != GMLP_OK)
            break;
        if (!skipped && total < best) {
            best = total;
            snprintf(best_name, sizeof best_name, "%s", name);
            out->set[slot] = 1;
            out->choice[slot] = (gmlp_tuned_choice){.clblast = !t, .tiling = t};
            us[slot] = total * 1e6;
        }
        if (progress) {
            gmlp_tune_step step = {group, name, (int)c, (int)count, skipped ? -1.0 : total * 1e6, skipped, 0};
            progress(user, &step);
        }
    }
    free(got);
    if (st == GMLP_OK && progress && best_name[0]) {
        gmlp_tune_step step = {group, best_name, (int)count, (int)count, best * 1e6, NULL, 1};
        progress(user, &step);
    }
    return st;
}

gmlp_status gmlp_tune_run(gmlp_context *ctx, const gmlp_gemm_record *rec, gmlp_tune_progress progress, void *user)
{
    gmlp_tuned *out = gmlp_malloc(sizeof *out);
    double *us = gmlp_calloc(GMLP_TUNE_SLOTS, sizeof *us);
    shape *shapes = gmlp_calloc(rec->n ? rec->n : 1, sizeof *shapes);
    size_t *slots = gmlp_calloc(rec->n ? rec->n : 1, sizeof *slots);
    gmlp_status st = GMLP_OK;
    if (!out || !us || !shapes || !slots)
        st = gmlp_fail(&ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory tuning");
    else if (ctx->ops->tuned)
        *out = *ctx->ops->tuned; /* winners of groups this model does not run stay */
    else
        memset(out, 0, sizeof *out);
    size_t made = 0;
    for (; st == GMLP_OK && made < rec->n; made++) {
        const gmlp_gemm *g = &rec->g[made];
        slots[made] =
            gmlp_tune_slot(gmlp_gemm_class(ctx, g), g->a.elem, g->b.elem, g->a.trans, g->b.trans, g->precision);
        st = shape_make(ctx, g, &shapes[made]);
    }
    int done[GMLP_TUNE_SLOTS] = {0};
    for (size_t i = 0; st == GMLP_OK && i < rec->n; i++) {
        if (done[slots[i]])
            continue;
        done[slots[i]] = 1;
        out->set[slots[i]] = 0;
        /* this slot's shapes, moved together */
        size_t n = 0;
        for (size_t j = i; j < rec->n; j++)
            if (slots[j] == slots[i]) {
                shape tmp = shapes[i + n];
                size_t tslot = slots[i + n];
                shapes[i + n] = shapes[j];
                slots[i + n] = slots[j];
                shapes[j] = tmp;
                slots[j] = tslot;
                n++;
            }
        st = tune_group(ctx, slots[i], &shapes[i], n, progress, user, out, us);
    }
    for (size_t i = 0; shapes && i < made; i++)
        shape_free(ctx, &shapes[i]);
    if (st == GMLP_OK)
        st = gmlp_tune_save(ctx, out, us);
    if (st == GMLP_OK) {
        free(ctx->ops->tuned);
        ctx->ops->tuned = out;
        gmlp_gemm_plan_clear(ctx);
        out = NULL;
    }
    free(out);
    free(us);
    free(shapes);
    free(slots);
    return st;
}
