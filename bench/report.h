/* gmlp-bench's image-model results: one row struct, filled once by the
 * measuring code, and one writer per format.  The JSON rows are the run's
 * record: the markdown tables, the SVG chart and the comparisons at the end
 * read them back. */
#ifndef GMLP_BENCH_REPORT_H
#define GMLP_BENCH_REPORT_H

#include <jansson.h>
#include <stdio.h>

/* One image configuration at one batch size: every field every format writes. */
typedef struct bench_row {
    const char *device, *model; /* model: a configuration's name or --model's path */
    const char *weights, *gemm; /* bench_weight_names, bench_gemm_names */
    const char *precision, *engine; /* the mode in force and what ran it (gmlp_model_precision) */
    size_t batch;
    double median_s, spread_s;  /* device to device: the median of --runs, and max - min */
    double e2e_median_s;        /* host to host */
    double images_per_s, tflops;
    double sgemm_peak_tflops;   /* the device's SGEMM rate, the reference for "% of peak" */
    double first_result_cold_s, first_result_s;
    size_t peak_device_bytes, weight_bytes;
} bench_row;

/* tflops as a percentage of the SGEMM peak; 0 without one. */
double bench_row_peak_share(const bench_row *r);

/* Text, stdout's table: model names cut to name_w columns. */
void bench_text_header(FILE *f, int name_w);
void bench_text_row(FILE *f, int name_w, const bench_row *r);

/* CSV: the header serves image and language-model rows (lm_bench.c writes
 * those), an image row leaves tokens_per_s empty. */
void bench_csv_header(FILE *f);
void bench_csv_row(FILE *f, const bench_row *r);

/* JSON: a row as an object, an object back as a row (0: not an image row;
 * the strings stay the object's), and the document of every row; nonzero on
 * failure. */
json_t *bench_json_row(const bench_row *r);
/* A row object's field: a string ("" if absent), a number (0), a count (0 unless positive). */
const char *bench_json_str(json_t *o, const char *key);
double bench_json_num(json_t *o, const char *key);
size_t bench_json_count(json_t *o, const char *key);
int bench_row_from_json(json_t *o, bench_row *r);
int bench_json_write(json_t *rows, FILE *f);

/* Markdown (md.c): the image rows' table, then the language models'; nonzero on failure. */
int bench_md(json_t *rows, FILE *f);

#endif
