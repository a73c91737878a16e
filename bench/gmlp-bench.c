/* gmlp-bench: inference speed of gMLP / MLP-Mixer configurations with random
 * weights (or a given model file) on one or every OpenCL device, with the
 * weights stored as float and/or half, GEMMs on the library's kernel and/or
 * CLBlast.
 * Reports per (device, model, weights, GEMM backend, batch): median and
 * spread of the time per batch, images/s, effective TFLOP/s (linear layers,
 * 2 x MACs), that as a fraction of the device's SGEMM rate (CLBlast's or the
 * library kernel's, the higher) measured in the same run, the time to the
 * first result in a new context with a cold and with a warm kernel cache,
 * and the peak device memory (all, and the weights'); with two storages or
 * backends, their relative speed; optionally JSON, CSV, markdown and an SVG
 * chart; with --profile, device time per kernel of one more forward.  A
 * progress line per configuration on stderr estimates the time left.
 * Options are one table (options[]): a new one is a line there and a case in
 * parse(). */
#define _XOPEN_SOURCE 700 /* nftw, mkdtemp */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "common.h"
#include "gmlp_cl.h"
#include "gmlp_diag.h"
#include "report.h"

#define PROGRAM "gmlp-bench"
#define MAX_BATCH 65536
#define MAX_RUNS 100000

/* gMLP, Mixer and ResMLP image models: name, arch, image size, patch, dim, depth, ffn, token dim, classes. */
typedef struct image_shape {
    const char *name;
    int arch, img, patch, dim, depth, ffn, token_dim, classes;
} image_shape;

static const image_shape standard[] = {
    {"gmlp_ti16_224", GMLP_ARCH_GMLP, 224, 16, 128, 30, 768, 0, 1000},
    {"gmlp_s16_224", GMLP_ARCH_GMLP, 224, 16, 256, 30, 1536, 0, 1000},
    {"gmlp_b16_224", GMLP_ARCH_GMLP, 224, 16, 512, 30, 3072, 0, 1000},
    {"mixer_b16_224", GMLP_ARCH_MIXER, 224, 16, 768, 12, 3072, 384, 1000},
    {"resmlp_12_224", GMLP_ARCH_RESMLP, 224, 16, 384, 12, 1536, 0, 1000},
};
static const image_shape tiny[] = {
    {"gmlp_tiny", GMLP_ARCH_GMLP, 32, 4, 32, 2, 96, 0, 10},
    {"mixer_tiny", GMLP_ARCH_MIXER, 32, 4, 32, 2, 128, 16, 10},
};

static bench_cfg to_config(const image_shape *b)
{
    gmlp_config c = {0};
    c.arch = b->arch;
    c.in_chans = 3;
    c.img_h = c.img_w = b->img;
    c.patch_h = c.patch_w = b->patch;
    c.dim = b->dim;
    c.depth = b->depth;
    c.ffn_dim = b->ffn;
    c.token_dim = b->token_dim;
    c.num_classes = b->classes;
    c.seq_len = (b->img / b->patch) * (b->img / b->patch);
    return (bench_cfg){b->name, c};
}

const char *bench_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

/* Linear-layer FLOPs per image (2 x multiply-adds), as performance.md counts. */
static double flops_per_image(const gmlp_config *c)
{
    double n = c->seq_len, d = c->dim, h = c->ffn_dim, k = (double)c->in_chans * c->patch_h * c->patch_w;
    double a = c->attn_dim; /* gMLPVision's tiny attention: qkv, q k^T, A v, out */
    double t = c->token_dim, glu = c->arch == GMLP_ARCH_GMIXER ? 0.5 : 1.0; /* GluMlp's fc2: half the width */
    double block = c->arch == GMLP_ARCH_MIXER || c->arch == GMLP_ARCH_GMIXER
                       ? (1 + glu) * (t * n * d + n * d * h)
                   : c->arch == GMLP_ARCH_RESMLP /* linear_tokens, then the channel Mlp */
                       ? n * n * d + 2 * n * d * h
                       : n * d * h + (h / 2) * n * n + n * (h / 2) * d + a * (3 * n * d + 2 * n * n + n * (h / 2));
    return 2 * (n * k * d + c->depth * block + d * c->num_classes);
}

unsigned char *bench_random_model(const gmlp_config *c, size_t *size)
{
    void *data;
    if (gmlp_diag_random_model(c, 1, &data, size) != GMLP_OK) {
        fprintf(stderr, "gmlp-bench: %s\n", gmlp_last_error(NULL));
        return NULL;
    }
    return data;
}

/* SGEMM rate on a square problem through one backend: the larger of CLBlast's
 * and the library kernel's is the reference for "fraction of peak". */
static double sgemm_tflops(gmlp_context *ctx, size_t n, gmlp_gemm_backend backend)
{
    double secs;
    if (gmlp_diag_gemm_seconds(ctx, backend, n, n, n, 3, &secs) != GMLP_OK) {
        fprintf(stderr, "gmlp-bench: SGEMM: %s\n", gmlp_last_error(ctx));
        return 0;
    }
    return 2.0 * n * n * n / secs / 1e12;
}

