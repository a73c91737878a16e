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
 * backends, their relative speed; optionally an SVG chart. */
#define _XOPEN_SOURCE 700 /* nftw, mkdtemp */
#include <ftw.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "gmlp_diag.h"

typedef struct bench_cfg {
    const char *name;
    int arch, img, patch, dim, depth, ffn, token_dim, classes;
} bench_cfg;

static const bench_cfg standard[] = {
    {"gmlp_ti16_224", GMLP_ARCH_GMLP, 224, 16, 128, 30, 768, 0, 1000},
    {"gmlp_s16_224", GMLP_ARCH_GMLP, 224, 16, 256, 30, 1536, 0, 1000},
    {"gmlp_b16_224", GMLP_ARCH_GMLP, 224, 16, 512, 30, 3072, 0, 1000},
    {"mixer_b16_224", GMLP_ARCH_MIXER, 224, 16, 768, 12, 3072, 384, 1000},
};
static const bench_cfg tiny[] = {
    {"gmlp_tiny", GMLP_ARCH_GMLP, 32, 4, 32, 2, 96, 0, 10},
    {"mixer_tiny", GMLP_ARCH_MIXER, 32, 4, 32, 2, 128, 16, 10},
};

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static gmlp_config to_config(const bench_cfg *b)
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
    return c;
}

