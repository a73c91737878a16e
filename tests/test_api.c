/* The public API's contract: argument checks, device selection, error
 * messages, the kernel cache and its fallbacks, injected failures. */
#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "check.h"
#include "gmlp_diag.h"

static const char *data_dir;

static char *model_path(const char *name)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s/e2e/%s.safetensors", data_dir, name);
    return buf;
}

/* A context asked for CLBlast (by o or $GMLP_GEMM): on CLBlast where the build
 * has it (GMLP_HAVE_CLBLAST, tests/meson.build), else refused as unsupported,
 * saying so. */
static void check_clblast_context(const gmlp_context_options *o, const char *what)
{
    gmlp_context *ctx;
    gmlp_status st = gmlp_context_create_ex(o, &ctx);
    if (GMLP_HAVE_CLBLAST)
        CHECK(st == GMLP_OK && gmlp_context_gemm(ctx) == GMLP_GEMM_CLBLAST, "%s: %s", what, gmlp_last_error(NULL));
    else
        CHECK(st == GMLP_ERR_UNSUPPORTED && !ctx && strstr(gmlp_last_error(NULL), "built without CLBlast"),
              "%s refused without CLBlast: %s: %s", what, gmlp_status_string(st), gmlp_last_error(NULL));
    gmlp_context_destroy(ctx);
}

static void test_basics(void)
{
    CHECK(gmlp_version() && strlen(gmlp_version()) > 0, "version string");
    for (int a = 0; a <= GMLP_ERR_WRONG_MODEL; a++)
        for (int b = a + 1; b <= GMLP_ERR_WRONG_MODEL; b++)
            CHECK(strcmp(gmlp_status_string(a), gmlp_status_string(b)), "status strings %d and %d equal", a, b);
    CHECK(gmlp_context_create(NULL, NULL) == GMLP_ERR_INVALID_ARGUMENT, "NULL out");
    gmlp_context_destroy(NULL);
    gmlp_model_free(NULL);
    CHECK(gmlp_last_error(NULL) != NULL, "thread error never NULL");
}

/* An enum's name table: every value has a name of its own, which _named
 * gives back; values past either end have none, and unknown names no value. */
static void check_names(const char *what, int count, const char *(*name)(int), int (*named)(const char *))
{
    for (int v = 0; v < count; v++) {
        const char *s = name(v);
        CHECK(s && *s && named(s) == v, "%s %d: name '%s' does not name it", what, v, s ? s : "(null)");
        for (int u = 0; s && u < v; u++)
            CHECK(!name(u) || strcmp(name(u), s), "%s %d and %d are both '%s'", what, u, v, s);
    }
    CHECK(!name(-1) && !name(count) && named(NULL) < 0 && named("") < 0 && named("none of them") < 0,
          "%s: values out of range have no name, unknown names no value", what);
}

static void test_names(void)
{
    check_names("arch", GMLP_ARCHS, gmlp_arch_name, gmlp_arch_named);
    check_names("gate act", GMLP_GATES, gmlp_act_name, gmlp_act_named);
    /* the names are the metadata's: what gmlp.arch and gmlp.act hold */
    CHECK(gmlp_arch_named("gmlp_lm") == GMLP_ARCH_LM && gmlp_act_named("silu") == GMLP_GATE_SILU,
          "the metadata's names");
}

static void test_device_selection(void)
{
    gmlp_context *ctx = (gmlp_context *)1;
    gmlp_status st = gmlp_context_create("no-such-device-xyz", &ctx);
    CHECK(st == GMLP_ERR_NO_DEVICE && ctx == NULL, "unknown device: %s", gmlp_status_string(st));
    CHECK(strstr(gmlp_last_error(NULL), "no-such-device-xyz") && strstr(gmlp_last_error(NULL), "0: "),
          "message names the request and lists devices: %s", gmlp_last_error(NULL));
    CHECK(gmlp_context_create("9999", &ctx) == GMLP_ERR_NO_DEVICE, "index out of range");

    char list[4096];
    size_t need = gmlp_list_devices(list, sizeof list);
    CHECK(need > 0 && strlen(list) == need, "device list: %zu", need);
    char tiny[8];
    CHECK(gmlp_list_devices(tiny, sizeof tiny) == need && strlen(tiny) < sizeof tiny, "truncated list");

    /* select by index, by type and by a case-flipped substring of its name */
    CHECK(gmlp_context_create("0", &ctx) == GMLP_OK, "index 0: %s", gmlp_last_error(NULL));
    char name[128];
    snprintf(name, sizeof name, "%s", gmlp_context_device_name(ctx));
    gmlp_context_destroy(ctx);
    char sub[8] = {0};
    for (int i = 0; i < 4 && name[i]; i++)
        sub[i] = (char)(name[i] ^ ((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ? 32 : 0));
    CHECK(gmlp_context_create(sub, &ctx) == GMLP_OK && !strcmp(gmlp_context_device_name(ctx), name),
          "substring '%s': %s", sub, gmlp_last_error(NULL));
    gmlp_context_destroy(ctx);
    const char *type = strstr(list, "| cpu") || strstr(list, ": cpu") ? "cpu" : "gpu";
    CHECK(gmlp_context_create(type, &ctx) == GMLP_OK, "type %s: %s", type, gmlp_last_error(NULL));
    gmlp_context_destroy(ctx);

    /* the default, whatever other platforms are installed (an ICD exposing no
     * device, such as Mesa's without a GPU, is passed over): the first GPU,
     * else the first device */
    gmlp_context *gpu = NULL, *dflt = NULL;
    if (gmlp_context_create("gpu", &gpu) != GMLP_OK)
        gmlp_context_create("0", &gpu);
    gmlp_context_create(NULL, &dflt);
    CHECK(gpu && dflt && !strcmp(gmlp_context_device_name(dflt), gmlp_context_device_name(gpu)),
          "default device %s, not the first GPU, else the first device (%s)", gmlp_context_device_name(dflt),
          gmlp_context_device_name(gpu));
    gmlp_context_destroy(gpu);
    gmlp_context_destroy(dflt);

    setenv("GMLP_DEVICE", "no-such-device-xyz", 1);
    CHECK(gmlp_context_create(NULL, &ctx) == GMLP_ERR_NO_DEVICE, "GMLP_DEVICE is honoured");
    unsetenv("GMLP_DEVICE");

    /* the GEMM backend: option, environment, refusals */
    gmlp_context_options o;
    gmlp_context_options_default(&o);
    CHECK(o.device == NULL && o.gemm == GMLP_GEMM_AUTO, "option defaults");
    o.gemm = GMLP_GEMM_CLBLAST;
    check_clblast_context(&o, "gmlp_context_options.gemm CLBlast");
    o.gemm = (gmlp_gemm_backend)7;
    CHECK(gmlp_context_create_ex(&o, &ctx) == GMLP_ERR_INVALID_ARGUMENT && !ctx &&
              strstr(gmlp_last_error(NULL), "unknown backend 7"),
          "unknown backend: %s", gmlp_last_error(NULL));
    setenv("GMLP_GEMM", "clblast", 1);
    check_clblast_context(NULL, "GMLP_GEMM=clblast");
    setenv("GMLP_GEMM", "cublas", 1);
    CHECK(gmlp_context_create(NULL, &ctx) == GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(NULL), "GMLP_GEMM=cublas"),
          "GMLP_GEMM=cublas refused: %s", gmlp_last_error(NULL));
    unsetenv("GMLP_GEMM");
    CHECK(gmlp_context_create_ex(NULL, &ctx) == GMLP_OK && gmlp_context_gemm(ctx) == GMLP_GEMM_KERNEL, "default: kernel");
    gmlp_context_destroy(ctx);
}