static const char *const weight_names[] = {[GMLP_WEIGHTS_F32] = "f32", [GMLP_WEIGHTS_F16] = "f16"};
static const char *const gemm_names[] = {
    [GMLP_GEMM_KERNEL] = "kernel", [GMLP_GEMM_CLBLAST] = "clblast", [GMLP_GEMM_AUTO] = "auto"};
#define N_NAMES(a) ((int)(sizeof a / sizeof *a))


/* "42 s", "3 min 05 s", "2 h 10 min" */
static const char *duration(double secs, char *buf, size_t size)
{
    long s = lround(secs);
    if (s < 60)
        snprintf(buf, size, "%ld s", s);
    else if (s < 3600)
        snprintf(buf, size, "%ld min %02ld s", s / 60, s % 60);
    else
        snprintf(buf, size, "%ld h %02ld min", s / 3600, s / 60 % 60);
    return buf;
}

/* The seconds the configurations left will take: t = c + k w fitted by least
 * squares to those finished (n of them), each coefficient kept >= 0. */
static double time_left(const bench_progress *p, int n)
{
    double det = n * p->sww - p->sw * p->sw, k = det > 1e-9 * n * p->sww ? (n * p->swt - p->sw * p->st) / det : -1;
    double c = k >= 0 ? (p->st - k * p->sw) / n : -1;
    if (k < 0)
        k = 0, c = p->st / n;
    else if (c < 0)
        c = 0, k = p->st / p->sw;
    return c * (p->steps - n) + k * (p->total - p->done);
}

/* One line on stderr as a configuration starts (and the last one ends: pass
 * work 0 after the last): the time so far and an estimate of the time left. */
static void progress_start(bench_run *b, const char *what, const char *dev, double work)
{
    bench_progress *p = &b->progress;
    double now = bench_now();
    if (p->step) { /* the previous configuration ended */
        double w = p->last_work, t = now - p->last_start;
        p->sw += w, p->st += t, p->sww += w * w, p->swt += w * t;
        p->done += w;
    }
    p->last_start = now, p->last_work = work;
    if (!what)
        return;
    char so_far[32], left[32];
    if (p->step)
        fprintf(stderr, PROGRAM ": [%d/%d] %s on %s: %s so far, about %s left\n", p->step + 1, p->steps, what, dev,
                duration(now - p->t0, so_far, sizeof so_far), duration(time_left(p, p->step), left, sizeof left));
    else
        fprintf(stderr, PROGRAM ": [1/%d] %s on %s: the time left is estimated after this one\n", p->steps, what,
                dev);
    p->step++;
}

/* FLOPs of one image configuration's timed and untimed batches, host to host
 * and device to device (the first results included). */
