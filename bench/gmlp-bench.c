/* gmlp-bench: inference speed of gMLP / MLP-Mixer configurations with random
 * weights (or a given model file) on one or every OpenCL device, with the
 * weights stored as float and/or half, GEMMs on the library's kernel and/or
 * CLBlast, in one or more precisions.
 * Reports per (device, model, weights, GEMM backend, precision, batch): median and
 * spread of the time per batch, images/s, effective TFLOP/s (linear layers,
 * 2 x MACs), that as a fraction of the device's SGEMM rate (CLBlast's or the
 * library kernel's, the higher) measured in the same run, the time to the
 * first result in a new context with a cold and with a warm kernel cache,
 * and the peak device memory (all, and the weights'); with two storages or
 * backends, their relative speed; optionally JSON, CSV, markdown and an SVG
 * chart; with --profile, device time and bytes moved per kernel of one more
 * forward.  A
 * progress line per configuration on stderr estimates the time left.
 * This file is the run's steps: the options (options.c), the files, the
 * devices and configurations, the timing (image_bench.c, lm_bench.c: a row
 * each, written by report_*.c as measured), the outputs at the end. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "common.h"
#include "gmlp_diag.h"
#include "report.h"

const char *bench_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

unsigned char *bench_random_model(const gmlp_config *c, size_t *size)
{
    void *data;
    if (gmlp_diag_random_model(c, 1, &data, size) != GMLP_OK) {
        fprintf(stderr, BENCH_PROGRAM ": %s\n", gmlp_last_error(NULL));
        return NULL;
    }
    return data;
}

/* The output files (--json, --csv, --md, --svg; NULL: not asked for). */
typedef struct outputs {
    FILE *json, *csv, *md, *svg;
} outputs;

/* What the run covers: the devices and the configurations. */
#define MAX_PICKED 16

typedef struct plan {
    size_t ndev;
    int all; /* --device all: each device by its index */
    const bench_cfg *images, *lms;
    size_t n_images, n_lms;
    bench_cfg picked[2][MAX_PICKED]; /* --config's, of the image and the language models */
    bench_cfg given;      /* --model's configuration */
    unsigned char *model; /* --model's file; NULL: random weights per configuration */
    size_t model_size;
} plan;

/* An output file: a path that cannot be written fails now, not after an hour
 * of benchmarking. */
static int open_out(const char *path, FILE **f)
{
    if (!path)
        return 1;
    if (!(*f = fopen(path, "w")))
        fprintf(stderr, BENCH_PROGRAM ": cannot write %s: %s\n", path, strerror(errno));
    return *f != NULL;
}

static int close_out(FILE *f, const char *path)
{
    if (f && fclose(f)) {
        fprintf(stderr, BENCH_PROGRAM ": cannot write %s\n", path);
        return 1;
    }
    return 0;
}

/* The output files opened and --compare's file found, before anything is
 * timed; 0 (said why) on failure. */
static int open_files(const bench_opts *o, outputs *out)
{
    if (!open_out(o->json, &out->json) || !open_out(o->csv, &out->csv) || !open_out(o->md, &out->md) ||
        !open_out(o->svg, &out->svg))
        return 0;
    if (o->compare && access(o->compare, R_OK)) {
        fprintf(stderr, BENCH_PROGRAM ": cannot read %s: %s\n", o->compare, strerror(errno));
        return 0;
    }
    return 1;
}

/* Nonzero when a file could not be written. */
static int close_files(const bench_opts *o, const outputs *out)
{
    return close_out(out->json, o->json) | close_out(out->csv, o->csv) | close_out(out->md, o->md) |
           close_out(out->svg, o->svg);
}

/* How many devices the run covers: every one with --device all, else one;
 * 0 (said why) on failure. */
static int count_devices(const bench_opts *o, plan *p)
{
    p->all = o->device && !strcmp(o->device, "all");
    p->ndev = 1;
    if (!p->all)
        return 1;
    char list[16384];
    if (!gmlp_list_devices(list, sizeof list)) {
        fprintf(stderr, BENCH_PROGRAM ": %s\n", gmlp_last_error(NULL));
        return 0;
    }
    p->ndev = 0;
    for (const char *c = list; *c; c++)
        p->ndev += *c == '\n';
    return 1;
}