/* The per-device report: the device line, then every kernel built (or the
 * reason it failed to build). */
static void test_device_report(void)
{
    char report[16384], tiny[16];
    size_t n = gmlp_device_report("0", report, sizeof report);
    CHECK(n > 0 && strlen(report) == n && !strncmp(report, "0: ", 3), "report: %s", n ? report : gmlp_last_error(NULL));
    CHECK(strstr(report, "gmlp_layernorm") && strstr(report, "gmlp_gemm (A half): built") &&
              strstr(report, "gmlp_gemm (A and B half): built") && !strstr(report, "FAILED"),
          "every kernel built: %s", report);
    CHECK(gmlp_device_report("0", tiny, sizeof tiny) == n && strlen(tiny) == sizeof tiny - 1, "truncated report");
    CHECK(gmlp_device_report("no-such-device-xyz", report, sizeof report) == 0 && report[0] == 0 &&
              strstr(gmlp_last_error(NULL), "no-such-device-xyz"),
          "unknown device: %s", gmlp_last_error(NULL));
    setenv("GMLP_CL_OPTIONS", "-Dgmlp_gemm=1 -Dgmlp_gemm_direct=1", 1); /* both GEMM kernels */
    n = gmlp_device_report("0", report, sizeof report);
    CHECK(n > 0 && strstr(report, "gmlp_gemm (B half): FAILED: build log") && strstr(report, "gmlp_layernorm"),
          "a kernel that does not build: %s", report);
    unsetenv("GMLP_CL_OPTIONS");
}

static void test_model_args(gmlp_context *ctx)
{
    gmlp_model *m = (gmlp_model *)1;
    CHECK(gmlp_model_load(NULL, model_path("gmlp_rgb"), &m) == GMLP_ERR_INVALID_ARGUMENT && m == NULL, "NULL ctx");
    CHECK(gmlp_model_load(ctx, NULL, &m) == GMLP_ERR_INVALID_ARGUMENT, "NULL path");
    CHECK(gmlp_model_load(ctx, "/nonexistent/model.safetensors", &m) == GMLP_ERR_IO && m == NULL, "missing file");
    CHECK(strstr(gmlp_last_error(ctx), "/nonexistent/model.safetensors") != NULL, "IO message names the file: %s",
          gmlp_last_error(ctx));
    CHECK(gmlp_model_load(ctx, data_dir, &m) != GMLP_OK, "a directory is refused");

    CHECK(gmlp_model_load(ctx, model_path("gmlp_rgb"), &m) == GMLP_OK, "load: %s", gmlp_last_error(ctx));
    gmlp_config cfg = {.size = sizeof cfg};
    CHECK(gmlp_model_config(m, NULL) == GMLP_ERR_INVALID_ARGUMENT, "config NULL out");
    CHECK(gmlp_model_config(m, &cfg) == GMLP_OK && cfg.num_classes > 0, "config");
    CHECK(cfg.num_params > 0 && cfg.norm_eps == 1e-6f && cfg.sgu_eps == 1e-5f, "timm eps defaults");
    size_t n = (size_t)cfg.in_chans * cfg.img_h * cfg.img_w;
    float *img = calloc(n, sizeof *img), *out = calloc((size_t)cfg.num_classes + (size_t)cfg.dim, sizeof *out);
    CHECK(gmlp_classify(m, NULL, 1, out) == GMLP_ERR_INVALID_ARGUMENT, "NULL images");
    CHECK(gmlp_classify(m, img, 1, NULL) == GMLP_ERR_INVALID_ARGUMENT, "NULL logits");
    CHECK(gmlp_classify(m, img, 0, out) == GMLP_ERR_INVALID_ARGUMENT, "zero batch");
    CHECK(gmlp_classify(NULL, img, 1, out) == GMLP_ERR_INVALID_ARGUMENT, "NULL model");
    CHECK(gmlp_classify(m, img, 1, out) == GMLP_OK, "classify zeros: %s", gmlp_last_error(ctx));
    CHECK(gmlp_model_metadata(m, "no.such.key") == NULL && gmlp_model_label(m, 0) == NULL, "absent metadata");
    gmlp_model_free(m);

    CHECK(gmlp_model_load(ctx, model_path("gmlp_headless"), &m) == GMLP_OK, "headless: %s", gmlp_last_error(ctx));
    CHECK(gmlp_classify(m, img, 1, out) == GMLP_ERR_WRONG_MODEL, "classify on a headless model");
    CHECK(gmlp_features(m, img, 1, out) == GMLP_OK, "features on a headless model: %s", gmlp_last_error(ctx));
    gmlp_model_free(m);

    CHECK(gmlp_model_load(ctx, model_path("gmlp_nonsquare_bf16"), &m) == GMLP_OK, "nonsquare: %s",
          gmlp_last_error(ctx));
    gmlp_model_config(m, &cfg);
    CHECK(cfg.img_h == 24 && cfg.img_w == 40 && cfg.seq_len == 15, "non-square geometry %dx%d", cfg.img_h, cfg.img_w);
    CHECK(cfg.interpolation == GMLP_INTERP_BILINEAR, "gmlp.interpolation");
    const char *note = gmlp_model_metadata(m, "user.note");
    CHECK(note && !strcmp(note, "hello"), "unknown metadata keys are kept");
    int found = 0;
    for (size_t i = 0; gmlp_model_metadata_key(m, i); i++)
        found += !strcmp(gmlp_model_metadata_key(m, i), "user.note");
    CHECK(found == 1, "metadata keys listed");
    gmlp_model_free(m);

    CHECK(gmlp_model_load(ctx, model_path("gmlp_gray_f16"), &m) == GMLP_OK, "gray: %s", gmlp_last_error(ctx));
    gmlp_model_config(m, &cfg);
    CHECK(cfg.in_chans == 1 && fabsf(cfg.mean[0] - 0.286f) < 1e-6f && fabsf(cfg.std[0] - 0.353f) < 1e-6f &&
              cfg.crop_pct == 1.0f,
          "gray metadata");
    CHECK(gmlp_model_label(m, 0) && gmlp_model_label(m, cfg.num_classes - 1) && !gmlp_model_label(m, cfg.num_classes),
          "labels");
    gmlp_model_free(m);
    free(img);
    free(out);
}

static int count_cache_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strstr(e->d_name, ".clbin") != NULL;
    if (d)
        closedir(d);
    return n;
}

/* What a context's INFO log said of the kernel cache. */
typedef struct cache_log {
    int own, hit, unusable; /* "...'s own" (the implementation's cache alone), "hit", "unusable" */
} cache_log;

static void on_cache_log(void *user, gmlp_log_level level, const char *message)
{
    cache_log *l = user;
    (void)level;
    l->own |= strstr(message, "kernel cache: ") && strstr(message, "caches compiled kernels");
    l->hit |= strstr(message, "kernel cache hit") != NULL;
    l->unusable |= strstr(message, "kernel cache unusable") != NULL;
}

