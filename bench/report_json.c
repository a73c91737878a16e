/* gmlp-bench --json: {"tool": "gmlp-bench", "results": [rows]}, a row's keys
 * named as bench_row's fields, in their order. */
#include "report.h"

json_t *bench_json_row(const bench_row *r)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:I}",
                     "device", r->device, "model", r->model, "weights", r->weights, "gemm", r->gemm, "precision",
                     r->precision, "engine", r->engine, "batch",
                     (json_int_t)r->batch, "median_s", r->median_s, "spread_s", r->spread_s, "e2e_median_s",
                     r->e2e_median_s, "images_per_s", r->images_per_s, "tflops", r->tflops, "sgemm_peak_tflops",
                     r->sgemm_peak_tflops, "first_result_cold_s", r->first_result_cold_s, "first_result_s",
                     r->first_result_s, "peak_device_bytes", (json_int_t)r->peak_device_bytes, "weight_bytes",
                     (json_int_t)r->weight_bytes);
}

const char *bench_json_str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

double bench_json_num(json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

size_t bench_json_count(json_t *o, const char *key)
{
    json_int_t v = json_integer_value(json_object_get(o, key));
    return v > 0 ? (size_t)v : 0;
}

int bench_row_from_json(json_t *o, bench_row *r)
{
    if (!json_object_get(o, "images_per_s"))
        return 0; /* a language model's row */
    *r = (bench_row){
        .device = bench_json_str(o, "device"),
        .model = bench_json_str(o, "model"),
        .weights = bench_json_str(o, "weights"),
        .gemm = bench_json_str(o, "gemm"),
        .precision = bench_json_str(o, "precision"),
        .engine = bench_json_str(o, "engine"),
        .batch = bench_json_count(o, "batch"),
        .median_s = bench_json_num(o, "median_s"),
        .spread_s = bench_json_num(o, "spread_s"),
        .e2e_median_s = bench_json_num(o, "e2e_median_s"),
        .images_per_s = bench_json_num(o, "images_per_s"),
        .tflops = bench_json_num(o, "tflops"),
        .sgemm_peak_tflops = bench_json_num(o, "sgemm_peak_tflops"),
        .first_result_cold_s = bench_json_num(o, "first_result_cold_s"),
        .first_result_s = bench_json_num(o, "first_result_s"),
        .peak_device_bytes = bench_json_count(o, "peak_device_bytes"),
        .weight_bytes = bench_json_count(o, "weight_bytes"),
    };
    return 1;
}

int bench_json_write(json_t *rows, FILE *f)
{
    json_t *doc = json_pack("{s:s, s:O}", "tool", "gmlp-bench", "results", rows);
    int rc = json_dumpf(doc, f, JSON_INDENT(2)) != 0;
    json_decref(doc);
    return rc;
}
