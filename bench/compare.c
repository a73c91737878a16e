/* gmlp-bench's tables after the run, from the JSON rows: the effect of the
 * weight storage, of the GEMM backend and of the precision where both of a
 * pair ran, and the speed against tools/bench_torch.py's results (--compare),
 * each precision against PyTorch's in the same. */
#include <string.h>

#include "bench.h"
#include "report.h"

/* A bench_torch.py row's precision: "precision", else "mode" (files from
 * before the precision modes), else fp32. */
static const char *torch_precision(json_t *t)
{
    const char *p = json_string_value(json_object_get(t, "precision"));
    p = p ? p : json_string_value(json_object_get(t, "mode"));
    return p ? p : "fp32";
}

/* Side by side with tools/bench_torch.py's results for the same model, batch
 * and precision, measured in the same session: the ratio of images/s. */
int bench_compare(const bench_run *run, const char *path)
{
    json_t *rows = run->rows;
    json_error_t jerr;
    json_t *doc = json_load_file(path, 0, &jerr), *theirs = json_object_get(doc, "results");
    if (!json_is_array(theirs)) {
        fprintf(stderr, BENCH_PROGRAM ": %s: %s\n", path, doc ? "no \"results\" array" : jerr.text);
        json_decref(doc);
        return 1;
    }
    printf("\n%-*s %-7s %-7s %-4s %6s %14s %14s %8s  (%s)\n", run->name_w, "model", "weights", "gemm", "prec",
           "batch", "gmlp images/s", "torch images/s", "ratio", path);
    size_t i, j;
    json_t *ours, *t;
    json_array_foreach(rows, i, ours) {
        json_array_foreach(theirs, j, t) {
            if (!json_equal(json_object_get(ours, "model"), json_object_get(t, "model")) ||
                !json_equal(json_object_get(ours, "batch"), json_object_get(t, "batch")) ||
                strcmp(bench_json_str(ours, "precision"), torch_precision(t)))
                continue;
            double a = json_real_value(json_object_get(ours, "images_per_s")),
                   b = json_number_value(json_object_get(t, "images_per_s"));
            printf("%-*.*s %-7s %-7s %-4s %6lld %14.1f %14.1f %7.2fx\n", run->name_w, run->name_w,
                   bench_base_name(json_string_value(json_object_get(ours, "model"))),
                   json_string_value(json_object_get(ours, "weights")),
                   json_string_value(json_object_get(ours, "gemm")), bench_json_str(ours, "precision"),
                   (long long)json_integer_value(json_object_get(ours, "batch")), a, b, b > 0 ? a / b : 0.0);
            json_object_set_new(ours, "torch_images_per_s", json_real(b));
            break;
        }
    }
    json_decref(doc);
    return 0;
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

/* With two values of key (weights f32/f16; gemm kernel/clblast, auto/kernel;
 * precision fp32/another): the speed of b relative to a per device, model,
 * batch and the other two settings, and the weight memory. */
static void effect(const bench_run *run, const char *key, const char *a, const char *b)
{
    static const char *const settings[] = {"weights", "gemm", "precision"};
    json_t *rows = run->rows;
    const char *other[2];
    for (int i = 0, n = 0; i < 3; i++)
        if (strcmp(settings[i], key))
            other[n++] = settings[i];
    int pairs = 0; /* the header with the first pair: none (language models only), no table */
    size_t i, j;
    json_t *rb, *ra;
    json_array_foreach(rows, i, rb) {
        if (!has(rb, key, b))
            continue;
        json_array_foreach(rows, j, ra) {
            if (!has(ra, key, a) || !same(ra, rb, "device") || !same(ra, rb, "model") || !same(ra, rb, "batch") ||
                !same(ra, rb, other[0]) || !same(ra, rb, other[1]))
                continue;
            double ib = json_real_value(json_object_get(rb, "images_per_s")),
                   ia = json_real_value(json_object_get(ra, "images_per_s"));
            double wb = (double)json_integer_value(json_object_get(rb, "weight_bytes")),
                   wa = (double)json_integer_value(json_object_get(ra, "weight_bytes"));
            if (!pairs++)
                printf("\n%-28s %-*s %-9s %-9s %6s %9s %9s %7s %9s\n", "device", run->name_w, "model", other[0],
                       other[1], "batch", a, b, "speed", "weights");
            printf("%-28.28s %-*.*s %-9s %-9s %6lld %9.1f %9.1f %6.2fx %8.1f%%\n",
                   json_string_value(json_object_get(rb, "device")), run->name_w, run->name_w,
                   bench_base_name(json_string_value(json_object_get(rb, "model"))), bench_json_str(rb, other[0]),
                   bench_json_str(rb, other[1]),
                   (long long)json_integer_value(json_object_get(rb, "batch")), ia, ib, ia > 0 ? ib / ia : 0.0,
                   wa > 0 ? 100 * wb / wa : 0.0);
            break;
        }
    }
}

static int in(const int *v, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

void bench_effects(const bench_run *run)
{
    const bench_opts *o = &run->o;
    if (o->n_weights == 2)
        effect(run, "weights", "f32", "f16");
    if (in(o->gemms, o->n_gemms, GMLP_GEMM_CLBLAST) && in(o->gemms, o->n_gemms, GMLP_GEMM_KERNEL))
        effect(run, "gemm", "clblast", "kernel");
    if (in(o->gemms, o->n_gemms, GMLP_GEMM_KERNEL) && in(o->gemms, o->n_gemms, GMLP_GEMM_AUTO))
        effect(run, "gemm", "kernel", "auto");
    for (int i = 0; i < o->n_precisions && in(o->precisions, o->n_precisions, GMLP_PRECISION_FP32); i++)
        if (o->precisions[i] != GMLP_PRECISION_FP32)
            effect(run, "precision", "fp32", gmlp_precision_name((gmlp_precision)o->precisions[i]));
}
