/* Every allocation failing in turn, for N = 1, 2, ... until a run completes.
 * Host (a build with -Dalloc_fail=true, lib/core/alloc.h): the N-th of the
 * library's own allocations, jansson's included, on model load (a file, a
 * folder with config.json, memory), a classify, an LM prompt with decoding
 * steps (gmlp_lm_generate) and the tuning-file reader.  Device (any build,
 * through the interposer clshim.c): the N-th clCreateBuffer, failing at the
 * call or lazily at the next enqueue, on load, classify and generation.
 * A failed run returns GMLP_ERR_HOST_MEMORY saying "memory" (the device:
 * GMLP_ERR_DEVICE_MEMORY naming the OpenCL error), or, where the library
 * falls back (a smaller workspace, a kernel cache it cannot read), completes
 * with the results of a run without failure; the context then classifies as
 * before.  Crashes and leaks: ASan's (.ci/run).  argv: tests/data, a cache
 * directory of its own (the tuning file). */
#include <string.h>

#include "check.h"
#include "clshim.h"
#include "core/alloc.h"
#include "ops/gemm_tune.h"
#include "ops/ops.h"

#define BATCH 2
#define GEN_TOKENS 4

static gmlp_context *ctx;
static char vision[1024], folder[1024], lm[1024];
static unsigned char *vision_bytes;
static size_t vision_size, per_image, nc;
static float *images, *ref_logits, *out;
static int32_t ref_tokens[GEN_TOKENS];
static gmlp_model *kept; /* loaded once: the context still works after a failure */

/* One kind of failure: arm(n) makes the n-th event from now fail (0: none);
 * reached() counts the events since; a run it fails returns expect with a
 * message containing says. */
typedef struct injector {
    const char *name;
    void (*arm)(unsigned long n);
    unsigned long (*reached)(void);
    gmlp_status expect;
    const char *says;
} injector;

static const injector *inj;
static char said[4096]; /* what the run said of its failure */

/* st, with the context's message kept in said. */
static gmlp_status said_by_ctx(gmlp_status st)
{
    snprintf(said, sizeof said, "%s", gmlp_last_error(ctx));
    return st;
}

/* A path runs with the failure armed around its measured part; *same: its
 * results equal a run's without failure (where it completed). */
typedef gmlp_status (*path_fn)(unsigned long n, unsigned long *reached, int *same);

static gmlp_status load_path(const char *path, unsigned long n, unsigned long *reached)
{
    gmlp_model *m;
    inj->arm(n);
    gmlp_status st = path ? gmlp_model_load(ctx, path, &m) : gmlp_model_load_memory(ctx, vision_bytes, vision_size, &m);
    *reached = inj->reached();
    inj->arm(0);
    gmlp_model_free(m);
    return said_by_ctx(st);
}

static gmlp_status load_file(unsigned long n, unsigned long *reached, int *same)
{
    (void)same;
    return load_path(vision, n, reached);
}

static gmlp_status load_folder(unsigned long n, unsigned long *reached, int *same)
{
    (void)same;
    return load_path(folder, n, reached);
}

static gmlp_status load_memory(unsigned long n, unsigned long *reached, int *same)
{
    (void)same;
    return load_path(NULL, n, reached);
}

/* A model loaded without failure, then its first classify (the workspace's
 * allocations) armed. */
static gmlp_status classify(unsigned long n, unsigned long *reached, int *same)
{
    gmlp_model *m;
    CHECK(gmlp_model_load(ctx, vision, &m) == GMLP_OK, "load: %s", gmlp_last_error(ctx));
    memset(out, 0, BATCH * nc * sizeof *out);
    inj->arm(n);
    gmlp_status st = gmlp_classify(m, images, BATCH, out);
    *reached = inj->reached();
    inj->arm(0);
    *same = !memcmp(out, ref_logits, BATCH * nc * sizeof *out);
    gmlp_model_free(m);
    return said_by_ctx(st);
}

