/* Shared by gmlp-bench's parts: the options, the run's outputs and progress,
 * the configurations, random-weight model files and timing. */
#ifndef GMLP_BENCH_H
#define GMLP_BENCH_H

#include <jansson.h>
#include <stdio.h>

#include "gmlp.h"
#include "timing.h"

#define BENCH_PROGRAM "gmlp-bench"
#define BENCH_MAX_BATCHES 16

typedef struct bench_opts {
    const char *device, *model, *json, *csv, *md, *compare, *svg;
    const char *configs; /* --config: a comma list of the random-weight configurations' names, else NULL: all */
    int batches[BENCH_MAX_BATCHES], n_batches, runs, warmup, tiny, profile, tune;
    int weights[2], n_weights; /* gmlp_weight_type */
    int gemms[3], n_gemms;     /* gmlp_gemm_backend */
    int precisions[4], n_precisions; /* gmlp_precision, AUTO resolved (app_precision_default) */
    size_t sgemm_n;
} bench_opts;

/* The names of gmlp_weight_type and gmlp_gemm_backend values (options.c), as
 * the options take them and the rows write them. */
extern const char *const bench_weight_names[];
extern const char *const bench_gemm_names[];

/* The command line into *o (defaults filled in): the exit status when it is
 * all there is to do (--help, --version, a usage error: said why), else -1. */
int bench_parse(int argc, char **argv, bench_opts *o);

/* A configuration to time: a name and the model's shape. */
typedef struct bench_cfg {
    const char *name;
    gmlp_config cfg;
} bench_cfg;

/* Progress on stderr (progress.c): the work of the configurations (in
 * estimated FLOPs) in all and done, and sums over the finished ones of work w
 * and seconds t, to fit t = c + k w (c: a configuration's fixed cost, the
 * kernels' compilation mostly). */
typedef struct bench_progress {
    double t0, total, done;
    double last_start, last_work, sw, st, sww, swt;
    int step, steps;
} bench_progress;

typedef struct bench_run {
    bench_opts o;
    json_t *rows; /* every row as JSON: the record the outputs at the end read */
    FILE *csv;    /* --csv's file: each row written as it is measured */
    bench_progress progress;
    int name_w; /* the model column's width */
    int failed; /* some configuration failed: the exit status is 1 */
} bench_run;

/* A line on stderr as a configuration starts: the time so far and an
 * estimate of the time left (progress.c). */
void bench_progress_start(bench_progress *p, const char *what, const char *dev, double work);
/* The last line: how many configurations took how long. */
void bench_progress_end(bench_progress *p, int failed);

/* A safetensors file in memory with random weights for config c. */
unsigned char *bench_random_model(const gmlp_config *c, size_t *size);
/* A model path's file name, for tables. */
const char *bench_base_name(const char *path);

/* Image models (image_bench.c): the standard or the tiny configurations; the
 * count of weight storage and backend variants timed per configuration; the
 * FLOPs one variant's rows take (for the progress estimate). */
const bench_cfg *bench_image_set(int tiny, size_t *n);
int bench_image_variants(const bench_opts *o);
double bench_image_work(const gmlp_config *c, const bench_opts *o);
/* The device's SGEMM rate on an n^3 problem, the larger of CLBlast's and the
 * library kernel's (each printed as a comment): "% of peak"'s reference. */
double bench_sgemm_peak(gmlp_context *ctx, size_t n);
/* The rows of one image configuration on one device, per variant; a failure
 * (said why) sets b->failed. */
void bench_image_rows(bench_run *b, const char *dev_spec, const char *dev, const bench_cfg *c,
                      const unsigned char *file, size_t size, double peak);

/* Language models: tokens/s of the full-sequence pass, of generation with
 * the decoding state (cached) and of generation by a full pass per token
 * (uncached, what g-mlp-pytorch's AutoregressiveWrapper does). */
const bench_cfg *bench_lm_set(int tiny, size_t *n);
/* The FLOPs one configuration's rows take (for the progress estimate). */
double bench_lm_work(const gmlp_config *c, const bench_opts *o);
void bench_lm_header(const bench_run *b);
/* The rows of one model file on one device in one precision; 0 (said why) on failure. */
int bench_lm_one(bench_run *b, const char *dev_spec, const char *name, gmlp_precision precision,
                 const unsigned char *file, size_t size);

/* images/s against batch per device, model, weights, GEMM backend and precision, as an SVG file; nonzero on
 * failure. */
int bench_svg(json_t *rows, FILE *f);

/* After the run (compare.c): the speed of f16 against f32 weights, of the
 * kernel against CLBlast, of auto against the kernel, of each precision
 * against fp32, where both ran; the speed against tools/bench_torch.py's JSON
 * in path, each precision against PyTorch's in the same (nonzero on failure). */
void bench_effects(const bench_run *b);
int bench_compare(const bench_run *b, const char *path);

/* What an image configuration's rows are of, besides the device and the
 * model: the weight storage, the GEMM backend and the precision. */
typedef struct bench_setting {
    gmlp_weight_type weights;
    gmlp_gemm_backend gemm;
    gmlp_precision precision;
} bench_setting;

/* A new context (queue profiling on if profiling) with the kernel cache in
 * cache_dir, and the model file loaded into it in setting s. */
gmlp_status bench_open_model(const char *dev_spec, const bench_setting *s, const unsigned char *file, size_t size,
                             const char *cache_dir, int profiling, gmlp_context **ctx, gmlp_model **m);
/* --profile: one profiled forward per row of this configuration (rows from
 * first_row on), its kernels into the row's "profile"; 0 (said why) on failure. */
int bench_profile(bench_run *b, const char *dev_spec, const bench_setting *s, const unsigned char *file, size_t size,
                  size_t first_row, double flops_per_image);
/* --tune: gmlp_tune on the model in file at each batch, per weight storage
 * and precision (the tuning file has a slot for each); 0 (said why) on failure. */
int bench_tune(const bench_opts *o, const char *dev_spec, const char *name, const unsigned char *file, size_t size);
/* The profiled rows' kernel tables, as text and as markdown (nonzero on failure). */
void bench_profile_print(json_t *rows, FILE *f);
int bench_profile_md(json_t *rows, FILE *f);

#endif
