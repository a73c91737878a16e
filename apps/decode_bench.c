/* gmlp-decode-bench: the host side of gmlp-classify alone, for docs/scale-out.md:
 * images/s that THREADS threads decode (libjpeg, stb_image) and preprocess (timm's
 * eval transform of a 224-px, 3-channel model: bicubic, crop_pct 0.875) with
 * the app's own code (batch.c), over FILE... repeated for about 3 s.  No
 * OpenCL device is used.  Not installed.
 *   gmlp-decode-bench THREADS FILE... */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "batch.h"
#include "common.h"

#define BATCH 32

static gmlp_config cfg;
static char **files;
static int n_files;
static double until;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *worker(void *arg)
{
    size_t *done = arg;
    char *paths[BATCH];
    for (int i = 0; now() < until; i++) {
        for (int k = 0; k < BATCH; k++)
            paths[k] = files[(i * BATCH + k) % n_files];
        app_batch *b = app_batch_new(0, paths, BATCH);
        if (!b || !app_batch_decode(b, &cfg) || b->n_ok != BATCH) {
            fprintf(stderr, "gmlp-decode-bench: a file did not decode\n");
            exit(APP_EXIT_FAIL);
        }
        app_batch_free(b);
        *done += BATCH;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long long threads;
    if (argc < 3 || !app_parse_int(argv[1], 1, 256, &threads)) {
        fputs("usage: gmlp-decode-bench THREADS(1..256) FILE...\n", stderr);
        return APP_EXIT_USAGE;
    }
    files = argv + 2;
    n_files = argc - 2;
    gmlp_config_default(&cfg); /* timm's 224 x 224 eval transform */
    pthread_t t[256];
    size_t done[256] = {0};
    const double t0 = now();
    until = t0 + 3.0;
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, &done[i]);
    size_t total = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        total += done[i];
    }
    const double s = now() - t0;
    printf("%lld thread(s): %zu images in %.2f s: %.1f images/s, %.1f images/s per thread\n", threads, total, s,
           (double)total / s, (double)total / s / (double)threads);
    return APP_EXIT_OK;
}