static gmlp_status generate_tokens(gmlp_model *m, int32_t *tokens, size_t *n_out)
{
    const int32_t prompt[] = {3, 1, 4};
    gmlp_generate_options o;
    gmlp_generate_options_default(&o);
    o.max_tokens = GEN_TOKENS;
    o.temperature = 0; /* greedy: comparable */
    return gmlp_lm_generate(m, prompt, 3, &o, tokens, n_out);
}

static gmlp_status generate(unsigned long n, unsigned long *reached, int *same)
{
    gmlp_model *m;
    CHECK(gmlp_model_load(ctx, lm, &m) == GMLP_OK, "load: %s", gmlp_last_error(ctx));
    int32_t tokens[GEN_TOKENS] = {0};
    size_t got = 0;
    inj->arm(n);
    gmlp_status st = generate_tokens(m, tokens, &got);
    *reached = inj->reached();
    inj->arm(0);
    *same = got == GEN_TOKENS && !memcmp(tokens, ref_tokens, sizeof tokens);
    gmlp_model_free(m);
    return said_by_ctx(st);
}

/* The tuning-file reader, on a context of its own whose cache holds a file
 * for its device (no winners: it changes no choice); taking the file, or
 * ignoring it for want of memory (the defaults apply), it logs which. */
static gmlp_context *tune_ctx;
static char tune_log[2048];

static void keep_log(void *user, gmlp_log_level level, const char *message)
{
    (void)user, (void)level;
    snprintf(tune_log, sizeof tune_log, "%s", message);
}

static gmlp_status tune_reader(unsigned long n, unsigned long *reached, int *same)
{
    tune_log[0] = 0;
    inj->arm(n);
    gmlp_gemm_tune_load(tune_ctx);
    *reached = inj->reached();
    inj->arm(0);
    snprintf(said, sizeof said, "%s", tune_log);
    *same = strstr(tune_log, ": used") != NULL;
    return *same ? GMLP_OK : strstr(tune_log, "ignored") ? GMLP_ERR_HOST_MEMORY : GMLP_ERR_FORMAT;
}

static void open_tune_ctx(const char *cache_dir)
{
    gmlp_context_options o;
    gmlp_context_options_default(&o);
    o.cache_dir = cache_dir;
    o.log_level = GMLP_LOG_INFO;
    o.log = keep_log;
    tune_ctx = check_context_ex(&o);
    static gmlp_tuned none; /* no winners */
    CHECK(gmlp_tune_save(tune_ctx, &none, NULL) == GMLP_OK, "tuning file: %s", gmlp_last_error(tune_ctx));
}

static int still_works(void)
{
    memset(out, 0, BATCH * nc * sizeof *out);
    return gmlp_classify(kept, images, BATCH, out) == GMLP_OK && !memcmp(out, ref_logits, BATCH * nc * sizeof *out);
}

static unsigned long total_reached, total_injected;

static void sweep(const char *what, path_fn path)
{
    unsigned long injected = 0, refused = 0, fell_back = 0, n;
    for (n = 1; n < 100000; n++) {
        unsigned long reached = 0;
        int same = 1;
        gmlp_status st = path(n, &reached, &same);
        if (reached < n) { /* the n-th never came: this run had no failure */
            CHECK(st == GMLP_OK && same, "%s, %s: the run without failure: %s (%s)", inj->name, what,
                  gmlp_status_string(st), said);
            break;
        }
        injected++;
        if (st == inj->expect && strstr(said, inj->says))
            refused++;
        else if (st == GMLP_OK && same)
            fell_back++;
        else
            CHECK(0, "%s, %s: failure %lu gave %s: %s", inj->name, what, n, gmlp_status_string(st), said);
        CHECK(still_works(), "%s, %s: after failure %lu the context no longer classifies: %s", inj->name, what, n,
              gmlp_last_error(ctx));
    }
    CHECK(n < 100000, "%s, %s: no run completed", inj->name, what);
    printf("%s, %s: %lu reached in a run; %lu failed in turn: %lu refused with %s, %lu fallbacks\n", inj->name,
           what, n - 1, injected, refused, gmlp_status_string(inj->expect), fell_back);
    total_reached += n - 1;
    total_injected += injected;
}

