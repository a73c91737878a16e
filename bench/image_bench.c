/* gmlp-bench's image part: random-weight gMLP, Mixer and ResMLP image models
 * (or a given file), per weight storage, GEMM backend and precision: the time to the
 * first result in a new context (cold and warm kernel cache), then per batch
 * the median and spread of the forward (device to device; host to host
 * beside it), images/s, effective TFLOP/s and the peak device memory, a
 * bench_row each, written as it is measured. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench.h"
#include "common.h"
#include "gmlp_cl.h"
#include "gmlp_diag.h"
#include "portable.h"
#include "report.h"

/* name, arch, image size, patch, dim, depth, ffn, token dim, classes */
#define IMAGE(name, a, size, p, d, dep, ffn, tok, classes)                                                        \
    { name, {.arch = a, .in_chans = 3, .img_h = size, .img_w = size, .patch_h = p, .patch_w = p, .dim = d,        \
             .depth = dep, .ffn_dim = ffn, .token_dim = tok, .num_classes = classes,                              \
             .seq_len = (size / p) * (size / p)} }
static const bench_cfg standard[] = {
    IMAGE("gmlp_ti16_224", GMLP_ARCH_GMLP, 224, 16, 128, 30, 768, 0, 1000),
    IMAGE("gmlp_s16_224", GMLP_ARCH_GMLP, 224, 16, 256, 30, 1536, 0, 1000),
    IMAGE("gmlp_b16_224", GMLP_ARCH_GMLP, 224, 16, 512, 30, 3072, 0, 1000),
    IMAGE("mixer_b16_224", GMLP_ARCH_MIXER, 224, 16, 768, 12, 3072, 384, 1000),
    IMAGE("resmlp_12_224", GMLP_ARCH_RESMLP, 224, 16, 384, 12, 1536, 0, 1000),
};
static const bench_cfg tiny[] = {
    IMAGE("gmlp_tiny", GMLP_ARCH_GMLP, 32, 4, 32, 2, 96, 0, 10),
    IMAGE("mixer_tiny", GMLP_ARCH_MIXER, 32, 4, 32, 2, 128, 16, 10),
};
#undef IMAGE

const bench_cfg *bench_image_set(int tiny_set, size_t *n)
{
    *n = tiny_set ? sizeof tiny / sizeof *tiny : sizeof standard / sizeof *standard;
    return tiny_set ? tiny : standard;
}

/* A block's linear-layer multiply-adds per architecture, for n tokens, d
 * channels and ffn width h. */
static double gmlp_block(const gmlp_config *c, double n, double d, double h)
{
    double a = c->attn_dim; /* gMLPVision's tiny attention: qkv, q k^T, A v, out */
    return n * d * h + (h / 2) * n * n + n * (h / 2) * d + a * (3 * n * d + 2 * n * n + n * (h / 2));
}

/* Token MLP and channel MLP, fc1 then fc2 of fc2_width times fc1's. */
static double mixer_mlps(const gmlp_config *c, double n, double d, double h, double fc2_width)
{
    return (1 + fc2_width) * (c->token_dim * n * d + n * d * h);
}

static double mixer_block(const gmlp_config *c, double n, double d, double h)
{
    return mixer_mlps(c, n, d, h, 1.0);
}

static double gmixer_block(const gmlp_config *c, double n, double d, double h)
{
    return mixer_mlps(c, n, d, h, 0.5); /* GluMlp's fc2: half the width */
}

static double resmlp_block(const gmlp_config *c, double n, double d, double h)
{
    (void)c;
    return n * n * d + 2 * n * d * h; /* linear_tokens, then the channel Mlp */
}

static const struct {
    int arch;
    double (*block)(const gmlp_config *c, double n, double d, double h);
} blocks[] = {
    {GMLP_ARCH_GMLP, gmlp_block},     {GMLP_ARCH_GMLP_VISION, gmlp_block}, {GMLP_ARCH_MIXER, mixer_block},
    {GMLP_ARCH_GMIXER, gmixer_block}, {GMLP_ARCH_RESMLP, resmlp_block},
};

/* Linear-layer FLOPs per image (2 x multiply-adds), as performance.md counts:
 * the patch embedding, the blocks (an arch not in blocks[] counted as gMLP),
 * the head. */
static double flops_per_image(const gmlp_config *c)
{
    double n = c->seq_len, d = c->dim, h = c->ffn_dim, k = (double)c->in_chans * c->patch_h * c->patch_w;
    double block = gmlp_block(c, n, d, h);
    for (size_t i = 0; i < sizeof blocks / sizeof *blocks; i++)
        if (blocks[i].arch == c->arch)
            block = blocks[i].block(c, n, d, h);
    return 2 * (n * k * d + c->depth * block + d * c->num_classes);
}