/* A new context (cache folder from $GMLP_CACHE_DIR), what it logged of the cache into *l. */
static gmlp_status logged_context(cache_log *l)
{
    gmlp_context_options o;
    gmlp_context_options_default(&o);
    o.log_level = GMLP_LOG_INFO;
    o.log = on_cache_log;
    o.log_user = l;
    *l = (cache_log){0};
    gmlp_context *ctx;
    gmlp_status st = gmlp_context_create_ex(&o, &ctx);
    gmlp_context_destroy(ctx);
    return st;
}

/* The library's binary cache where it serves the device: one program file, a
 * hit in the next context, a corrupt file a fallback to a source build.  Where
 * the implementation caches compiled kernels itself (PoCL: lib/cl/program.c),
 * it says so and writes no binary; CI's passes on Intel's runtime and rusticl
 * take the other branch. */
static void test_cache_and_failures(void)
{
    char dir[] = "/tmp/gmlp-cache-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char *old = getenv("GMLP_CACHE_DIR") ? strdup(getenv("GMLP_CACHE_DIR")) : NULL;
    setenv("GMLP_CACHE_DIR", dir, 1);
    cache_log l;
    CHECK(logged_context(&l) == GMLP_OK, "cold cache: %s", gmlp_last_error(NULL));
    int files = count_cache_files(dir);
    if (l.own) {
        CHECK(files == 0 && !l.hit, "the implementation's cache alone: %d program binaries in %s", files, dir);
        CHECK(logged_context(&l) == GMLP_OK && l.own && !l.hit, "second context: %s", gmlp_last_error(NULL));
    } else {
        CHECK(files == 1 && !l.hit, "one program binary cached in %s (%d)", dir, files);
        CHECK(logged_context(&l) == GMLP_OK && l.hit && !l.unusable, "warm cache hit: %s", gmlp_last_error(NULL));
        /* a corrupt cache entry falls back to a source build */
        DIR *d = opendir(dir);
        for (struct dirent *e; d && (e = readdir(d));)
            if (strstr(e->d_name, ".clbin")) {
                char p[1200];
                snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
                FILE *f = fopen(p, "wb");
                fputs("GMLPBIN1 garbage", f);
                fclose(f);
            }
        if (d)
            closedir(d);
        CHECK(logged_context(&l) == GMLP_OK && l.unusable && !l.hit, "corrupt cache: %s", gmlp_last_error(NULL));
    }
    gmlp_context *ctx;

    /* an unwritable cache folder is no error */
    setenv("GMLP_CACHE_DIR", "/proc/no-such-dir/gmlp", 1);
    CHECK(gmlp_context_create(NULL, &ctx) == GMLP_OK, "unusable cache: %s", gmlp_last_error(NULL));
    gmlp_context_destroy(ctx);
    setenv("GMLP_CACHE_DIR", dir, 1);

    /* a kernel that fails to compile reports the device's build log */
    setenv("GMLP_CL_OPTIONS", "-Dgmlp_layernorm=1", 1);
    gmlp_status st = gmlp_context_create(NULL, &ctx);
    CHECK(st == GMLP_ERR_BUILD, "forced build failure: %s", gmlp_status_string(st));
    CHECK(strstr(gmlp_last_error(NULL), "build log") != NULL, "build log in message: %.200s", gmlp_last_error(NULL));
    unsetenv("GMLP_CL_OPTIONS");

    /* an injected device-memory limit turns allocation into a clean error */
    setenv("GMLP_DEVICE_MEMORY_LIMIT", "1000", 1);
    CHECK(gmlp_context_create(NULL, &ctx) == GMLP_OK, "context with a memory limit");
    gmlp_model *m = (gmlp_model *)1;
    st = gmlp_model_load(ctx, model_path("gmlp_rgb"), &m);
    CHECK(st == GMLP_ERR_DEVICE_MEMORY && m == NULL, "load over the limit: %s", gmlp_status_string(st));
    CHECK(strstr(gmlp_last_error(ctx), "limit") != NULL, "limit in message: %s", gmlp_last_error(ctx));
    gmlp_context_destroy(ctx);
    unsetenv("GMLP_DEVICE_MEMORY_LIMIT");

    if (old)
        setenv("GMLP_CACHE_DIR", old, 1);
    else
        unsetenv("GMLP_CACHE_DIR");
    free(old);
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "cleanup");
}

/* A device-memory budget that leaves room for about two images of
 * activations forces batches through in chunks: same logits as one pass. */
/* name: a timm gMLP, and a gMLPVision whose tiny attention needs the keys of
 * every image in the chunk. */
static void test_chunking(gmlp_context *ctx, const char *name)
{
    gmlp_model *m;
    CHECK(gmlp_model_load(ctx, model_path(name), &m) == GMLP_OK, "load: %s", gmlp_last_error(ctx));
    gmlp_config cfg = {.size = sizeof cfg};
    gmlp_model_config(m, &cfg);
    const size_t batch = 7, per = (size_t)cfg.in_chans * cfg.img_h * cfg.img_w, nc = (size_t)cfg.num_classes;
    float *img = malloc(batch * per * sizeof *img), *whole = malloc(batch * nc * sizeof *whole),
          *chunked = malloc(batch * nc * sizeof *chunked);
    unsigned seed = 7;
    for (size_t i = 0; i < batch * per; i++)
        img[i] = check_rand(&seed);
    CHECK(gmlp_classify(m, img, batch, whole) == GMLP_OK, "whole batch: %s", gmlp_last_error(ctx));
    gmlp_model_free(m);

    char limit[64];
    snprintf(limit, sizeof limit, "%zu", cfg.num_params * 4 + 40000);
    setenv("GMLP_DEVICE_MEMORY_LIMIT", limit, 1);
    gmlp_context *small;
    CHECK(gmlp_context_create(NULL, &small) == GMLP_OK, "context: %s", gmlp_last_error(NULL));
    CHECK(gmlp_model_load(small, model_path(name), &m) == GMLP_OK, "load under limit: %s",
          gmlp_last_error(small));
    CHECK(gmlp_classify(m, img, batch, chunked) == GMLP_OK, "chunked: %s", gmlp_last_error(small));
    double maxd = 0;
    for (size_t i = 0; i < batch * nc; i++)
        maxd = fmax(maxd, fabs(whole[i] - chunked[i]));
    CHECK(maxd < 1e-5, "%s: chunked logits differ by %g", name, maxd);
    /* both outputs of the chunks, each row where its own call puts it */
    const size_t d = (size_t)cfg.dim;
    float *logits = malloc(batch * nc * sizeof *logits), *feats = malloc(batch * d * sizeof *feats),
          *feats1 = malloc(batch * d * sizeof *feats1);
    CHECK(gmlp_features(m, img, batch, feats1) == GMLP_OK, "chunked features: %s", gmlp_last_error(small));
    CHECK(gmlp_classify_features(m, img, batch, logits, feats) == GMLP_OK, "chunked, both: %s",
          gmlp_last_error(small));
    CHECK(!memcmp(logits, chunked, batch * nc * sizeof *logits) && !memcmp(feats, feats1, batch * d * sizeof *feats),
          "%s: chunked logits and features of one forward differ from their own calls'", name);
    free(logits), free(feats), free(feats1);
    gmlp_model_free(m);
    gmlp_context_destroy(small);

    /* weights fit, one image of activations does not: a clean error, and
     * the context still serves a smaller request afterwards */
    snprintf(limit, sizeof limit, "%zu", cfg.num_params * 4 + 1000);
    setenv("GMLP_DEVICE_MEMORY_LIMIT", limit, 1);
    CHECK(gmlp_context_create(NULL, &small) == GMLP_OK, "context: %s", gmlp_last_error(NULL));
    CHECK(gmlp_model_load(small, model_path(name), &m) == GMLP_OK, "load: %s", gmlp_last_error(small));
    gmlp_status st = gmlp_classify(m, img, 1, chunked);
    CHECK(st == GMLP_ERR_DEVICE_MEMORY, "workspace over the limit: %s", gmlp_status_string(st));
    gmlp_model_free(m);
    CHECK(gmlp_model_load(small, model_path("gmlp_headless"), &m) == GMLP_OK, "context usable after: %s",
          gmlp_last_error(small));
    gmlp_model_free(m);
    gmlp_context_destroy(small);
    unsetenv("GMLP_DEVICE_MEMORY_LIMIT");
    free(img), free(whole), free(chunked);
}