static double image_work(const gmlp_config *c, const bench_opts *o)
{
    double images = 3;
    for (int i = 0; i < o->n_batches; i++)
        images += 2.0 * o->batches[i] * (o->warmup + o->runs);
    return flops_per_image(c) * images;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

gmlp_status bench_open_model(const char *dev_spec, gmlp_gemm_backend gemm, gmlp_weight_type weights,
                             const unsigned char *file, size_t size, const char *cache_dir, int profiling,
                             gmlp_context **ctx, gmlp_model **m)
{
    gmlp_context_options co;
    gmlp_context_options_default(&co);
    co.device = dev_spec;
    co.gemm = gemm;
    co.cache_dir = cache_dir;
    co.profiling = profiling;
    gmlp_load_options lo;
    gmlp_load_options_default(&lo);
    lo.weights = weights;
    *m = NULL;
    gmlp_status st = gmlp_context_create_ex(&co, ctx);
    if (st == GMLP_OK)
        st = gmlp_model_load_memory_ex(*ctx, file, size, &lo, m);
    return st;
}

/* Seconds from a new context to the first batch-1 result, with the kernel
 * cache in dir (empty: cold; filled by a previous call: warm).  On success the
 * context and model stay open in *ctx, *m. */
static double first_result(const char *dev_spec, gmlp_gemm_backend gemm, gmlp_weight_type weights,
                           const unsigned char *file, size_t size, const char *dir, gmlp_context **ctx,
                           gmlp_model **m)
{
    double t0 = bench_now(), secs = -1;
    gmlp_status st = bench_open_model(dev_spec, gemm, weights, file, size, dir, 0, ctx, m);
    if (st == GMLP_OK) {
        gmlp_config cfg;
        gmlp_model_config(*m, &cfg);
        float *one = calloc((size_t)cfg.in_chans * cfg.img_h * cfg.img_w, sizeof *one);
        float *out = calloc((size_t)cfg.num_classes, sizeof *out);
        st = one && out ? gmlp_classify(*m, one, 1, out) : GMLP_ERR_HOST_MEMORY;
        secs = bench_now() - t0;
        free(one), free(out);
    }
    if (st != GMLP_OK) {
        fprintf(stderr, "gmlp-bench: %s\n", gmlp_last_error(*ctx));
        gmlp_model_free(*m);
        gmlp_context_destroy(*ctx);
        *ctx = NULL, *m = NULL;
        return -1;
    }
    return secs;
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
        fprintf(stderr, "gmlp-bench: clWaitForEvents on the forward: OpenCL error %d\n", e);
    return e == CL_SUCCESS;
}

/* --warmup untimed forwards, then the median and spread of --runs timed ones. */
static int time_forward(const bench_opts *o, const forward *f, double *times, double *med, double *spread)
{
    for (int r = -o->warmup; r < o->runs; r++) {
        double t = bench_now();
        if (!forward_once(f)) {
            if (gmlp_last_error(f->ctx)[0])
                fprintf(stderr, "gmlp-bench: batch %zu: %s\n", f->batch, gmlp_last_error(f->ctx));
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
        fprintf(stderr, "gmlp-bench: a device buffer of %zu bytes: OpenCL error %d\n", bytes, e);
    return m;
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

/* The rows of one model, weight storage and backend on one device; 0 (said why) on failure. */
static int bench_one(bench_run *b, const char *dev_spec, const char *name, gmlp_weight_type weights,
                     gmlp_gemm_backend gemm, const unsigned char *file, size_t size, double peak)
{
    const bench_opts *o = &b->o;
    /* time to first result in new contexts: with a fresh kernel cache (and no
     * tuning file), then with the user's cache (where a device's tuning file
     * applies, as in any program) once a first context has filled it; the
     * rows are timed in that last context */
    char dir[] = "/tmp/gmlp-bench-cache-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("gmlp-bench: mkdtemp");
        return 0;
    }
    gmlp_context *ctx;
    gmlp_model *m;
    double cold = first_result(dev_spec, gemm, weights, file, size, dir, &ctx, &m), first = -1;
    nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    for (int i = 0; i < 2 && cold >= 0; i++) {
        gmlp_model_free(m);
        gmlp_context_destroy(ctx);
        if ((first = first_result(dev_spec, gemm, weights, file, size, NULL, &ctx, &m)) < 0)
            break;
    }
    if (first < 0)
        return 0;
    size_t first_row = json_array_size(b->rows);
    gmlp_config cfg;
    gmlp_model_config(m, &cfg);
    size_t per = (size_t)cfg.in_chans * cfg.img_h * cfg.img_w;
    double fl = flops_per_image(&cfg);
    int ok = 1;
    for (int bi = 0; bi < o->n_batches; bi++) {
        size_t batch = (size_t)o->batches[bi];
        float *img = calloc(batch * per, sizeof *img), *logits = calloc(batch * (size_t)cfg.num_classes, 4);
        double *times = malloc(sizeof *times * (size_t)o->runs);
        if (!img || !logits || !times) {
            fprintf(stderr, "gmlp-bench: out of memory at batch %zu\n", batch);
            free(img), free(logits), free(times);
            ok = 0;
            break;
        }
        /* host to host first (its warm-up compiles), then device to device, the row's figure */
        forward f = {ctx, m, batch, img, logits, NULL, NULL};
        double e2e, spread, med;
        int timed = time_forward(o, &f, times, &e2e, &spread);
        if (timed) {
            timed = (f.dev_img = device_buffer(ctx, batch * per * sizeof *img, img)) &&
                    (f.dev_logits = device_buffer(ctx, batch * (size_t)cfg.num_classes * sizeof *logits, NULL)) &&
                    time_forward(o, &f, times, &med, &spread);
            if (f.dev_img)
                clReleaseMemObject(f.dev_img);
            if (f.dev_logits)
                clReleaseMemObject(f.dev_logits);
        }
        if (!timed) {
            fprintf(stderr, "gmlp-bench: %s batch %zu failed (said above)\n", name, batch);
            ok = 0;
        } else {
            bench_row r = {.device = gmlp_context_device_name(ctx), .model = name, .weights = weight_names[weights],
                           .gemm = gemm_names[gemm], .batch = batch, .median_s = med, .spread_s = spread,
                           .e2e_median_s = e2e, .images_per_s = batch / med, .sgemm_peak_tflops = peak,
                           .first_result_cold_s = cold, .first_result_s = first, .weight_bytes = cfg.weight_bytes};
            size_t used;
            r.tflops = r.images_per_s * fl / 1e12;
            gmlp_diag_memory(ctx, &used, &r.peak_device_bytes);
            add_row(b, &r);
        }
        free(img), free(logits), free(times);
    }
    gmlp_model_free(m);
    gmlp_context_destroy(ctx);
    if (o->profile)
        ok &= bench_profile(b, dev_spec, weights, gemm, file, size, first_row, fl);
    return ok;
}

/* A comma list of distinct names (index i of names is value i) into *out;
 * 0 (after saying why) on anything else. */
static int parse_names(char *arg, const char *option, const char *const *names, int count, int *out, int *n)
{
    *n = 0; /* the last --weights or --gemm counts */
    for (char *s = strtok(arg, ","); s; s = strtok(NULL, ",")) {
        int v = 0, seen = 0;
        while (v < count && (!names[v] || strcmp(s, names[v])))
            v++;
        for (int j = 0; j < *n; j++)
            seen |= out[j] == v;
        if (v == count || seen) {
            fprintf(stderr, "gmlp-bench: %s takes", option);
            for (int i = 0, k = 0; i < count; i++)
                if (names[i])
                    fprintf(stderr, "%s %s", k++ ? "," : "", names[i]);
            fprintf(stderr, " or a comma list of them, each once; not '%s'\n", s);
            return 0;
        }
        out[(*n)++] = v;
    }
    return 1;
}

enum { OPT_WARMUP = 256, OPT_MD, OPT_VERSION, OPT_PROFILE, OPT_TUNE };

/* Every option: getopt's entry (a val below 256 is also the short option), the
 * argument's name and the help text with the default ('\n' continues it). */
static const struct {
    struct option o;
    const char *arg, *help;
} options[] = {
    {{"device", required_argument, 0, 'd'}, "D",
     "OpenCL device: index, gpu, cpu, a name substring, or all: every device\n"
     "(default: $GMLP_DEVICE, else the first GPU, else the first device)"},
    {{"model", required_argument, 0, 'm'}, "FILE",
     "time this .safetensors model (image or language model) instead of the\n"
     "random-weight configurations (default: gMLP Ti/S/B 16 224, Mixer B/16 224,\n"
     "language models at seq_len 256 and 768)"},
    {{"tiny", no_argument, 0, 't'}, NULL,
     "tiny random-weight configurations, batches 1,8, --runs 3, --warmup 1,\n"
     "SGEMM 256^3: a check that everything runs (default off)"},
    {{"batch", required_argument, 0, 'b'}, "N,...",
     "image batch sizes, up to 16 of 1 to 65536 (default 1,64; --tiny 1,8)"},
    {{"runs", required_argument, 0, 'r'}, "N",
     "timed runs per row, 1 to 100000: their median and spread\n(default 10; --tiny 3)"},
    {{"warmup", required_argument, 0, OPT_WARMUP}, "N",
     "untimed runs before them, 0 to 100000 (default 3; --tiny 1)"},
    {{"weights", required_argument, 0, 'w'}, "W", "weight storage of image models: f32, f16 or f32,f16 (default f32)"},
    {{"gemm", required_argument, 0, 'g'}, "G",
     "GEMM backend of image models: kernel, clblast, auto (what a program\n"
     "gets by default: the device's tuned choice per shape, else the kernel)\n"
     "or a comma list of them (default kernel); half weights always use the\n"
     "kernel (with its tuned tilings)"},
    {{"json", required_argument, 0, 'j'}, "FILE", "every row as JSON (default none)"},
    {{"csv", required_argument, 0, 'c'}, "FILE", "every row as CSV (default none)"},
    {{"md", required_argument, 0, OPT_MD}, "FILE", "the tables as markdown (default none)"},
    {{"svg", required_argument, 0, 's'}, "FILE", "images/s against batch size as an SVG chart (default none)"},
    {{"compare", required_argument, 0, 'C'}, "FILE",
     "images/s beside those in tools/bench_torch.py's JSON for the same\n"
     "models and batches (default none)"},
    {{"profile", no_argument, 0, OPT_PROFILE}, NULL,
     "per image row, one more forward with queue profiling: device time per\n"
     "kernel, its share, the GEMMs' GFLOP/s (default off)"},
    {{"tune", no_argument, 0, OPT_TUNE}, NULL,
     "tune the GEMMs instead of timing: each kernel tiling of the library's set\n"
     "and CLBlast on the shapes of --model (default gmlp_ti16_224 random, --tiny\n"
     "gmlp_tiny) at each --batch (default 8) per --weights; the winners go to\n"
     "the cache directory, used from then on (default off)"},
    {{"help", no_argument, 0, 'h'}, NULL, "this text"},
    {{"version", no_argument, 0, OPT_VERSION}, NULL,
     "the versions of the program and the library, the OpenCL platforms"},
};
#define N_OPTIONS (sizeof options / sizeof *options)

static void usage(FILE *f)
{
    fputs("usage: " PROGRAM " [options]\n"
          "Inference speed of gMLP / MLP-Mixer image models and gMLP language models (random weights, or\n"
          "--model) on OpenCL devices: a table on stdout, progress on stderr.\n",
          f);
    for (size_t i = 0; i < N_OPTIONS; i++) {
        char left[64];
        int val = options[i].o.val;
        snprintf(left, sizeof left, "%c%c%c --%s%s%s", val < 256 ? '-' : ' ', val < 256 ? val : ' ',
                 val < 256 ? ',' : ' ', options[i].o.name, options[i].arg ? " " : "",
                 options[i].arg ? options[i].arg : "");
        fprintf(f, "  %-22s ", left);
        for (const char *h = options[i].help; *h; h++)
            if (*h == '\n')
                fprintf(f, "\n  %-22s ", "");
            else
                fputc(*h, f);
        fputc('\n', f);
    }
    fputs("Exit status: 0 done, 1 a run-time failure (a device, a model, a file, a configuration that failed),\n"
          "2 a usage error.  Environment: GMLP_DEVICE, GMLP_CACHE_DIR, GMLP_LOG.\n",
          f);
}

static int bad(const char *arg, const char *opt, const char *expected)
{
    app_bad_value(PROGRAM, opt, arg, expected);
    return APP_EXIT_USAGE;
}

/* Comma-separated batch sizes, each 1..MAX_BATCH, at most BENCH_MAX_BATCHES. */
static int parse_batches(const char *arg, bench_opts *o)
{
    static const char expected[] = "up to 16 comma-separated integers from 1 to 65536";
    o->n_batches = 0;
    for (const char *s = arg;; s++) {
        char num[32];
        size_t len = strcspn(s, ",");
        long long v;
        snprintf(num, sizeof num, "%.*s", (int)(len < 31 ? len : 31), s);
        if (len >= 31 || o->n_batches == BENCH_MAX_BATCHES || !app_parse_int(num, 1, MAX_BATCH, &v))
            return bad(arg, "--batch", expected);
        o->batches[o->n_batches++] = (int)v;
        s += len;
        if (!*s)
            return -1;
    }
}

/* The exit status when the command line is all there is to do (--help,
 * --version, a usage error), else -1. */
static int parse(int argc, char **argv, bench_opts *o)
{
    struct option lo[N_OPTIONS + 1] = {{0}};
    char shorts[2 * N_OPTIONS + 1] = "", *sp = shorts;
    for (size_t i = 0; i < N_OPTIONS; i++) {
        lo[i] = options[i].o;
        if (lo[i].val < 256) {
            *sp++ = (char)lo[i].val;
            if (lo[i].has_arg == required_argument)
                *sp++ = ':';
        }
    }
    *sp = 0;
    int runs_set = 0, warmup_set = 0;
    long long v;
    o->runs = 10;
    o->warmup = 3;
    o->sgemm_n = 1024;
    for (int c; (c = getopt_long(argc, argv, shorts, lo, NULL)) != -1;) {
        switch (c) {
        case 'd': o->device = optarg; break;
        case 'm': o->model = optarg; break;
        case 'j': o->json = optarg; break;
        case 'c': o->csv = optarg; break;
        case OPT_MD: o->md = optarg; break;
        case 't': o->tiny = 1; break;
        case OPT_PROFILE: o->profile = 1; break;
        case OPT_TUNE: o->tune = 1; break;
        case 'C': o->compare = optarg; break;
        case 's': o->svg = optarg; break;
        case 'r':
            if (!app_parse_int(optarg, 1, MAX_RUNS, &v))
                return bad(optarg, "--runs", "an integer from 1 to 100000");
            o->runs = (int)v, runs_set = 1;
            break;
        case OPT_WARMUP:
            if (!app_parse_int(optarg, 0, MAX_RUNS, &v))
                return bad(optarg, "--warmup", "an integer from 0 to 100000");
            o->warmup = (int)v, warmup_set = 1;
            break;
        case 'b': {
            int rc = parse_batches(optarg, o);
            if (rc >= 0)
                return rc;
            break;
        }
        case 'w':
            if (!parse_names(optarg, "--weights", weight_names, N_NAMES(weight_names), o->weights, &o->n_weights))
                return APP_EXIT_USAGE;
            break;
        case 'g':
            if (!parse_names(optarg, "--gemm", gemm_names, N_NAMES(gemm_names), o->gemms, &o->n_gemms))
                return APP_EXIT_USAGE;
            break;
        case 'h': usage(stdout); return APP_EXIT_OK;
        case OPT_VERSION: app_print_version(PROGRAM); return APP_EXIT_OK;
        default: return APP_EXIT_USAGE; /* getopt said why */
        }
    }
    if (optind < argc) {
        fprintf(stderr, PROGRAM ": unexpected argument '%s' (a model is given with --model FILE)\n", argv[optind]);
        return APP_EXIT_USAGE;
    }
    if (!o->n_weights)
        o->weights[o->n_weights++] = GMLP_WEIGHTS_F32;
    if (!o->n_gemms)
        o->gemms[o->n_gemms++] = GMLP_GEMM_KERNEL;
    if (!o->n_batches && o->tune) {
        o->batches[0] = 8;
        o->n_batches = 1;
    }
    if (!o->n_batches) {
        o->batches[0] = 1;
        o->batches[1] = o->tiny ? 8 : 64;
        o->n_batches = 2;
    }
    if (o->tiny) {
        o->runs = runs_set ? o->runs : 3;
        o->warmup = warmup_set ? o->warmup : 1;
        o->sgemm_n = 256;
    }
    return -1;
}

/* Side by side with tools/bench_torch.py's results for the same model and
 * batch, measured in the same session: the ratio of images/s. */
static int compare(const bench_run *run, const char *path)
{
    json_t *rows = run->rows;
    json_error_t jerr;
    json_t *doc = json_load_file(path, 0, &jerr), *theirs = json_object_get(doc, "results");
    if (!json_is_array(theirs)) {
        fprintf(stderr, "gmlp-bench: %s: %s\n", path, doc ? "no \"results\" array" : jerr.text);
        json_decref(doc);
        return 1;
    }
    printf("\n%-*s %-7s %-7s %6s %14s %14s %8s  (%s)\n", run->name_w, "model", "weights", "gemm", "batch",
           "gmlp images/s", "torch images/s", "ratio", path);
    size_t i, j;
    json_t *ours, *t;
    json_array_foreach(rows, i, ours) {
        json_array_foreach(theirs, j, t) {
            if (!json_equal(json_object_get(ours, "model"), json_object_get(t, "model")) ||
                !json_equal(json_object_get(ours, "batch"), json_object_get(t, "batch")))
                continue;
            double a = json_real_value(json_object_get(ours, "images_per_s")),
                   b = json_number_value(json_object_get(t, "images_per_s"));
            printf("%-*.*s %-7s %-7s %6lld %14.1f %14.1f %7.2fx\n", run->name_w, run->name_w,
                   bench_base_name(json_string_value(json_object_get(ours, "model"))),
                   json_string_value(json_object_get(ours, "weights")), json_string_value(json_object_get(ours, "gemm")),
                   (long long)json_integer_value(json_object_get(ours, "batch")), a, b, b > 0 ? a / b : 0.0);
            json_object_set_new(ours, "torch_images_per_s", json_real(b));
            break;
        }
    }
    json_decref(doc);
    return 0;
}

/* The device, its limits and whether each kernel builds there, as comments. */
static void print_report(const char *dev_spec)
{
    char report[16384];
    if (!gmlp_device_report(dev_spec, report, sizeof report))
        return; /* gmlp_context_create says why next */
    for (char *line = strtok(report, "\n"); line; line = strtok(NULL, "\n"))
        printf("# %s\n", line);
}

static int same(json_t *a, json_t *b, const char *key)
{
    return json_equal(json_object_get(a, key), json_object_get(b, key));
}

/* Whether row r has value v under key (language-model rows have no weights or gemm). */
static int has(json_t *r, const char *key, const char *v)
{
    const char *s = json_string_value(json_object_get(r, key));
    return s && !strcmp(s, v);
}

/* With two values of key (weights f32/f16; gemm kernel/clblast, auto/kernel): the speed of
 * b relative to a per device, model, batch and the other setting, and the
 * weight memory. */
static void effect(const bench_run *run, const char *key, const char *a, const char *b)
{
    json_t *rows = run->rows;
    const char *other = strcmp(key, "weights") ? "weights" : "gemm";
    printf("\n%-28s %-*s %-7s %6s %9s %9s %7s %9s\n", "device", run->name_w, "model", other, "batch", a, b, "speed", "weights");
    size_t i, j;
    json_t *rb, *ra;
    json_array_foreach(rows, i, rb) {
        if (!has(rb, key, b))
            continue;
        json_array_foreach(rows, j, ra) {
            if (!has(ra, key, a) || !same(ra, rb, "device") || !same(ra, rb, "model") || !same(ra, rb, "batch") ||
                !same(ra, rb, other))
                continue;
            double ib = json_real_value(json_object_get(rb, "images_per_s")),
                   ia = json_real_value(json_object_get(ra, "images_per_s"));
            double wb = (double)json_integer_value(json_object_get(rb, "weight_bytes")),
                   wa = (double)json_integer_value(json_object_get(ra, "weight_bytes"));
            printf("%-28.28s %-*.*s %-7s %6lld %9.1f %9.1f %6.2fx %8.1f%%\n",
                   json_string_value(json_object_get(rb, "device")), run->name_w, run->name_w,
                   bench_base_name(json_string_value(json_object_get(rb, "model"))),
                   json_string_value(json_object_get(rb, other)),
                   (long long)json_integer_value(json_object_get(rb, "batch")), ia, ib, ia > 0 ? ib / ia : 0.0,
                   wa > 0 ? 100 * wb / wa : 0.0);
            break;
        }
    }
}

static int has_gemm(const bench_opts *o, int gemm)
{
    for (int g = 0; g < o->n_gemms; g++)
        if (o->gemms[g] == gemm)
            return 1;
    return 0;
}

/* Every weight storage with every backend, except CLBlast and auto with half
 * weights: half GEMMs always run on the kernel. */
static void bench_variants(bench_run *b, const char *dev_spec, const char *dev, const bench_cfg *c,
                           const unsigned char *file, size_t size, double peak)
{
    const bench_opts *o = &b->o;
    for (int w = 0; w < o->n_weights; w++)
        for (int g = 0; g < o->n_gemms; g++)
            if (o->weights[w] == GMLP_WEIGHTS_F32 || o->gemms[g] == GMLP_GEMM_KERNEL) {
                char what[256];
                snprintf(what, sizeof what, "%s %s %s", bench_base_name(c->name), weight_names[o->weights[w]],
                         gemm_names[o->gemms[g]]);
                progress_start(b, what, dev, image_work(&c->cfg, o));
                if (!bench_one(b, dev_spec, c->name, o->weights[w], o->gemms[g], file, size, peak))
                    b->failed = 1;
            }
}

static int variants(const bench_opts *o)
{
    int n = 0;
    for (int w = 0; w < o->n_weights; w++)
        for (int g = 0; g < o->n_gemms; g++)
            n += o->weights[w] == GMLP_WEIGHTS_F32 || o->gemms[g] == GMLP_GEMM_KERNEL;
    return n;
}

/* --model's file into memory, and its configuration (loaded on dev_spec). */
static unsigned char *read_model(const char *path, const char *dev_spec, size_t *size, gmlp_config *cfg)
{
    errno = 0;
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    long len = -1;
    if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) ||
        !(buf = malloc((size_t)len)) || fread(buf, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, PROGRAM ": cannot read %s%s%s\n", path, len == 0 ? ": empty" : errno ? ": " : "",
                len == 0 ? "" : errno ? strerror(errno) : "");
        free(buf);
        buf = NULL;
    }
    if (f)
        fclose(f);
    gmlp_context *ctx = NULL;
    gmlp_model *m = NULL;
    if (buf && (gmlp_context_create(dev_spec, &ctx) != GMLP_OK ||
                gmlp_model_load_memory(ctx, buf, (size_t)len, &m) != GMLP_OK)) {
        fprintf(stderr, PROGRAM ": %s: %s\n", path, gmlp_last_error(ctx));
        free(buf);
        buf = NULL;
    }
    if (m)
        gmlp_model_config(m, cfg);
    gmlp_model_free(m);
    gmlp_context_destroy(ctx);
    *size = (size_t)len;
    return buf;
}

/* An output file, opened before anything is timed: a path that cannot be
 * written fails now, not after an hour of benchmarking. */
static int open_out(const char *path, FILE **f)
{
    if (!path)
        return 1;
    if (!(*f = fopen(path, "w")))
        fprintf(stderr, PROGRAM ": cannot write %s: %s\n", path, strerror(errno));
    return *f != NULL;
}

static int close_out(FILE *f, const char *path)
{
    if (f && fclose(f)) {
        fprintf(stderr, PROGRAM ": cannot write %s\n", path);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    bench_run b = {0};
    int rc = parse(argc, argv, &b.o);
    if (rc == APP_EXIT_USAGE)
        fputs("Try '" PROGRAM " --help'.\n", stderr);
    if (rc >= 0)
        return rc;
    rc = APP_EXIT_FAIL;
    const bench_opts *o = &b.o;
    FILE *json = NULL, *md = NULL, *svg = NULL;
    unsigned char *model = NULL;
    size_t model_size = 0;
    b.rows = json_array();
    if (!open_out(o->json, &json) || !open_out(o->csv, &b.csv) || !open_out(o->md, &md) || !open_out(o->svg, &svg))
        goto done;
    if (o->compare && access(o->compare, R_OK)) {
        fprintf(stderr, PROGRAM ": cannot read %s: %s\n", o->compare, strerror(errno));
        goto done;
    }
    size_t ndev = 1;
    int all = o->device && !strcmp(o->device, "all");
    if (all) {
        char list[16384];
        if (!gmlp_list_devices(list, sizeof list)) {
            fprintf(stderr, PROGRAM ": %s\n", gmlp_last_error(NULL));
            goto done;
        }
        ndev = 0;
        for (const char *p = list; *p; p++)
            ndev += *p == '\n';
    }

    /* the configurations: image models and language models */
    bench_cfg images[sizeof standard / sizeof *standard], lms[4];
    size_t n_images = 0, n_lms = 0;
    if (o->model) {
        gmlp_config c;
        if (!(model = read_model(o->model, all ? "0" : o->device, &model_size, &c)))
            goto done;
        if (c.arch == GMLP_ARCH_LM)
            lms[n_lms++] = (bench_cfg){o->model, c};
        else
            images[n_images++] = (bench_cfg){o->model, c};
    } else {
        const image_shape *set = o->tiny ? tiny : standard;
        n_images = o->tiny ? sizeof tiny / sizeof *tiny : sizeof standard / sizeof *standard;
        for (size_t i = 0; i < n_images; i++)
            images[i] = to_config(&set[i]);
        const bench_cfg *lm = bench_lm_set(o->tiny, &n_lms);
        memcpy(lms, lm, n_lms * sizeof *lm);
    }
    if (o->tune) { /* the first configuration only: the standard set would take hours on a CPU */
        const bench_cfg *c = n_images ? &images[0] : &lms[0];
        rc = APP_EXIT_OK;
        for (size_t d = 0; d < ndev; d++) {
            char spec[32];
            snprintf(spec, sizeof spec, "%zu", d);
            size_t size = model_size;
            unsigned char *file = model ? model : bench_random_model(&c->cfg, &size);
            if (!file || !bench_tune(o, all ? spec : o->device, c->name, file, size))
                rc = APP_EXIT_FAIL;
            if (file != model)
                free(file);
        }
        goto done;
    }
    /* the model column fits the longest name, within reason */
    b.name_w = 16;
    for (size_t i = 0; i < n_images + n_lms; i++) {
        int len = (int)strlen(bench_base_name(i < n_images ? images[i].name : lms[i - n_images].name));
        b.name_w = len > b.name_w ? (len < 48 ? len : 48) : b.name_w;
    }
    b.progress.t0 = bench_now();
    b.progress.steps = (int)(ndev * (n_images * (size_t)variants(o) + n_lms));
    for (size_t i = 0; i < n_images; i++)
        b.progress.total += ndev * variants(o) * image_work(&images[i].cfg, o);
    for (size_t i = 0; i < n_lms; i++)
        b.progress.total += ndev * bench_lm_work(&lms[i].cfg, o);

    if (b.csv)
        bench_csv_header(b.csv);
    if (n_images)
        bench_text_header(stdout, b.name_w);
    rc = APP_EXIT_OK;
    for (size_t d = 0; d < ndev; d++) {
        char spec[32];
        snprintf(spec, sizeof spec, "%zu", d);
        const char *dev_spec = all ? spec : o->device;
        print_report(dev_spec);
        gmlp_context *ctx;
        if (gmlp_context_create(dev_spec, &ctx) != GMLP_OK) {
            fprintf(stderr, PROGRAM ": %s\n", gmlp_last_error(NULL));
            rc = APP_EXIT_FAIL;
            continue;
        }
        const char *dev = gmlp_context_device_name(ctx);
        double peak = 0;
        if (n_images) {
            double clblast = sgemm_tflops(ctx, o->sgemm_n, GMLP_GEMM_CLBLAST);
            double kernel = sgemm_tflops(ctx, o->sgemm_n, GMLP_GEMM_KERNEL);
            peak = clblast > kernel ? clblast : kernel;
            printf("# %s: SGEMM %zu^3: CLBlast %.3f TFLOP/s, gmlp kernel %.3f TFLOP/s\n", dev, o->sgemm_n, clblast,
                   kernel);
        }
        for (size_t i = 0; i < n_images; i++) {
            size_t size = model_size;
            unsigned char *file = model ? model : bench_random_model(&images[i].cfg, &size);
            if (file)
                bench_variants(&b, dev_spec, dev, &images[i], file, size, peak);
            else
                b.failed = 1;
            if (file != model)
                free(file);
        }
        if (n_lms)
            bench_lm_header(&b);
        for (size_t i = 0; i < n_lms; i++) {
            size_t size = model_size;
            unsigned char *file = model ? model : bench_random_model(&lms[i].cfg, &size);
            progress_start(&b, bench_base_name(lms[i].name), dev, bench_lm_work(&lms[i].cfg, o));
            if (!file || !bench_lm_one(&b, dev_spec, lms[i].name, file, size))
                b.failed = 1;
            if (file != model)
                free(file);
        }
        gmlp_context_destroy(ctx);
    }
    progress_start(&b, NULL, NULL, 0);
    char took[32];
    fprintf(stderr, PROGRAM ": %d configuration%s in %s%s\n", b.progress.step, b.progress.step == 1 ? "" : "s",
            duration(bench_now() - b.progress.t0, took, sizeof took), b.failed ? ", some failed (said above)" : "");
    rc |= b.failed;
    if (o->n_weights == 2)
        effect(&b, "weights", "f32", "f16");
    if (has_gemm(o, GMLP_GEMM_CLBLAST) && has_gemm(o, GMLP_GEMM_KERNEL))
        effect(&b, "gemm", "clblast", "kernel");
    if (has_gemm(o, GMLP_GEMM_KERNEL) && has_gemm(o, GMLP_GEMM_AUTO))
        effect(&b, "gemm", "kernel", "auto");
    if (svg)
        rc |= bench_svg(b.rows, svg);
    if (md)
        rc |= bench_md(b.rows, md);
    if (md && o->profile)
        rc |= bench_profile_md(b.rows, md);
    if (o->profile)
        bench_profile_print(b.rows, stdout);
    if (o->compare)
        rc |= compare(&b, o->compare);
    if (json)
        rc |= bench_json_write(b.rows, json);
done:
    rc |= close_out(json, o->json) | close_out(b.csv, o->csv) | close_out(md, o->md) | close_out(svg, o->svg);
    json_decref(b.rows);
    free(model);
    return rc ? APP_EXIT_FAIL : APP_EXIT_OK;
}