/* Whether a setting is timed: CLBlast and auto not with half weights, whose
 * GEMMs always run on the kernel; CLBlast in fp32 only, all it runs. */
static int timed(const bench_setting *s)
{
    return (s->weights == GMLP_WEIGHTS_F32 || s->gemm == GMLP_GEMM_KERNEL) &&
           (s->precision == GMLP_PRECISION_FP32 || s->gemm != GMLP_GEMM_CLBLAST);
}

/* The i-th setting of --weights x --gemm x --precision, in that order, i < n_settings. */
static int n_settings(const bench_opts *o)
{
    return o->n_weights * o->n_gemms * o->n_precisions;
}

static bench_setting setting(const bench_opts *o, int i)
{
    return (bench_setting){(gmlp_weight_type)o->weights[i / (o->n_gemms * o->n_precisions)],
                           (gmlp_gemm_backend)o->gemms[i / o->n_precisions % o->n_gemms],
                           (gmlp_precision)o->precisions[i % o->n_precisions]};
}

int bench_image_variants(const bench_opts *o)
{
    int n = 0;
    for (int i = 0; i < n_settings(o); i++) {
        bench_setting s = setting(o, i);
        n += timed(&s);
    }
    return n;
}

double bench_image_work(const gmlp_config *c, const bench_opts *o)
{
    double images = 3;
    for (int i = 0; i < o->n_batches; i++)
        images += 2.0 * o->batches[i] * (o->warmup + o->runs);
    return flops_per_image(c) * images;
}

/* SGEMM rate on a square problem through one backend; 0 where it failed,
 * -1 where the library was built without that backend. */
static double sgemm_tflops(gmlp_context *ctx, size_t n, gmlp_gemm_backend backend)
{
    double secs;
    gmlp_status st = gmlp_diag_gemm_seconds(ctx, backend, n, n, n, 3, &secs);
    if (st == GMLP_ERR_UNSUPPORTED)
        return -1;
    if (st != GMLP_OK) {
        fprintf(stderr, BENCH_PROGRAM ": SGEMM: %s\n", gmlp_last_error(ctx));
        return 0;
    }
    return 2.0 * n * n * n / secs / 1e12;
}

double bench_sgemm_peak(gmlp_context *ctx, size_t n)
{
    double clblast = sgemm_tflops(ctx, n, GMLP_GEMM_CLBLAST), kernel = sgemm_tflops(ctx, n, GMLP_GEMM_KERNEL);
    char clblast_text[32] = "not built in";
    if (clblast >= 0)
        snprintf(clblast_text, sizeof clblast_text, "%.3f TFLOP/s", clblast);
    printf("# %s: SGEMM %zu^3: CLBlast %s, gmlp kernel %.3f TFLOP/s\n", gmlp_context_device_name(ctx), n,
           clblast_text, kernel);
    return clblast > kernel ? clblast : kernel;
}

gmlp_status bench_open_model(const char *dev_spec, const bench_setting *s, const unsigned char *file, size_t size,
                             const char *cache_dir, int profiling, gmlp_context **ctx, gmlp_model **m)
{
    gmlp_context_options co;
    gmlp_context_options_default(&co);
    co.device = dev_spec;
    co.gemm = s->gemm;
    co.cache_dir = cache_dir;
    co.profiling = profiling;
    gmlp_load_options lo;
    gmlp_load_options_default(&lo);
    lo.weights = s->weights;
    lo.precision = s->precision;
    *m = NULL;
    gmlp_status st = gmlp_context_create_ex(&co, ctx);
    if (st == GMLP_OK)
        st = gmlp_model_load_memory_ex(*ctx, file, size, &lo, m);
    return st;
}

/* What a configuration's rows are of: the device, the model file, the setting. */
typedef struct variant {
    const char *dev_spec, *name;
    const unsigned char *file;
    size_t size;
    bench_setting s;
} variant;

/* Seconds from a new context to the first batch-1 result, with the kernel
 * cache in dir (empty: cold; filled by a previous call: warm).  On success the
 * context and model stay open in *ctx, *m. */