/* gmlp_classify_features: the logits and the features of one forward, each
 * bit for bit as gmlp_classify and gmlp_features give them; either alone. */
static void test_one_forward(gmlp_context *ctx)
{
    gmlp_model *m;
    CHECK(gmlp_model_load(ctx, model_path("mixer_rgb"), &m) == GMLP_OK, "load: %s", gmlp_last_error(ctx));
    gmlp_config cfg = {.size = sizeof cfg};
    gmlp_model_config(m, &cfg);
    const size_t batch = 3, per = (size_t)cfg.in_chans * cfg.img_h * cfg.img_w, nc = (size_t)cfg.num_classes,
                 d = (size_t)cfg.dim;
    float *img = malloc(batch * per * sizeof *img), *l1 = malloc(batch * nc * sizeof *l1),
          *l2 = malloc(batch * nc * sizeof *l2), *f1 = malloc(batch * d * sizeof *f1),
          *f2 = malloc(batch * d * sizeof *f2);
    unsigned seed = 11;
    for (size_t i = 0; i < batch * per; i++)
        img[i] = check_rand(&seed);
    CHECK(gmlp_classify(m, img, batch, l1) == GMLP_OK && gmlp_features(m, img, batch, f1) == GMLP_OK, "%s",
          gmlp_last_error(ctx));
    CHECK(gmlp_classify_features(m, img, batch, l2, f2) == GMLP_OK, "both: %s", gmlp_last_error(ctx));
    CHECK(!memcmp(l1, l2, batch * nc * sizeof *l1), "one forward's logits differ from gmlp_classify's");
    CHECK(!memcmp(f1, f2, batch * d * sizeof *f1), "one forward's features differ from gmlp_features'");
    memset(l2, 0, batch * nc * sizeof *l2), memset(f2, 0, batch * d * sizeof *f2);
    CHECK(gmlp_classify_features(m, img, batch, l2, NULL) == GMLP_OK && !memcmp(l1, l2, batch * nc * sizeof *l1),
          "logits alone: %s", gmlp_last_error(ctx));
    CHECK(gmlp_classify_features(m, img, batch, NULL, f2) == GMLP_OK && !memcmp(f1, f2, batch * d * sizeof *f1),
          "features alone: %s", gmlp_last_error(ctx));
    CHECK(gmlp_classify_features(m, img, batch, NULL, NULL) == GMLP_ERR_INVALID_ARGUMENT, "no output");
    CHECK(gmlp_classify_features(m, img, 0, l2, f2) == GMLP_ERR_INVALID_ARGUMENT, "zero batch");
    CHECK(gmlp_classify_features(NULL, img, 1, l2, f2) == GMLP_ERR_INVALID_ARGUMENT, "NULL model");
    gmlp_model_free(m);

    CHECK(gmlp_model_load(ctx, model_path("gmlp_headless"), &m) == GMLP_OK, "headless: %s", gmlp_last_error(ctx));
    gmlp_model_config(m, &cfg);
    float *hf = malloc((size_t)cfg.dim * sizeof *hf), *hf1 = malloc((size_t)cfg.dim * sizeof *hf1);
    const size_t hper = (size_t)cfg.in_chans * cfg.img_h * cfg.img_w;
    float *himg = calloc(hper, sizeof *himg);
    gmlp_status st = gmlp_classify_features(m, himg, 1, l2, hf);
    CHECK(st == GMLP_ERR_WRONG_MODEL && strstr(gmlp_last_error(ctx), "no head"), "logits of a headless model: %s: %s",
          gmlp_status_string(st), gmlp_last_error(ctx));
    CHECK(gmlp_classify_features(m, himg, 1, NULL, hf) == GMLP_OK && gmlp_features(m, himg, 1, hf1) == GMLP_OK &&
              !memcmp(hf, hf1, (size_t)cfg.dim * sizeof *hf),
          "a headless model's features alone: %s", gmlp_last_error(ctx));
    gmlp_model_free(m);
    free(img), free(l1), free(l2), free(f1), free(f2), free(hf), free(hf1), free(himg);
}

/* gmlp_config's size: set by the caller in both directions; a newer caller's
 * larger struct keeps its tail, an unset size is refused, saying so. */