static void buffer_at(unsigned long n)
{
    clshim_fail_buffer(n, 0);
}

static void buffer_lazy(unsigned long n)
{
    clshim_fail_buffer(n, 1);
}

static unsigned long buffers(void)
{
    return clshim_count(CLSHIM_CREATE_BUFFER);
}

static const injector injectors[] = {
#ifdef GMLP_ALLOC_FAIL
    {"host allocation", gmlp_alloc_fail_at, gmlp_alloc_count, GMLP_ERR_HOST_MEMORY, "memory"},
#endif
    {"clCreateBuffer", buffer_at, buffers, GMLP_ERR_DEVICE_MEMORY, "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
    {"clCreateBuffer lazily", buffer_lazy, buffers, GMLP_ERR_DEVICE_MEMORY, "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
};

/* device: the path allocates device memory of its own (the folder and memory
 * loads upload as the file's does; the tuning-file reader allocates none). */
static const struct {
    const char *name;
    path_fn run;
    int device;
} paths[] = {{"model load (file)", load_file, 1},
             {"model load (folder with config.json)", load_folder, 0},
             {"model load (memory)", load_memory, 0},
             {"classify", classify, 1},
             {"LM prompt and decoding steps", generate, 1},
             {"tuning-file reader", tune_reader, 0}};

static void sweeps(void)
{
#ifndef GMLP_ALLOC_FAIL
    printf("host allocations: not counted in this build (meson configure -Dalloc_fail=true)\n");
#endif
    for (size_t i = 0; i < sizeof injectors / sizeof *injectors; i++) {
        inj = &injectors[i];
        for (size_t p = 0; p < sizeof paths / sizeof *paths; p++)
            if (paths[p].device || inj->expect == GMLP_ERR_HOST_MEMORY)
                sweep(paths[p].name, paths[p].run);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        printf("usage: test_alloc_fail DATA_DIR CACHE_DIR\n");
        return 2;
    }
    snprintf(vision, sizeof vision, "%s/e2e/gmlp_rgb.safetensors", argv[1]);
    snprintf(folder, sizeof folder, "%s/hf/gmlp_wide", argv[1]);
    snprintf(lm, sizeof lm, "%s/lm/causal.safetensors", argv[1]);
    ctx = check_context();
    vision_bytes = check_read_file(vision, &vision_size);
    CHECK(vision_bytes && gmlp_model_load(ctx, vision, &kept) == GMLP_OK, "load: %s", gmlp_last_error(ctx));
    gmlp_config cfg = {.size = sizeof cfg};
    gmlp_model_config(kept, &cfg);
    per_image = (size_t)cfg.in_chans * cfg.img_h * cfg.img_w;
    nc = (size_t)cfg.num_classes;
    images = malloc(BATCH * per_image * sizeof *images);
    ref_logits = malloc(BATCH * nc * sizeof *ref_logits);
    out = malloc(BATCH * nc * sizeof *out);
    unsigned seed = 5;
    for (size_t i = 0; i < BATCH * per_image; i++)
        images[i] = check_rand(&seed);
    CHECK(gmlp_classify(kept, images, BATCH, ref_logits) == GMLP_OK, "classify: %s", gmlp_last_error(ctx));
    gmlp_model *m;
    size_t got = 0;
    CHECK(gmlp_model_load(ctx, lm, &m) == GMLP_OK && generate_tokens(m, ref_tokens, &got) == GMLP_OK &&
              got == GEN_TOKENS, "generate: %s", gmlp_last_error(ctx));
    gmlp_model_free(m);
    open_tune_ctx(argv[2]);
    if (check_failures)
        return check_summary("test_alloc_fail");

    sweeps();
    printf("in all: %lu allocations reached, %lu failures injected\n", total_reached, total_injected);
    gmlp_model_free(kept);
    gmlp_context_destroy(ctx);
    gmlp_context_destroy(tune_ctx);
    free(vision_bytes), free(images), free(ref_logits), free(out);
    return check_summary("test_alloc_fail");
}