static double first_result(const variant *v, const char *dir, gmlp_context **ctx, gmlp_model **m)
{
    double t0 = bench_now(), secs = -1;
    gmlp_status st = bench_open_model(v->dev_spec, &v->s, v->file, v->size, dir, 0, ctx, m);
    if (st == GMLP_OK) {
        gmlp_config cfg = {.size = sizeof cfg};
        gmlp_model_config(*m, &cfg);
        float *one = calloc((size_t)cfg.in_chans * cfg.img_h * cfg.img_w, sizeof *one);
        float *out = calloc((size_t)cfg.num_classes, sizeof *out);
        st = one && out ? gmlp_classify(*m, one, 1, out) : GMLP_ERR_HOST_MEMORY;
        secs = bench_now() - t0;
        free(one), free(out);
    }
    if (st != GMLP_OK) {
        fprintf(stderr, BENCH_PROGRAM ": %s\n", gmlp_last_error(*ctx));
        gmlp_model_free(*m);
        gmlp_context_destroy(*ctx);
        *ctx = NULL, *m = NULL;
        return -1;
    }
    return secs;
}

/* a file, or a folder once emptied (rmdir: Windows' remove leaves folders) */
static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)ftw;
    return flag == FTW_DP ? rmdir(path) : remove(path);
}

/* The time to the first result in new contexts: with a fresh kernel cache
 * (and no tuning file), then with the user's cache (where a device's tuning
 * file applies, as in any program) once a first context has filled it.  The
 * rows are timed in that last context, left open in *ctx, *m; 0 (said why) on
 * failure. */
static int first_results(const variant *v, bench_row *r, gmlp_context **ctx, gmlp_model **m)
{
    char dir[4096];
    if (!app_mkdtemp("gmlp-bench-cache-", dir, sizeof dir)) {
        perror(BENCH_PROGRAM ": mkdtemp");
        return 0;
    }
    double cold = first_result(v, dir, ctx, m), first = -1;
    nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    for (int i = 0; i < 2 && cold >= 0; i++) {
        gmlp_model_free(*m);
        gmlp_context_destroy(*ctx);
        if ((first = first_result(v, NULL, ctx, m)) < 0)
            break;
    }
    r->first_result_cold_s = cold, r->first_result_s = first;
    return first >= 0;
}

/* One batch's forward: images in host memory (gmlp_classify: the upload, the
 * forward, the logits read back) or already on the device (gmlp_classify_cl
 * into a device buffer, waited for: PyTorch's benchmark times the same, its
 * batch on the GPU). */
typedef struct forward {
    gmlp_context *ctx;
    gmlp_model *m;
    size_t batch;
    const float *img;
    float *logits;
    cl_mem dev_img, dev_logits; /* NULL: the host path */
} forward;

static int forward_once(const forward *f)
{
    if (!f->dev_img)
        return gmlp_classify(f->m, f->img, f->batch, f->logits) == GMLP_OK;
    cl_event done;
    if (gmlp_classify_cl(f->m, f->dev_img, f->batch, f->dev_logits, 0, NULL, &done) != GMLP_OK)
        return 0;
    cl_int e = clWaitForEvents(1, &done);
    clReleaseEvent(done);
    if (e != CL_SUCCESS)
        fprintf(stderr, BENCH_PROGRAM ": clWaitForEvents on the forward: OpenCL error %d\n", e);
    return e == CL_SUCCESS;
}

/* --warmup untimed forwards, then the median and spread of --runs timed ones. */
static int time_forward(const bench_opts *o, const forward *f, double *times, double *med, double *spread)
{
    for (int r = -o->warmup; r < o->runs; r++) {
        double t = bench_now();
        if (!forward_once(f)) {
            if (gmlp_last_error(f->ctx)[0])
                fprintf(stderr, BENCH_PROGRAM ": batch %zu: %s\n", f->batch, gmlp_last_error(f->ctx));
            return 0;
        }
        if (r >= 0)
            times[r] = bench_now() - t;
    }
    *med = bench_median(times, o->runs, spread);
    return 1;
}

/* A device buffer of the context holding bytes from host (NULL: uninitialised). */
static cl_mem device_buffer(gmlp_context *ctx, size_t bytes, const void *host)
{
    cl_context cl;
    cl_int e = CL_INVALID_CONTEXT;
    cl_mem m = NULL;
    if (gmlp_context_cl_objects(ctx, &cl, NULL, NULL) == GMLP_OK)
        m = clCreateBuffer(cl, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes, (void *)host, &e);
    if (!m)
        fprintf(stderr, BENCH_PROGRAM ": a device buffer of %zu bytes: OpenCL error %d\n", bytes, e);
    return m;
}

/* Host to host first (its warm-up compiles), then device to device, the
 * row's figure: r's timings; 0 (said why) on failure. */