static void test_config_size(gmlp_context *ctx)
{
    gmlp_model *m;
    CHECK(gmlp_model_load(ctx, model_path("gmlp_rgb"), &m) == GMLP_OK, "load: %s", gmlp_last_error(ctx));
    gmlp_config cfg = {.size = sizeof cfg}, unset = {0};
    CHECK(gmlp_model_config(m, &cfg) == GMLP_OK && cfg.size == sizeof cfg && cfg.dim > 0, "config");
    gmlp_status st = gmlp_model_config(m, &unset);
    CHECK(st == GMLP_ERR_INVALID_ARGUMENT && strstr(gmlp_last_error(ctx), "sizeof(gmlp_config)") && unset.dim == 0,
          "size 0: %s: %s", gmlp_status_string(st), gmlp_last_error(ctx));
    unset.size = offsetof(gmlp_config, stem_norm); /* short of the first sized version */
    CHECK(gmlp_model_config(m, &unset) == GMLP_ERR_INVALID_ARGUMENT && unset.dim == 0, "a short size");
    struct {
        gmlp_config cfg;
        unsigned char later[24]; /* fields a later gmlp.h adds */
    } newer;
    memset(&newer, 0xa5, sizeof newer);
    newer.cfg.size = sizeof newer;
    CHECK(gmlp_model_config(m, &newer.cfg) == GMLP_OK && newer.cfg.size == sizeof newer, "a newer caller's size");
    newer.cfg.size = sizeof cfg;
    CHECK(!memcmp(&newer.cfg, &cfg, offsetof(gmlp_config, stem_norm) + sizeof(int)), "a newer caller's fields");
    int kept = 1;
    for (size_t i = 0; i < sizeof newer.later; i++)
        kept &= newer.later[i] == 0xa5;
    CHECK(kept, "the fields past the library's are left alone");
    gmlp_model_free(m);

    /* preprocessing: a size is needed too; gmlp_config_default gives timm's defaults */
    gmlp_config def;
    gmlp_config_default(&def);
    CHECK(def.size == sizeof def && def.in_chans == 3 && def.img_h == 224 && def.img_w == 224 &&
              def.crop_pct == 0.875f && def.mean[2] == 0.5f && def.std[0] == 0.5f &&
              def.interpolation == GMLP_INTERP_BICUBIC && def.crop_mode == GMLP_CROP_CENTER,
          "gmlp_config_default");
    def.img_h = def.img_w = 8;
    uint8_t px[5 * 7 * 3];
    for (size_t i = 0; i < sizeof px; i++)
        px[i] = (uint8_t)(i * 37);
    float a[3 * 8 * 8], b[3 * 8 * 8];
    CHECK(gmlp_preprocess_rgb8(&def, px, 7, 5, 3, a) == GMLP_OK, "preprocess: %s", gmlp_last_error(NULL));
    cfg = def;
    cfg.size = 0;
    st = gmlp_preprocess_rgb8(&cfg, px, 7, 5, 3, b);
    CHECK(st == GMLP_ERR_INVALID_ARGUMENT && strstr(gmlp_last_error(NULL), "cfg->size is 0"),
          "preprocess, size 0: %s: %s", gmlp_status_string(st), gmlp_last_error(NULL));
    const uint8_t *pixels[1] = {px};
    const int w[1] = {7}, h[1] = {5}, ch[1] = {3};
    CHECK(gmlp_preprocess_rgb8_batch(&cfg, pixels, w, h, ch, 1, b) == GMLP_ERR_INVALID_ARGUMENT, "batch, size 0");
    memcpy(&newer.cfg, &def, sizeof def);
    newer.cfg.size = sizeof newer;
    CHECK(gmlp_preprocess_rgb8(&newer.cfg, px, 7, 5, 3, b) == GMLP_OK && !memcmp(a, b, sizeof a),
          "preprocess, a newer caller's config: %s", gmlp_last_error(NULL));
}

/* gmlp_diag_random_model for each architecture: the file loads as the
 * configuration it was made from and runs. */
static void test_random_models(gmlp_context *ctx)
{
    const gmlp_config cfgs[] = {
        {.arch = GMLP_ARCH_GMLP, .in_chans = 3, .img_h = 12, .img_w = 16, .patch_h = 4, .patch_w = 4, .dim = 8,
         .depth = 2, .ffn_dim = 16, .num_classes = 3},
        {.arch = GMLP_ARCH_MIXER, .in_chans = 1, .img_h = 8, .img_w = 8, .patch_h = 2, .patch_w = 2, .dim = 8,
         .depth = 1, .ffn_dim = 16, .token_dim = 4, .num_classes = 2},
        {.arch = GMLP_ARCH_GMIXER, .in_chans = 3, .img_h = 8, .img_w = 12, .patch_h = 4, .patch_w = 4, .dim = 8,
         .depth = 2, .ffn_dim = 16, .token_dim = 6, .num_classes = 4},
        {.arch = GMLP_ARCH_GMLP_VISION, .in_chans = 2, .img_h = 12, .img_w = 20, .patch_h = 3, .patch_w = 5,
         .dim = 8, .depth = 2, .ffn_dim = 16, .heads = 2, .attn_dim = 4, .num_classes = 5},
        {.arch = GMLP_ARCH_LM, .vocab_size = 11, .seq_len = 6, .dim = 8, .depth = 1, .ffn_dim = 16, .heads = 2,
         .causal = 1},
        {.arch = GMLP_ARCH_RESMLP, .in_chans = 3, .img_h = 8, .img_w = 12, .patch_h = 4, .patch_w = 4, .dim = 8,
         .depth = 2, .ffn_dim = 15, .num_classes = 3}, /* an odd width: nothing splits it */
    };
    for (size_t i = 0; i < sizeof cfgs / sizeof *cfgs; i++) {
        const gmlp_config *want = &cfgs[i];
        void *data = NULL;
        size_t size = 0;
        gmlp_model *m = NULL;
        CHECK(gmlp_diag_random_model(want, 3, &data, &size) == GMLP_OK, "random arch %d: %s", want->arch,
              gmlp_last_error(NULL));
        CHECK(gmlp_model_load_memory(ctx, data, size, &m) == GMLP_OK, "random arch %d loads: %s", want->arch,
              gmlp_last_error(ctx));
        gmlp_config c = {.size = sizeof c};
        if (m && gmlp_model_config(m, &c) == GMLP_OK) {
            int lm = want->arch == GMLP_ARCH_LM;
            CHECK(c.arch == want->arch && c.dim == want->dim && c.depth == want->depth && c.ffn_dim == want->ffn_dim &&
                      c.attn_dim == want->attn_dim && c.heads == (want->heads ? want->heads : 1) &&
                      c.in_chans == want->in_chans && c.img_h == want->img_h && c.img_w == want->img_w &&
                      c.patch_h == want->patch_h && c.patch_w == want->patch_w && c.num_classes == want->num_classes &&
                      c.token_dim == want->token_dim &&
                      c.gate_act == (want->arch == GMLP_ARCH_GMIXER ? GMLP_GATE_SILU : GMLP_GATE_IDENTITY),
                  "random arch %d: the config read back differs", want->arch);
            size_t n = lm ? (size_t)c.seq_len * c.vocab_size : (size_t)c.num_classes;
            float *out = malloc(n * sizeof *out);
            if (lm) {
                int32_t tok[6] = {1, 2, 3, 4, 5, 6};
                CHECK(gmlp_lm_logits(m, tok, 1, 6, out) == GMLP_OK, "random LM runs: %s", gmlp_last_error(ctx));
            } else {
                float *img = calloc((size_t)c.in_chans * c.img_h * c.img_w, sizeof *img);
                CHECK(gmlp_classify(m, img, 1, out) == GMLP_OK, "random arch %d runs: %s", c.arch,
                      gmlp_last_error(ctx));
                free(img);
            }
            free(out);
        }
        gmlp_model_free(m);
        free(data);
    }
    /* no architecture, or no patch: refused, not divided by */
    gmlp_config bad[] = {cfgs[0], cfgs[0], cfgs[0]};
    bad[0].arch = -1;
    bad[1].arch = GMLP_ARCHS;
    bad[2].patch_w = 0;
    bad[2].seq_len = 12; /* what the patch would have given */
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        void *data = NULL;
        size_t size = 0;
        CHECK(gmlp_diag_random_model(&bad[i], 3, &data, &size) == GMLP_ERR_INVALID_ARGUMENT,
              "random model %zu refused: %s", i, gmlp_last_error(NULL));
        free(data);
    }
}

