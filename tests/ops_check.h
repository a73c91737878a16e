/* Device-buffer helpers of the op tests (internal API): one context per test
 * program, random data, upload, download and comparison with a reference. */
#ifndef GMLP_OPS_CHECK_H
#define GMLP_OPS_CHECK_H

#include "check.h"
#include "ops/ops.h"

static gmlp_context *ctx;
static unsigned seed = 12345;

static inline float *rnd(size_t n)
{
    float *p = calloc(n ? n : 1, sizeof *p); /* zeroed: gcc -O3 saw n = 0's element go unset */
    for (size_t i = 0; i < n; i++)
        p[i] = 2.0f * check_rand(&seed);
    return p;
}

static inline cl_mem up_bytes(const void *host, size_t bytes)
{
    cl_mem m;
    gmlp_status st = gmlp_buffer_create(ctx, bytes, host, "test buffer", &m);
    if (st != GMLP_OK) {
        printf("FAIL: upload: %s\n", gmlp_last_error(ctx));
        exit(1);
    }
    return m;
}

static inline cl_mem up(const float *host, size_t n)
{
    return up_bytes(host, n * sizeof(float));
}

static inline void down(cl_mem m, float *host, size_t n)
{
    cl_int e = clEnqueueReadBuffer(ctx->queue, m, CL_TRUE, 0, n * sizeof(float), host, 0, NULL, NULL);
    if (e != CL_SUCCESS) {
        printf("FAIL: clEnqueueReadBuffer %d\n", e);
        exit(1);
    }
}

/* Compares device buffer m (n floats) with want, relative to the largest
 * |want| (at least 1e-3), and releases m. */
static inline void expect(const char *what, cl_mem m, const float *want, size_t n, double tol)
{
    float *got = malloc((n ? n : 1) * sizeof *got);
    double *w = malloc((n ? n : 1) * sizeof *w);
    down(m, got, n);
    for (size_t i = 0; i < n; i++)
        w[i] = want[i];
    double e = rel_error(got, w, n, 1e-3);
    CHECK(e <= tol, "%s: max relative error %.3g > %.3g", what, e, tol);
    free(got), free(w);
    gmlp_buffer_release(ctx, &m);
}

/* Cases a device's compiler would not let run at all (its kernels allow a
 * work-group fewer work-items than the tiling needs: rusticl's 32), skipped. */
static int cases_run, cases_too_big;

/* Whether kernel k, a tiling's, may run work-groups of items work-items;
 * if not, says so for case what and counts the case skipped. */
static inline int fits_groups(const gmlp_kernel *k, size_t items, const char *what)
{
    if (k->wg_max >= items) {
        cases_run++;
        return 1;
    }
    if (cases_too_big++ < 3)
        printf("skip %s: the compiled kernel allows %zu work-items a group, the tiling needs %zu\n", what, k->wg_max,
               items);
    return 0;
}

/* check_summary, or 77 (skip) where the device could run none of the cases. */
static inline int cases_summary(const char *name)
{
    if (cases_too_big && !cases_run && check_failures == 0) {
        printf("SKIP: %s: none of its %d cases' work-groups fit this device's compiled kernels\n", name,
               cases_too_big);
        return 77;
    }
    if (cases_too_big)
        printf("%s: %d cases skipped (work-groups too large for this device's compiled kernels)\n", name,
               cases_too_big);
    return check_summary(name);
}

#endif