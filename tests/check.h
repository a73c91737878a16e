/* The test helpers every test program shares: one CHECK, one relative
 * error, a context that skips without a device, file reading, random numbers. */
#ifndef GMLP_CHECK_H
#define GMLP_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmlp.h"

static int check_failures, check_passes;

#define CHECK(cond, ...)                                                                                          \
    do {                                                                                                          \
        if (cond) {                                                                                               \
            check_passes++;                                                                                       \
        } else {                                                                                                  \
            check_failures++;                                                                                     \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                           \
            printf(__VA_ARGS__);                                                                                  \
            printf("\n");                                                                                         \
        }                                                                                                         \
    } while (0)

/* Exit code for the end of main: meson reads 0 pass, 1 fail. */
static inline int check_summary(const char *name)
{
    printf("%s: %d checks passed, %d failed\n", name, check_passes, check_failures);
    return check_failures ? 1 : 0;
}

/* Whether the tests run in scripts/test's quick tier (GMLP_TEST_TIER=quick, its default): the longest sweeps
 * then take a sample that still reaches each area (each says which); the full tier (CI's) runs them all. */
static inline int check_quick_tier(void)
{
    const char *tier = getenv("GMLP_TEST_TIER");
    return tier && !strcmp(tier, "quick");
}

/* A context with options o (NULL: the defaults: $GMLP_DEVICE or the first
 * GPU); exit 77 (meson: skipped) when the machine has no OpenCL device at all. */
static inline gmlp_context *check_context_ex(const gmlp_context_options *o)
{
    gmlp_context *ctx;
    gmlp_status st = gmlp_context_create_ex(o, &ctx);
    if (st == GMLP_ERR_NO_DEVICE) {
        printf("SKIP: %s\n", gmlp_last_error(NULL));
        exit(77);
    }
    if (st != GMLP_OK) {
        printf("FAIL: gmlp_context_create: %s: %s\n", gmlp_status_string(st), gmlp_last_error(NULL));
        exit(1);
    }
    return ctx;
}

static inline gmlp_context *check_context(void)
{
    return check_context_ex(NULL);
}

/* The one relative error of the tests: max |a - b| / max(max |b|, floor);
 * NaN in a counts as infinite. */
static inline double rel_error(const float *a, const double *b, size_t n, double floor_)
{
    double maxb = floor_, maxd = 0;
    for (size_t i = 0; i < n; i++) {
        if (fabs(b[i]) > maxb)
            maxb = fabs(b[i]);
        double d = fabs((double)a[i] - b[i]);
        if (!(d <= maxd)) /* NaN counts as infinite error */
            maxd = isnan(d) ? INFINITY : d;
    }
    return maxd / maxb;
}

/* A whole file into malloc'd memory, NULL if unreadable. */
static inline unsigned char *check_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = n >= 0 ? malloc(n > 0 ? (size_t)n : 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *size = n > 0 ? (size_t)n : 0;
    return buf;
}

/* Whether the default device's report (gmlp_device_report) says what. */
static inline int check_report_says(const char *what)
{
    static char report[8192];
    gmlp_device_report(NULL, report, sizeof report);
    return strstr(report, what) != NULL;
}

/* Deterministic uniform in [-1, 1). */
static inline float check_rand(unsigned *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (float)((*state >> 8) & 0xffffff) / 8388608.0f - 1.0f;
}

#endif