/* A copy of the file in memory with one value of tensor `name` (F32) set to v. */
static unsigned char *with_value(const char *path, const char *name, float v, size_t *size)
{
    unsigned char *buf = check_read_file(path, size);
    uint64_t hlen = 0;
    for (int i = 0; buf && i < 8; i++)
        hlen |= (uint64_t)buf[i] << (8 * i);
    json_t *hdr = buf ? json_loadb((const char *)buf + 8, (size_t)hlen, 0, NULL) : NULL;
    json_t *offs = json_object_get(json_object_get(hdr, name), "data_offsets");
    if (json_is_array(offs))
        memcpy(buf + 8 + hlen + json_integer_value(json_array_get(offs, 0)), &v, sizeof v);
    else
        CHECK(0, "%s has no tensor %s", path, name);
    json_decref(hdr);
    return buf;
}

/* Weights stored as half: options checked, the storage reported, about half
 * the device memory (a budget the F32 weights exceed runs the F16 model),
 * and a weight that half cannot hold refused by name. */
static void test_f16_weights(gmlp_context *ctx)
{
    const char *path = model_path("mixer_rgb");
    gmlp_load_options o;
    gmlp_load_options_default(&o);
    CHECK(o.weights == GMLP_WEIGHTS_F32, "default storage");
    gmlp_model *m = (gmlp_model *)1;
    o.weights = (gmlp_weight_type)7;
    CHECK(gmlp_model_load_ex(ctx, path, &o, &m) == GMLP_ERR_INVALID_ARGUMENT && m == NULL &&
              strstr(gmlp_last_error(ctx), "weight type"),
          "unknown weight type: %s", gmlp_last_error(ctx));
    CHECK(gmlp_model_load_memory_ex(ctx, "", 0, &o, &m) == GMLP_ERR_INVALID_ARGUMENT, "unknown weight type, memory");

    gmlp_config c32 = {.size = sizeof c32}, c16 = {.size = sizeof c16};
    CHECK(gmlp_model_load_ex(ctx, path, NULL, &m) == GMLP_OK, "NULL options: %s", gmlp_last_error(ctx));
    gmlp_model_config(m, &c32);
    gmlp_model_free(m);
    o.weights = GMLP_WEIGHTS_F16;
    CHECK(gmlp_model_load_ex(ctx, path, &o, &m) == GMLP_OK, "F16: %s", gmlp_last_error(ctx));
    gmlp_model_config(m, &c16);
    gmlp_model_free(m);
    CHECK(c32.weights == GMLP_WEIGHTS_F32 && c32.weight_bytes == c32.num_params * 4, "F32: %zu bytes, %zu params",
          c32.weight_bytes, c32.num_params);
    double ratio = (double)c16.weight_bytes / (double)c32.weight_bytes;
    printf("mixer_rgb weights: %zu bytes as F32, %zu as F16 (%.1f%%)\n", c32.weight_bytes, c16.weight_bytes,
           100 * ratio);
    CHECK(c16.weights == GMLP_WEIGHTS_F16 && ratio > 0.5 && ratio < 0.55, "F16 weights take %.3f of F32's", ratio);

    /* a budget one byte short of the F32 weights: the F16 ones and an
     * image's activations fit */
    char limit[64];
    snprintf(limit, sizeof limit, "%zu", c32.weight_bytes - 1);
    setenv("GMLP_DEVICE_MEMORY_LIMIT", limit, 1);
    gmlp_context *small;
    CHECK(gmlp_context_create(NULL, &small) == GMLP_OK, "context: %s", gmlp_last_error(NULL));
    CHECK(gmlp_model_load(small, path, &m) == GMLP_ERR_DEVICE_MEMORY, "F32 weights over a %s-byte budget", limit);
    CHECK(gmlp_model_load_ex(small, path, &o, &m) == GMLP_OK, "F16 weights within %s bytes: %s", limit,
          gmlp_last_error(small));
    size_t n = (size_t)c16.in_chans * c16.img_h * c16.img_w;
    float *img = calloc(n, sizeof *img), *out = calloc((size_t)c16.num_classes, sizeof *out);
    CHECK(gmlp_classify(m, img, 1, out) == GMLP_OK, "F16 model runs within %s bytes: %s", limit,
          gmlp_last_error(small));
    gmlp_model_free(m);
    gmlp_context_destroy(small);
    unsetenv("GMLP_DEVICE_MEMORY_LIMIT");
    free(img), free(out);

    size_t size = 0;
    unsigned char *file = with_value(path, "blocks.1.mlp_channels.fc2.weight", 1e6f, &size);
    gmlp_status st = gmlp_model_load_memory_ex(ctx, file, size, &o, &m);
    CHECK(st == GMLP_ERR_UNSUPPORTED && strstr(gmlp_last_error(ctx), "blocks.1.mlp_channels.fc2.weight") &&
              strstr(gmlp_last_error(ctx), "GMLP_WEIGHTS_F32"),
          "a weight beyond half's range: %s: %s", gmlp_status_string(st), gmlp_last_error(ctx));
    CHECK(gmlp_model_load_memory(ctx, file, size, &m) == GMLP_OK, "the same as F32: %s", gmlp_last_error(ctx));
    gmlp_model_free(m);

    /* an FP16 model stores float weights as half, and takes 1e6 saturated, as its products take it: the
     * logits those of the weight 65504, bit for bit */
    gmlp_config cp = {.size = sizeof cp};
    o.precision = GMLP_PRECISION_FP16;
    o.weights = GMLP_WEIGHTS_F32;
    CHECK(gmlp_model_load_memory_ex(ctx, file, size, &o, &m) == GMLP_OK, "FP16 precision, 1e6: %s",
          gmlp_last_error(ctx));
    gmlp_model_config(m, &cp);
    CHECK(cp.weights == GMLP_WEIGHTS_F16 && cp.weight_bytes == c16.weight_bytes,
          "an FP16 model stores float weights as half: weights %d, %zu bytes (F16: %zu)", (int)cp.weights,
          cp.weight_bytes, c16.weight_bytes);
    n = (size_t)cp.in_chans * cp.img_h * cp.img_w;
    float *img1 = malloc(n * sizeof *img1), *big = calloc((size_t)cp.num_classes, sizeof *big),
          *sat = calloc((size_t)cp.num_classes, sizeof *sat);
    for (size_t i = 0; i < n; i++)
        img1[i] = (float)((i * 29) % 97) / 48.0f - 1.0f;
    CHECK(gmlp_classify(m, img1, 1, big) == GMLP_OK, "FP16 with 1e6 runs: %s", gmlp_last_error(ctx));
    gmlp_model_free(m);
    free(file);
    file = with_value(path, "blocks.1.mlp_channels.fc2.weight", 65504.0f, &size);
    o.weights = GMLP_WEIGHTS_F16;
    CHECK(gmlp_model_load_memory_ex(ctx, file, size, &o, &m) == GMLP_OK &&
              gmlp_classify(m, img1, 1, sat) == GMLP_OK,
          "FP16 precision, 65504: %s", gmlp_last_error(ctx));
    gmlp_model_free(m);
    CHECK(!memcmp(big, sat, (size_t)cp.num_classes * sizeof *big) && big[0] == big[0],
          "FP16: 1e6 saturated as 65504: logits %g, %g", (double)big[0], (double)sat[0]);
    free(img1), free(big), free(sat);
    free(file);
}

/* bfloat16 weights: asked for (half the memory, float's range: the weight
 * half refuses loads), and what a BF16 model stores float weights as; the
 * logits near the F32 model's, not equal to them. */