static int time_batch(const bench_opts *o, forward *f, size_t img_bytes, size_t logit_bytes, double *times,
                      bench_row *r)
{
    if (!time_forward(o, f, times, &r->e2e_median_s, &r->spread_s))
        return 0;
    int ok = (f->dev_img = device_buffer(f->ctx, img_bytes, f->img)) &&
             (f->dev_logits = device_buffer(f->ctx, logit_bytes, NULL)) &&
             time_forward(o, f, times, &r->median_s, &r->spread_s);
    if (f->dev_img)
        clReleaseMemObject(f->dev_img);
    if (f->dev_logits)
        clReleaseMemObject(f->dev_logits);
    return ok;
}

/* The row written everywhere it goes as it is measured: stdout's table, the
 * CSV, the JSON rows (the record the other outputs read at the end). */
static void add_row(bench_run *b, const bench_row *r)
{
    bench_text_row(stdout, b->name_w, r);
    json_array_append_new(b->rows, bench_json_row(r));
    if (b->csv)
        bench_csv_row(b->csv, r);
}

/* The rows of one variant on one device, a row per batch; 0 (said why) on failure. */
static int bench_one(bench_run *b, const variant *v, double peak)
{
    const bench_opts *o = &b->o;
    bench_row r = {.model = v->name, .weights = bench_weight_names[v->s.weights],
                   .gemm = bench_gemm_names[v->s.gemm], .sgemm_peak_tflops = peak};
    gmlp_context *ctx;
    gmlp_model *m;
    char engine[64];
    if (!first_results(v, &r, &ctx, &m))
        return 0;
    if (!app_model_precision(m, &r.precision, engine, sizeof engine)) {
        fprintf(stderr, BENCH_PROGRAM ": %s\n", gmlp_last_error(ctx));
        gmlp_model_free(m);
        gmlp_context_destroy(ctx);
        return 0;
    }
    r.engine = engine;
    size_t first_row = json_array_size(b->rows);
    gmlp_config cfg = {.size = sizeof cfg};
    gmlp_model_config(m, &cfg);
    size_t per = (size_t)cfg.in_chans * cfg.img_h * cfg.img_w, classes = (size_t)cfg.num_classes;
    double fl = flops_per_image(&cfg);
    r.device = gmlp_context_device_name(ctx);
    r.weight_bytes = cfg.weight_bytes;
    int ok = 1;
    for (int bi = 0; bi < o->n_batches; bi++) {
        size_t batch = (size_t)o->batches[bi];
        float *img = calloc(batch * per, sizeof *img), *logits = calloc(batch * classes, sizeof *logits);
        double *times = malloc(sizeof *times * (size_t)o->runs);
        if (!img || !logits || !times) {
            fprintf(stderr, BENCH_PROGRAM ": out of memory at batch %zu\n", batch);
            free(img), free(logits), free(times);
            ok = 0;
            break;
        }
        forward f = {ctx, m, batch, img, logits, NULL, NULL};
        r.batch = batch;
        if (time_batch(o, &f, batch * per * sizeof *img, batch * classes * sizeof *logits, times, &r)) {
            size_t used;
            r.images_per_s = batch / r.median_s;
            r.tflops = r.images_per_s * fl / 1e12;
            r.peak_device_bytes = 0;
            gmlp_diag_memory(ctx, &used, &r.peak_device_bytes);
            add_row(b, &r);
        } else {
            fprintf(stderr, BENCH_PROGRAM ": %s batch %zu failed (said above)\n", v->name, batch);
            ok = 0;
        }
        free(img), free(logits), free(times);
    }
    gmlp_model_free(m);
    gmlp_context_destroy(ctx);
    if (o->profile)
        ok &= bench_profile(b, v->dev_spec, &v->s, v->file, v->size, first_row, fl);
    return ok;
}

void bench_image_rows(bench_run *b, const char *dev_spec, const char *dev, const bench_cfg *c,
                      const unsigned char *file, size_t size, double peak)
{
    const bench_opts *o = &b->o;
    for (int i = 0; i < n_settings(o); i++) {
        variant v = {dev_spec, c->name, file, size, setting(o, i)};
        if (!timed(&v.s))
            continue;
        char what[256];
        snprintf(what, sizeof what, "%s %s %s %s", bench_base_name(c->name), bench_weight_names[v.s.weights],
                 bench_gemm_names[v.s.gemm], gmlp_precision_name(v.s.precision));
        bench_progress_start(&b->progress, what, dev, bench_image_work(&c->cfg, o));
        if (!bench_one(b, &v, peak))
            b->failed = 1;
    }
}