/* Device d's spec: its index with --device all, else --device (NULL: the default). */
static const char *device_spec(const plan *p, const bench_opts *o, size_t d, char *buf, size_t size)
{
    snprintf(buf, size, "%zu", d);
    return p->all ? buf : o->device;
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
        fprintf(stderr, BENCH_PROGRAM ": cannot read %s%s%s\n", path, len == 0 ? ": empty" : errno ? ": " : "",
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
        fprintf(stderr, BENCH_PROGRAM ": %s: %s\n", path, gmlp_last_error(ctx));
        free(buf);
        buf = NULL;
    }
    if (m) {
        cfg->size = sizeof *cfg;
        gmlp_model_config(m, cfg);
    }
    gmlp_model_free(m);
    gmlp_context_destroy(ctx);
    *size = (size_t)len;
    return buf;
}

/* Whether set (n configurations) has the one named s (len characters), into *out. */
static int find_config(const bench_cfg *set, size_t n, const char *s, size_t len, const bench_cfg **out)
{
    for (size_t j = 0; j < n; j++)
        if (strlen(set[j].name) == len && !strncmp(s, set[j].name, len))
            return *out = &set[j], 1;
    return 0;
}

/* The configurations: --model's (an image or a language model), else the
 * standard (or --tiny) image and language models, or those --config names;
 * 0 (said why) on failure. */
static int choose_configs(const bench_opts *o, plan *p)
{
    if (!o->model) {
        const bench_cfg *images = bench_image_set(o->tiny, &p->n_images), *lms = bench_lm_set(o->tiny, &p->n_lms);
        p->images = images, p->lms = lms;
        if (!o->configs)
            return 1;
        const size_t n_images = p->n_images, n_lms = p->n_lms;
        p->n_images = p->n_lms = 0;
        p->images = p->picked[0], p->lms = p->picked[1];
        for (const char *s = o->configs; *s; s += *s == ',') {
            const size_t len = strcspn(s, ",");
            const bench_cfg *c = NULL;
            int image = find_config(images, n_images, s, len, &c), twice = 0;
            if (!c && !find_config(lms, n_lms, s, len, &c)) {
                fprintf(stderr, BENCH_PROGRAM ": --config: '%.*s' is none of the %s configurations\n", (int)len, s,
                        o->tiny ? "--tiny" : "standard");
                return 0;
            }
            bench_cfg *to = p->picked[image ? 0 : 1];
            size_t *n = image ? &p->n_images : &p->n_lms;
            for (size_t j = 0; j < *n; j++)
                twice |= to[j].name == c->name;
            if (twice || *n == MAX_PICKED) {
                fprintf(stderr, BENCH_PROGRAM ": --config: '%.*s' named twice\n", (int)len, s);
                return 0;
            }
            to[(*n)++] = *c;
            s += len;
        }
        return 1;
    }
    p->given.name = o->model;
    if (!(p->model = read_model(o->model, p->all ? "0" : o->device, &p->model_size, &p->given.cfg)))
        return 0;
    if (p->given.cfg.arch == GMLP_ARCH_LM)
        p->lms = &p->given, p->n_lms = 1;
    else
        p->images = &p->given, p->n_images = 1;
    return 1;
}

/* A configuration's model file: --model's, else random weights made now
 * (release_file frees them); NULL (said why) on failure. */
static unsigned char *model_file(const plan *p, const bench_cfg *c, size_t *size)
{
    *size = p->model_size;
    return p->model ? p->model : bench_random_model(&c->cfg, size);
}

static void release_file(const plan *p, unsigned char *file)
{
    if (file != p->model)
        free(file);
}

/* --tune instead of timing, on each device: the first configuration only
 * (the standard set would take hours on a CPU); the exit status. */
static int tune(const bench_opts *o, const plan *p)
{
    const bench_cfg *c = p->n_images ? &p->images[0] : &p->lms[0];
    int rc = APP_EXIT_OK;
    for (size_t d = 0; d < p->ndev; d++) {
        char spec[32];
        size_t size;
        unsigned char *file = model_file(p, c, &size);
        if (!file || !bench_tune(o, device_spec(p, o, d, spec, sizeof spec), c->name, file, size))
            rc = APP_EXIT_FAIL;
        release_file(p, file);
    }
    return rc;
}

/* The model column's width: the longest name, within reason. */
static void fit_name(bench_run *b, const char *name)
{
    int len = (int)strlen(bench_base_name(name));
    b->name_w = len > b->name_w ? (len < 48 ? len : 48) : b->name_w;
}