/* Linear-layer FLOPs per image (2 x multiply-adds), as performance.md counts. */
static double flops_per_image(const gmlp_config *c)
{
    double n = c->seq_len, d = c->dim, h = c->ffn_dim, k = (double)c->in_chans * c->patch_h * c->patch_w;
    double block = c->arch == GMLP_ARCH_GMLP ? n * d * h + (h / 2) * n * n + n * (h / 2) * d
                                             : 2 * c->token_dim * n * d + 2 * n * d * h;
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(double *times, int n, double *spread)
{
    qsort(times, (size_t)n, sizeof *times, cmp_double);
    if (spread)
        *spread = times[n - 1] - times[0];
    return times[n / 2];
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
static const char *const gemm_names[] = {[GMLP_GEMM_KERNEL] = "kernel", [GMLP_GEMM_CLBLAST] = "clblast"};

typedef struct opts {
    const char *device, *model, *json, *csv, *compare, *svg;
    int batches[16], n_batches, runs, warmup, tiny;
    int weights[2], n_weights; /* gmlp_weight_type */
    int gemms[2], n_gemms;     /* gmlp_gemm_backend */
    size_t sgemm_n;
} opts;

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* A new context and model (the time to the first result counts from here):
 * with the kernel cache in cache_dir. */
static gmlp_status open_model(const char *dev_spec, gmlp_gemm_backend gemm, gmlp_weight_type weights,
                              const unsigned char *file, size_t size, const char *cache_dir, gmlp_context **ctx,
                              gmlp_model **m)
{
    gmlp_context_options co;
    gmlp_context_options_default(&co);
    co.device = dev_spec;
    co.gemm = gemm;
    co.cache_dir = cache_dir;
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
    gmlp_status st = open_model(dev_spec, gemm, weights, file, size, dir, ctx, m);
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

static void bench_one(const opts *o, const char *dev_spec, const char *name, gmlp_weight_type weights,
                      gmlp_gemm_backend gemm, const unsigned char *file, size_t size, double peak, json_t *rows,
                      FILE *csv)
{
    /* time to first result in new contexts: a fresh kernel cache, then the one it filled */
    char dir[] = "/tmp/gmlp-bench-cache-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("gmlp-bench: mkdtemp");
        return;
    }
    gmlp_context *fresh;
    gmlp_model *m;
    double cold = first_result(dev_spec, gemm, weights, file, size, dir, &fresh, &m), first = -1;
    if (cold >= 0) {
        gmlp_model_free(m);
        gmlp_context_destroy(fresh);
        first = first_result(dev_spec, gemm, weights, file, size, dir, &fresh, &m);
    }
    nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    if (first < 0)
        return;
    gmlp_config cfg;
    gmlp_model_config(m, &cfg);
    size_t per = (size_t)cfg.in_chans * cfg.img_h * cfg.img_w;
    double fl = flops_per_image(&cfg);
    for (int bi = 0; bi < o->n_batches; bi++) {
        size_t batch = (size_t)o->batches[bi];
        float *img = calloc(batch * per, sizeof *img), *logits = calloc(batch * (size_t)cfg.num_classes, 4);
        double *times = malloc(sizeof *times * (size_t)o->runs);
        if (!img || !logits || !times) {
            fprintf(stderr, "gmlp-bench: out of memory at batch %zu\n", batch);
            free(img), free(logits), free(times);
            break;
        }
        gmlp_status st = GMLP_OK;
        for (int r = 0; r < o->warmup && st == GMLP_OK; r++)
            st = gmlp_classify(m, img, batch, logits);
        for (int r = 0; r < o->runs && st == GMLP_OK; r++) {
            double t = bench_now();
            st = gmlp_classify(m, img, batch, logits);
            times[r] = bench_now() - t;
        }
        if (st != GMLP_OK) {
            fprintf(stderr, "gmlp-bench: %s batch %zu: %s\n", name, batch, gmlp_last_error(fresh));
        } else {
            double spread, med = bench_median(times, o->runs, &spread);
            double ips = batch / med, tflops = ips * fl / 1e12;
            size_t mem = 0, used;
            gmlp_diag_memory(fresh, &used, &mem);
            const char *dev = gmlp_context_device_name(fresh);
            const char *wt = weight_names[weights], *gm = gemm_names[gemm];
            printf("%-28.28s %-16s %-3s %-7s %6zu %10.3f %9.3f %10.1f %8.3f %6.1f%% %7.3f %7.3f %8.1f %8.1f\n",
                   dev, name, wt, gm, batch, med * 1e3, spread * 1e3, ips, tflops,
                   peak > 0 ? 100 * tflops / peak : 0.0, cold, first, mem / 1048576.0, cfg.weight_bytes / 1048576.0);
            json_array_append_new(
                rows, json_pack("{s:s, s:s, s:s, s:s, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:I}", "device",
                                dev, "model", name, "weights", wt, "gemm", gm, "batch", (json_int_t)batch,
                                "median_s", med, "spread_s", spread, "images_per_s", ips, "tflops", tflops,
                                "sgemm_peak_tflops", peak, "first_result_cold_s", cold, "first_result_s", first,
                                "peak_device_bytes", (json_int_t)mem, "weight_bytes", (json_int_t)cfg.weight_bytes));
            if (csv)
                fprintf(csv, "%s,%s,%s,%s,%zu,%.6f,%.6f,%.2f,%.4f,%.4f,%.3f,%.3f,%zu,%zu,\n", dev, name,
                        wt, gm, batch, med, spread, ips, tflops, peak, cold, first, mem, cfg.weight_bytes);
        }
        free(img), free(logits), free(times);
    }
    gmlp_model_free(m);
    gmlp_context_destroy(fresh);
}

/* "a", "b", "a,b" or "b,a" into up to two values; 0 (after saying why) on anything else. */
static int parse_two(char *arg, const char *option, const char *a, const char *b, int va, int vb, int *out, int *n)
{
    for (char *s = strtok(arg, ","); s; s = strtok(NULL, ",")) {
        if ((strcmp(s, a) && strcmp(s, b)) || *n == 2) {
            fprintf(stderr, "gmlp-bench: %s takes %s, %s or %s,%s, not '%s'\n", option, a, b, a, b, s);
            return 0;
        }
        out[(*n)++] = strcmp(s, a) ? vb : va;
    }
    return 1;
}

static int parse(int argc, char **argv, opts *o)
{
    static const struct option lo[] = {
        {"device", required_argument, 0, 'd'}, {"model", required_argument, 0, 'm'},
        {"batch", required_argument, 0, 'b'},  {"runs", required_argument, 0, 'r'},
        {"json", required_argument, 0, 'j'},   {"csv", required_argument, 0, 'c'},
        {"tiny", no_argument, 0, 't'},         {"help", no_argument, 0, 'h'},
        {"compare", required_argument, 0, 'C'}, {"weights", required_argument, 0, 'w'},
        {"gemm", required_argument, 0, 'g'},   {"svg", required_argument, 0, 's'},
        {0, 0, 0, 0},
    };
    o->runs = 10;
    o->warmup = 3;
    o->sgemm_n = 1024;
    for (int c; (c = getopt_long(argc, argv, "d:m:b:r:j:c:C:w:g:s:th", lo, NULL)) != -1;) {
        switch (c) {
        case 'd': o->device = optarg; break;
        case 'm': o->model = optarg; break;
        case 'j': o->json = optarg; break;
        case 'c': o->csv = optarg; break;
        case 't': o->tiny = 1; break;
        case 'C': o->compare = optarg; break;
        case 's': o->svg = optarg; break;
        case 'r': o->runs = atoi(optarg); break;
        case 'b':
            for (char *s = strtok(optarg, ","); s && o->n_batches < 16; s = strtok(NULL, ","))
                o->batches[o->n_batches++] = atoi(s);
            break;
        case 'w':
            if (!parse_two(optarg, "--weights", "f32", "f16", GMLP_WEIGHTS_F32, GMLP_WEIGHTS_F16, o->weights,
                           &o->n_weights))
                return 0;
            break;
        case 'g':
            if (!parse_two(optarg, "--gemm", "kernel", "clblast", GMLP_GEMM_KERNEL, GMLP_GEMM_CLBLAST, o->gemms,
                           &o->n_gemms))
                return 0;
            break;
        default:
            fputs("usage: gmlp-bench [--device D|all] [--model FILE] [--batch 1,8,64] [--runs N] [--tiny]\n"
                  "                  [--weights f32|f16|f32,f16] [--gemm kernel|clblast|kernel,clblast]\n"
                  "                  [--json FILE] [--csv FILE] [--svg FILE] [--compare torch.json]\n",
                  c == 'h' ? stdout : stderr);
            return 0;
        }
    }
    if (!o->n_weights)
        o->weights[o->n_weights++] = GMLP_WEIGHTS_F32;
    if (!o->n_gemms)
        o->gemms[o->n_gemms++] = GMLP_GEMM_KERNEL;
    if (o->runs < 1)
        o->runs = 1;
    if (!o->n_batches) {
        o->batches[0] = 1;
        o->batches[1] = o->tiny ? 8 : 64;
        o->n_batches = 2;
    }
    if (o->tiny) {
        o->runs = o->runs > 3 ? 3 : o->runs;
        o->warmup = 1;
        o->sgemm_n = 256;
    }
    return 1;
}

/* Side by side with tools/bench_torch.py's results for the same model and
 * batch, measured in the same session: the ratio of images/s. */
static int compare(json_t *rows, const char *path)
{
    json_error_t jerr;
    json_t *doc = json_load_file(path, 0, &jerr), *theirs = json_object_get(doc, "results");
    if (!json_is_array(theirs)) {
        fprintf(stderr, "gmlp-bench: %s: %s\n", path, doc ? "no \"results\" array" : jerr.text);
        json_decref(doc);
        return 1;
    }
    printf("\n%-16s %-7s %6s %14s %14s %8s  (%s)\n", "model", "weights", "batch", "gmlp images/s", "torch images/s",
           "ratio", path);
    size_t i, j;
    json_t *ours, *t;
    json_array_foreach(rows, i, ours) {
        json_array_foreach(theirs, j, t) {
            if (!json_equal(json_object_get(ours, "model"), json_object_get(t, "model")) ||
                !json_equal(json_object_get(ours, "batch"), json_object_get(t, "batch")))
                continue;
            double a = json_real_value(json_object_get(ours, "images_per_s")),
                   b = json_number_value(json_object_get(t, "images_per_s"));
            printf("%-16s %-7s %6lld %14.1f %14.1f %7.2fx\n", json_string_value(json_object_get(ours, "model")),
                   json_string_value(json_object_get(ours, "weights")),
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

/* With two values of key (weights f32/f16, gemm kernel/clblast): the speed of
 * b relative to a per device, model, batch and the other setting, and the
 * weight memory. */
static void effect(json_t *rows, const char *key, const char *a, const char *b)
{
    const char *other = strcmp(key, "weights") ? "weights" : "gemm";
    printf("\n%-28s %-16s %-7s %6s %9s %9s %7s %9s\n", "device", "model", other, "batch", a, b, "speed", "weights");
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
            printf("%-28.28s %-16s %-7s %6lld %9.1f %9.1f %6.2fx %8.1f%%\n",
                   json_string_value(json_object_get(rb, "device")), json_string_value(json_object_get(rb, "model")),
                   json_string_value(json_object_get(rb, other)),
                   (long long)json_integer_value(json_object_get(rb, "batch")), ia, ib, ia > 0 ? ib / ia : 0.0,
                   wa > 0 ? 100 * wb / wa : 0.0);
            break;
        }
    }
}

/* Every weight storage with every backend, except CLBlast with half weights:
 * half GEMMs always run on the kernel. */
static void bench_variants(const opts *o, const char *dev_spec, const char *name, const unsigned char *file,
                           size_t size, double peak, json_t *rows, FILE *csv)
{
    for (int w = 0; w < o->n_weights; w++)
        for (int g = 0; g < o->n_gemms; g++)
            if (o->weights[w] == GMLP_WEIGHTS_F32 || o->gemms[g] == GMLP_GEMM_KERNEL)
                bench_one(o, dev_spec, name, o->weights[w], o->gemms[g], file, size, peak, rows, csv);
}

int main(int argc, char **argv)
{
    opts o = {0};
    if (!parse(argc, argv, &o))
        return 2;
    size_t ndev = 1;
    int all = o.device && !strcmp(o.device, "all");
    if (all) {
        char list[16384];
        if (!gmlp_list_devices(list, sizeof list)) {
            fprintf(stderr, "gmlp-bench: %s\n", gmlp_last_error(NULL));
            return 1;
        }
        ndev = 0;
        for (const char *p = list; *p; p++)
            ndev += *p == '\n';
    }
    json_t *rows = json_array();
    FILE *csv = o.csv ? fopen(o.csv, "w") : NULL;
    if (csv)
        fputs("device,model,weights,gemm,batch,median_s,spread_s,images_per_s,tflops,sgemm_peak_tflops,"
              "first_result_cold_s,first_result_s,peak_device_bytes,weight_bytes,tokens_per_s\n",
              csv);
    printf("%-28s %-16s %-3s %-7s %6s %10s %9s %10s %8s %7s %7s %7s %8s %8s\n", "device", "model", "wts", "gemm",
           "batch", "median ms", "spread ms", "images/s", "TFLOP/s", "%peak", "cold s", "first s", "peakMiB", "wMiB");
    int rc = 0;
    for (size_t d = 0; d < ndev; d++) {
        char spec[32];
        snprintf(spec, sizeof spec, "%zu", d);
        const char *dev_spec = all ? spec : o.device;
        print_report(dev_spec);
        gmlp_context *ctx;
        if (gmlp_context_create(dev_spec, &ctx) != GMLP_OK) {
            fprintf(stderr, "gmlp-bench: %s\n", gmlp_last_error(NULL));
            rc = 1;
            continue;
        }
        double clblast = sgemm_tflops(ctx, o.sgemm_n, GMLP_GEMM_CLBLAST);
        double kernel = sgemm_tflops(ctx, o.sgemm_n, GMLP_GEMM_KERNEL), peak = clblast > kernel ? clblast : kernel;
        printf("# %s: SGEMM %zu^3: CLBlast %.3f TFLOP/s, gmlp kernel %.3f TFLOP/s\n", gmlp_context_device_name(ctx), o.sgemm_n,
               clblast, kernel);
        if (o.model) {
            size_t size;
            FILE *f = fopen(o.model, "rb");
            unsigned char *buf = NULL;
            if (f && !fseek(f, 0, SEEK_END) && (size = (size_t)ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
                (buf = malloc(size)) && fread(buf, 1, size, f) == size)
                bench_variants(&o, dev_spec, o.model, buf, size, peak, rows, csv);
            else
                fprintf(stderr, "gmlp-bench: cannot read %s\n", o.model), rc = 1;
            free(buf);
            if (f)
                fclose(f);
        } else {
            const bench_cfg *set = o.tiny ? tiny : standard;
            size_t n = o.tiny ? sizeof tiny / sizeof *tiny : sizeof standard / sizeof *standard;
            for (size_t i = 0; i < n; i++) {
                gmlp_config c = to_config(&set[i]);
                size_t size;
                unsigned char *file = bench_random_model(&c, &size);
                if (file)
                    bench_variants(&o, dev_spec, set[i].name, file, size, peak, rows, csv);
                free(file);
            }
            bench_lm(dev_spec, o.tiny, o.runs, rows, csv);
        }
        gmlp_context_destroy(ctx);
    }
    if (o.n_weights == 2)
        effect(rows, "weights", "f32", "f16");
    if (o.n_gemms == 2)
        effect(rows, "gemm", "clblast", "kernel");
    if (o.svg)
        rc |= bench_svg(rows, o.svg);
    if (o.compare)
        rc |= compare(rows, o.compare);
    if (o.json) {
        json_t *doc = json_pack("{s:s, s:o}", "tool", "gmlp-bench", "results", rows);
        rc |= json_dump_file(doc, o.json, JSON_INDENT(2)) != 0;
        json_decref(doc);
    } else {
        json_decref(rows);
    }
    if (csv)
        fclose(csv);
    return rc;
}