static void test_bf16_weights(gmlp_context *ctx)
{
    const char *path = model_path("mixer_rgb");
    gmlp_load_options o;
    gmlp_load_options_default(&o);
    gmlp_model *m;
    gmlp_config c32 = {.size = sizeof c32}, cb = {.size = sizeof cb}, cp = {.size = sizeof cp};
    float *img = NULL, *want = NULL, *got = NULL;
    CHECK(gmlp_model_load_ex(ctx, path, NULL, &m) == GMLP_OK, "F32: %s", gmlp_last_error(ctx));
    gmlp_model_config(m, &c32);
    const size_t n = (size_t)c32.in_chans * c32.img_h * c32.img_w, classes = (size_t)c32.num_classes;
    img = malloc(n * sizeof *img), want = malloc(classes * sizeof *want), got = malloc(classes * sizeof *got);
    for (size_t i = 0; i < n; i++)
        img[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    CHECK(gmlp_classify(m, img, 1, want) == GMLP_OK, "F32 runs: %s", gmlp_last_error(ctx));
    gmlp_model_free(m);

    o.weights = GMLP_WEIGHTS_BF16;
    CHECK(gmlp_model_load_ex(ctx, path, &o, &m) == GMLP_OK, "BF16 weights: %s", gmlp_last_error(ctx));
    gmlp_model_config(m, &cb);
    CHECK(gmlp_classify(m, img, 1, got) == GMLP_OK, "BF16 weights run: %s", gmlp_last_error(ctx));
    gmlp_model_free(m);
    double ratio = (double)cb.weight_bytes / (double)c32.weight_bytes, most = 0, diff = 0;
    for (size_t i = 0; i < classes; i++) {
        most = fabs(want[i]) > most ? fabs(want[i]) : most;
        diff = fabs(got[i] - want[i]) > diff ? fabs(got[i] - want[i]) : diff;
    }
    printf("mixer_rgb with BF16 weights: %.1f%% of F32's bytes, logits off by %.2g relative\n", 100 * ratio,
           diff / most);
    CHECK(cb.weights == GMLP_WEIGHTS_BF16 && ratio > 0.5 && ratio < 0.55, "BF16 weights take %.3f of F32's", ratio);
    CHECK(diff > 0 && diff < 0.05 * most, "BF16 weights' logits %.3g from F32's (largest %.3g)", diff, most);

    size_t size = 0; /* past half's range, well inside bfloat16's */
    unsigned char *file = with_value(path, "blocks.1.mlp_channels.fc2.weight", 1e6f, &size);
    CHECK(gmlp_model_load_memory_ex(ctx, file, size, &o, &m) == GMLP_OK, "1e6 as bfloat16: %s", gmlp_last_error(ctx));
    gmlp_model_free(m);
    free(file);

    o.weights = GMLP_WEIGHTS_F32;
    o.precision = GMLP_PRECISION_BF16;
    CHECK(gmlp_model_load_ex(ctx, path, &o, &m) == GMLP_OK, "BF16 precision: %s", gmlp_last_error(ctx));
    gmlp_model_config(m, &cp);
    gmlp_model_free(m);
    CHECK(cp.weights == GMLP_WEIGHTS_BF16 && cp.weight_bytes == cb.weight_bytes,
          "a BF16 model stores float weights as bfloat16: weights %d, %zu bytes", (int)cp.weights, cp.weight_bytes);
    o.weights = GMLP_WEIGHTS_F16; /* asked for: kept */
    CHECK(gmlp_model_load_ex(ctx, path, &o, &m) == GMLP_OK, "BF16 precision, F16 weights: %s", gmlp_last_error(ctx));
    gmlp_model_config(m, &cp);
    gmlp_model_free(m);
    CHECK(cp.weights == GMLP_WEIGHTS_F16, "F16 weights asked in BF16 precision: stored as %d", (int)cp.weights);
    free(img), free(want), free(got);
}

/* The precision modes' options: names and parsing, unknown modes in the
 * options and in $GMLP_PRECISION refused, AUTO taking $GMLP_PRECISION (read
 * when the context is made) and an explicit mode overriding it, what
 * gmlp_model_precision reports, and CLBlast refusing every mode but FP32. */
static void test_precision_options(gmlp_context *ctx)
{
    for (int i = GMLP_PRECISION_AUTO; i <= GMLP_PRECISION_BF16; i++) {
        const char *name = gmlp_precision_name((gmlp_precision)i);
        char upper[16] = "";
        for (size_t j = 0; name && name[j] && j + 1 < sizeof upper; j++)
            upper[j] = (char)(name[j] >= 'a' && name[j] <= 'z' ? name[j] - 'a' + 'A' : name[j]);
        gmlp_precision a = (gmlp_precision)-1, b = (gmlp_precision)-1;
        CHECK(name && gmlp_precision_parse(name, &a) == GMLP_OK && a == (gmlp_precision)i &&
                  gmlp_precision_parse(upper, &b) == GMLP_OK && b == (gmlp_precision)i,
              "precision %d: name %s, parsed back as %d, %s as %d", i, name ? name : "(null)", (int)a, upper, (int)b);
    }
    CHECK(!gmlp_precision_name((gmlp_precision)5) && !gmlp_precision_name((gmlp_precision)-1), "unknown modes named");
    gmlp_precision p = GMLP_PRECISION_TF32;
    CHECK(gmlp_precision_parse("bogus", &p) == GMLP_ERR_INVALID_ARGUMENT && p == GMLP_PRECISION_TF32 &&
              strstr(gmlp_last_error(NULL), "bogus"),
          "precision 'bogus' parsed: %s", gmlp_last_error(NULL));
    CHECK(gmlp_precision_parse("fp3", &p) == GMLP_ERR_INVALID_ARGUMENT &&
              gmlp_precision_parse("", &p) == GMLP_ERR_INVALID_ARGUMENT &&
              gmlp_precision_parse(NULL, &p) == GMLP_ERR_INVALID_ARGUMENT &&
              gmlp_precision_parse("fp32", NULL) == GMLP_ERR_INVALID_ARGUMENT,
          "a prefix, an empty name, NULL name or NULL out parsed");

    /* out of range in the options: both loaders, nothing loaded */
    const char *path = model_path("gmlp_rgb");
    gmlp_load_options o;
    gmlp_load_options_default(&o);
    CHECK(o.precision == GMLP_PRECISION_AUTO, "default precision %d", (int)o.precision);
    static const int bad[] = {5, -1, 1000};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gmlp_model *m = (gmlp_model *)1;
        o.precision = (gmlp_precision)bad[i];
        CHECK(gmlp_model_load_ex(ctx, path, &o, &m) == GMLP_ERR_INVALID_ARGUMENT && m == NULL &&
                  strstr(gmlp_last_error(ctx), "precision"),
              "precision %d in the options: %s", bad[i], gmlp_last_error(ctx));
        m = (gmlp_model *)1;
        CHECK(gmlp_model_load_memory_ex(ctx, "", 0, &o, &m) == GMLP_ERR_INVALID_ARGUMENT && m == NULL,
              "precision %d in the options, from memory", bad[i]);
    }

    /* $GMLP_PRECISION: an unknown one fails the context, as GMLP_GEMM does */
    gmlp_context *c = (gmlp_context *)1;
    setenv("GMLP_PRECISION", "bogus", 1);
    CHECK(gmlp_context_create(NULL, &c) == GMLP_ERR_INVALID_ARGUMENT && !c &&
              strstr(gmlp_last_error(NULL), "GMLP_PRECISION=bogus"),
          "GMLP_PRECISION=bogus: %s", gmlp_last_error(NULL));
    unsetenv("GMLP_PRECISION");
    /* the on/off switches: 0/off/no/false and 1/on/yes/true, anything else fails the context */
    static const char *const switches[] = {"GMLP_COMMAND_BUFFERS", "GMLP_LM_STEP"};
    for (int i = 0; i < 2; i++) {
        char want[64];
        snprintf(want, sizeof want, "%s=maybe", switches[i]);
        setenv(switches[i], "maybe", 1);
        c = (gmlp_context *)1;
        CHECK(gmlp_context_create(NULL, &c) == GMLP_ERR_INVALID_ARGUMENT && !c &&
                  strstr(gmlp_last_error(NULL), want),
              "%s: %s", want, gmlp_last_error(NULL));
        setenv(switches[i], "off", 1);
        c = NULL;
        CHECK(gmlp_context_create(NULL, &c) == GMLP_OK, "%s=off: %s", switches[i], gmlp_last_error(NULL));
        gmlp_context_destroy(c);
        unsetenv(switches[i]);
    }
    /* bf16: what AUTO loads in; an explicit mode wins */
    setenv("GMLP_PRECISION", "bf16", 1);
    c = NULL;
    CHECK(gmlp_context_create(NULL, &c) == GMLP_OK, "GMLP_PRECISION=bf16: %s", gmlp_last_error(NULL));
    unsetenv("GMLP_PRECISION");
    if (c) {
        const char *dev = gmlp_context_device_name(c);
        const int may_mma = dev && strstr(dev, "NVIDIA"); /* a tensor-core engine where it proved itself */
        gmlp_load_options_default(&o);
        for (int explicit_mode = 0; explicit_mode <= 2; explicit_mode++) {
            const gmlp_precision want = explicit_mode == 2 ? GMLP_PRECISION_FP32 : GMLP_PRECISION_BF16;
            o.precision = explicit_mode == 0 ? GMLP_PRECISION_AUTO : want;
            gmlp_model *m = NULL;
            char engine[64] = "";
            p = GMLP_PRECISION_AUTO;
            CHECK(gmlp_model_load_ex(c, path, &o, &m) == GMLP_OK &&
                      gmlp_model_precision(m, &p, engine, sizeof engine) == GMLP_OK && p == want &&
                      (!strcmp(engine, "portable") || (may_mma && !strncmp(engine, "mma", 3)) ||
                       (want == GMLP_PRECISION_BF16 && !strncmp(engine, "vdpbf16ps", 9))), /* PoCL, AVX512_BF16 */
                  "GMLP_PRECISION=bf16, load option %s: runs %s on '%s', want %s, portable: %s",
                  gmlp_precision_name(o.precision), gmlp_precision_name(p), engine, gmlp_precision_name(want),
                  gmlp_last_error(c));
            printf("GMLP_PRECISION=bf16, load option %s: %s on %s\n", gmlp_precision_name(o.precision),
                   gmlp_precision_name(p), engine);
            gmlp_precision q = GMLP_PRECISION_AUTO;
            CHECK(gmlp_model_precision(NULL, &q, NULL, 0) == GMLP_ERR_INVALID_ARGUMENT &&
                      gmlp_model_precision(m, NULL, engine, sizeof engine) == GMLP_ERR_INVALID_ARGUMENT &&
                      (!m || (gmlp_model_precision(m, &q, NULL, 0) == GMLP_OK && q == p)),
                  "gmlp_model_precision's arguments");
            gmlp_model_free(m);
        }
        gmlp_context_destroy(c);
    }
    /* a context made without it: AUTO is FP32 */
    gmlp_model *m = NULL;
    gmlp_load_options_default(&o);
    CHECK(gmlp_model_load_ex(ctx, path, &o, &m) == GMLP_OK && gmlp_model_precision(m, &p, NULL, 0) == GMLP_OK &&
              p == GMLP_PRECISION_FP32,
          "AUTO without GMLP_PRECISION: %s", gmlp_precision_name(p));
    gmlp_model_free(m);

    /* CLBlast runs fp32 only */
    if (!GMLP_HAVE_CLBLAST) {
        printf("SKIP: CLBlast with a precision mode: built without CLBlast (meson setup -Dclblast)\n");
        return;
    }
    gmlp_context_options co;
    gmlp_context_options_default(&co);
    co.gemm = GMLP_GEMM_CLBLAST;
    c = NULL;
    CHECK(gmlp_context_create_ex(&co, &c) == GMLP_OK, "CLBlast context: %s", gmlp_last_error(NULL));
    for (int i = GMLP_PRECISION_FP32; c && i <= GMLP_PRECISION_BF16; i++) {
        o.precision = (gmlp_precision)i;
        m = NULL;
        gmlp_status st = gmlp_model_load_ex(c, path, &o, &m);
        if (i == GMLP_PRECISION_FP32)
            CHECK(st == GMLP_OK, "CLBlast in FP32: %s", gmlp_last_error(c));
        else
            CHECK(st == GMLP_ERR_UNSUPPORTED && !m && strstr(gmlp_last_error(c), "CLBlast"),
                  "CLBlast in %s: %s: %s", gmlp_precision_name(o.precision), gmlp_status_string(st), gmlp_last_error(c));
        gmlp_model_free(m);
    }
    gmlp_context_destroy(c);
    setenv("GMLP_GEMM", "clblast", 1);
    setenv("GMLP_PRECISION", "tf32", 1);
    c = NULL;
    CHECK(gmlp_context_create(NULL, &c) == GMLP_OK, "GMLP_GEMM=clblast GMLP_PRECISION=tf32: %s", gmlp_last_error(NULL));
    unsetenv("GMLP_GEMM");
    unsetenv("GMLP_PRECISION");
    m = NULL;
    gmlp_status st = c ? gmlp_model_load(c, path, &m) : GMLP_ERR_UNSUPPORTED;
    CHECK(st == GMLP_ERR_UNSUPPORTED && !m, "GMLP_GEMM=clblast GMLP_PRECISION=tf32, AUTO load: %s: %s",
          gmlp_status_string(st), c ? gmlp_last_error(c) : "");
    gmlp_model_free(m);
    gmlp_context_destroy(c);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: test_api DATA_DIR\n");
        return 2;
    }
    data_dir = argv[1];
    gmlp_context *ctx = check_context();
    test_basics();
    test_names();
    test_device_selection();
    test_device_report();
    test_model_args(ctx);
    test_one_forward(ctx);
    test_config_size(ctx);
    test_chunking(ctx, "gmlp_rgb");
    test_chunking(ctx, "gmlpvision_heads_attn_f16");
    test_random_models(ctx);
    test_f16_weights(ctx);
    test_bf16_weights(ctx);
    test_precision_options(ctx);
    gmlp_context_destroy(ctx);
    test_cache_and_failures();
    return check_summary("test_api");
}