/* The model column's width and the progress estimate's totals. */
static void plan_run(bench_run *b, const plan *p)
{
    const bench_opts *o = &b->o;
    int variants = bench_image_variants(o);
    b->name_w = 16;
    b->progress.t0 = bench_now();
    b->progress.steps = (int)(p->ndev * (p->n_images * (size_t)variants + p->n_lms * (size_t)o->n_precisions));
    for (size_t i = 0; i < p->n_images; i++) {
        fit_name(b, p->images[i].name);
        b->progress.total += p->ndev * variants * bench_image_work(&p->images[i].cfg, o);
    }
    for (size_t i = 0; i < p->n_lms; i++) {
        fit_name(b, p->lms[i].name);
        b->progress.total += p->ndev * o->n_precisions * bench_lm_work(&p->lms[i].cfg, o);
    }
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

/* Every configuration's rows on one device; 0 (said why) when it cannot be
 * used, a configuration's failure sets b->failed. */
static int run_device(bench_run *b, const plan *p, const char *dev_spec)
{
    print_report(dev_spec);
    gmlp_context *ctx;
    if (gmlp_context_create(dev_spec, &ctx) != GMLP_OK) {
        fprintf(stderr, BENCH_PROGRAM ": %s\n", gmlp_last_error(NULL));
        return 0;
    }
    const char *dev = gmlp_context_device_name(ctx);
    double peak = p->n_images ? bench_sgemm_peak(ctx, b->o.sgemm_n) : 0;
    for (size_t i = 0; i < p->n_images; i++) {
        size_t size;
        unsigned char *file = model_file(p, &p->images[i], &size);
        if (file)
            bench_image_rows(b, dev_spec, dev, &p->images[i], file, size, peak);
        else
            b->failed = 1;
        release_file(p, file);
    }
    if (p->n_lms)
        bench_lm_header(b);
    for (size_t i = 0; i < p->n_lms; i++) {
        size_t size;
        unsigned char *file = model_file(p, &p->lms[i], &size);
        for (int k = 0; k < b->o.n_precisions; k++) {
            gmlp_precision mode = (gmlp_precision)b->o.precisions[k];
            char what[256];
            snprintf(what, sizeof what, "%s %s", bench_base_name(p->lms[i].name), gmlp_precision_name(mode));
            bench_progress_start(&b->progress, what, dev, bench_lm_work(&p->lms[i].cfg, &b->o));
            if (!file || !bench_lm_one(b, dev_spec, p->lms[i].name, mode, file, size))
                b->failed = 1;
        }
        release_file(p, file);
    }
    gmlp_context_destroy(ctx);
    return 1;
}

/* Every configuration on every device: the tables on stdout, the rows into b
 * (and --csv); the exit status. */
static int run(bench_run *b, const plan *p)
{
    plan_run(b, p);
    if (b->csv)
        bench_csv_header(b->csv);
    if (p->n_images)
        bench_text_header(stdout, b->name_w);
    int rc = APP_EXIT_OK;
    for (size_t d = 0; d < p->ndev; d++) {
        char spec[32];
        if (!run_device(b, p, device_spec(p, &b->o, d, spec, sizeof spec)))
            rc = APP_EXIT_FAIL;
    }
    bench_progress_end(&b->progress, b->failed);
    return rc | b->failed;
}

/* After the run: the comparison tables, the files written from the rows;
 * nonzero on failure. */
static int write_results(bench_run *b, const outputs *out)
{
    const bench_opts *o = &b->o;
    int rc = 0;
    bench_effects(b);
    if (out->svg)
        rc |= bench_svg(b->rows, out->svg);
    if (out->md)
        rc |= bench_md(b->rows, out->md);
    if (out->md && o->profile)
        rc |= bench_profile_md(b->rows, out->md);
    if (o->profile)
        bench_profile_print(b->rows, stdout);
    if (o->compare) /* before the JSON: it adds torch_images_per_s to the rows */
        rc |= bench_compare(b, o->compare);
    if (out->json)
        rc |= bench_json_write(b->rows, out->json);
    return rc;
}

int main(int argc, char **argv)
{
    bench_run b = {0};
    int rc = bench_parse(argc, argv, &b.o);
    if (rc == APP_EXIT_USAGE)
        fputs("Try '" BENCH_PROGRAM " --help'.\n", stderr);
    if (rc >= 0)
        return rc;
    outputs out = {0};
    plan p = {0};
    b.rows = json_array();
    if (!open_files(&b.o, &out) || !count_devices(&b.o, &p) || !choose_configs(&b.o, &p))
        rc = APP_EXIT_FAIL;
    else if (b.o.tune)
        rc = tune(&b.o, &p);
    else {
        b.csv = out.csv;
        rc = run(&b, &p) | write_results(&b, &out);
    }
    rc |= close_files(&b.o, &out);
    json_decref(b.rows);
    free(p.model);
    return rc ? APP_EXIT_FAIL : APP_EXIT_OK;
}
