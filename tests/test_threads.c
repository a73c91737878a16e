/* Long-lived-service behaviour: classification from 4 threads at once (one
 * context each, and all on one shared context) gives the serial results;
 * loading and freeing a model 1000 times keeps memory flat. */
#include <pthread.h>
#include <string.h>

#include "check.h"

#define THREADS 4
#define ROUNDS 8

static const char *model_path;
static float *images, *expected;
static size_t per_image, nc, batch = 3;
static gmlp_model *shared_model;

typedef struct job {
    gmlp_model *model; /* NULL: make a context and model of its own */
    double maxdiff;
    int failed;
} job;

static void *worker(void *arg)
{
    job *j = arg;
    gmlp_context *ctx = NULL;
    gmlp_model *m = j->model;
    if (!m && (gmlp_context_create(NULL, &ctx) != GMLP_OK || gmlp_model_load(ctx, model_path, &m) != GMLP_OK)) {
        j->failed = 1;
        gmlp_context_destroy(ctx);
        return NULL;
    }
    float *out = malloc(batch * nc * sizeof *out);
    for (int r = 0; r < ROUNDS; r++) {
        if (gmlp_classify(m, images, batch, out) != GMLP_OK) {
            j->failed = 1;
            break;
        }
        for (size_t i = 0; i < batch * nc; i++)
            j->maxdiff = fmax(j->maxdiff, fabs(out[i] - expected[i]));
    }
    free(out);
    if (!j->model) {
        gmlp_model_free(m);
        gmlp_context_destroy(ctx);
    }
    return NULL;
}

static void run_threads(int shared)
{
    pthread_t t[THREADS];
    job jobs[THREADS];
    memset(jobs, 0, sizeof jobs);
    for (int i = 0; i < THREADS; i++) {
        jobs[i].model = shared ? shared_model : NULL;
        pthread_create(&t[i], NULL, worker, &jobs[i]);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        CHECK(!jobs[i].failed, "%s thread %d failed", shared ? "shared-context" : "own-context", i);
        CHECK(jobs[i].maxdiff < 1e-6, "%s thread %d differs from serial by %g", shared ? "shared" : "own", i,
              jobs[i].maxdiff);
    }
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

static void test_load_free_loop(gmlp_context *ctx)
{
    long before = 0;
    for (int i = 0; i < 1000; i++) {
        gmlp_model *m;
        if (gmlp_model_load(ctx, model_path, &m) != GMLP_OK) {
            CHECK(0, "load %d: %s", i, gmlp_last_error(ctx));
            return;
        }
        if (i % 10 == 0)
            gmlp_classify(m, images, 1, expected + batch * nc); /* exercise the workspace too */
        gmlp_model_free(m);
        if (i == 99)
            before = rss_kb();
    }
    long after = rss_kb();
    printf("RSS after 100 loads %ld kB, after 1000 loads %ld kB\n", before, after);
#ifdef __SANITIZE_ADDRESS__
    /* ASan's quarantine keeps freed memory resident; LeakSanitizer checks leaks instead */
    printf("RSS check skipped under AddressSanitizer\n");
#else
    CHECK(after - before < 4096, "memory grew by %ld kB over 900 load/free cycles", after - before);
#endif
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: test_threads MODEL\n");
        return 2;
    }
    model_path = argv[1];
    gmlp_context *ctx = check_context();
    CHECK(gmlp_model_load(ctx, model_path, &shared_model) == GMLP_OK, "load: %s", gmlp_last_error(ctx));
    gmlp_config cfg;
    gmlp_model_config(shared_model, &cfg);
    per_image = (size_t)cfg.in_chans * cfg.img_h * cfg.img_w;
    nc = (size_t)cfg.num_classes;
    images = malloc(batch * per_image * sizeof *images);
    expected = malloc((batch + 1) * nc * sizeof *expected);
    unsigned seed = 3;
    for (size_t i = 0; i < batch * per_image; i++)
        images[i] = check_rand(&seed);
    CHECK(gmlp_classify(shared_model, images, batch, expected) == GMLP_OK, "serial: %s", gmlp_last_error(ctx));
    run_threads(0);
    run_threads(1);
    gmlp_model_free(shared_model);
    test_load_free_loop(ctx);
    gmlp_context_destroy(ctx);
    free(images);
    free(expected);
    return check_summary("test_threads");
}
