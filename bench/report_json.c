/* gmlp-bench --json: {"tool": "gmlp-bench", "results": [rows]}, a row's keys
 * named as bench_row's fields, in their order. */
#include "report.h"

json_t *bench_json_row(const bench_row *r)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:I}", "device",
                     r->device, "model", r->model, "weights", r->weights, "gemm", r->gemm, "batch",
                     (json_int_t)r->batch, "median_s", r->median_s, "spread_s", r->spread_s, "e2e_median_s",
                     r->e2e_median_s, "images_per_s", r->images_per_s, "tflops", r->tflops, "sgemm_peak_tflops",
                     r->sgemm_peak_tflops, "first_result_cold_s", r->first_result_cold_s, "first_result_s",
                     r->first_result_s, "peak_device_bytes", (json_int_t)r->peak_device_bytes, "weight_bytes",
                     (json_int_t)r->weight_bytes);
}

static const char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static double num(json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

static size_t count(json_t *o, const char *key)
{
    json_int_t v = json_integer_value(json_object_get(o, key));
    return v > 0 ? (size_t)v : 0;
}

int bench_row_from_json(json_t *o, bench_row *r)
{
    if (!json_object_get(o, "images_per_s"))
        return 0; /* a language model's row */
    *r = (bench_row){
        .device = str(o, "device"),
        .model = str(o, "model"),
        .weights = str(o, "weights"),
        .gemm = str(o, "gemm"),
        .batch = count(o, "batch"),
        .median_s = num(o, "median_s"),
        .spread_s = num(o, "spread_s"),
        .e2e_median_s = num(o, "e2e_median_s"),
        .images_per_s = num(o, "images_per_s"),
        .tflops = num(o, "tflops"),
        .sgemm_peak_tflops = num(o, "sgemm_peak_tflops"),
        .first_result_cold_s = num(o, "first_result_cold_s"),
        .first_result_s = num(o, "first_result_s"),
        .peak_device_bytes = count(o, "peak_device_bytes"),
        .weight_bytes = count(o, "weight_bytes"),
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
