/* gmlp-bench --profile: after an image configuration's timed rows, one more
 * forward per batch in a context with queue profiling on, read through
 * gmlp_diag_profile: device time per kernel variant, its share of the
 * forward's kernel time, the bytes its operands move (each element once, as
 * stored: what the storage plan decides) and at what rate, the forward's
 * bytes, and what all GEMMs together reach on the forward's
 * linear-layer FLOPs (the rows name a GEMM's tiling, not its shape, so a rate
 * per GEMM row cannot be had).  Into each row's JSON as "profile", printed as
 * tables at the end and into --md. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "report.h"
#include "gmlp_diag.h"

static int by_total(const void *a, const void *b)
{
    double x = ((const gmlp_diag_kernel_time *)a)->total_us, y = ((const gmlp_diag_kernel_time *)b)->total_us;
    return x > y ? -1 : x < y;
}

/* The library's GEMM kernel and CLBlast's routines (their rows' names). */
static int is_gemm(const char *name)
{
    return !strncmp(name, "gmlp_gemm", 9) || !strncmp(name, "CLBlast", 7);
}

/* One untimed forward (kernels built, workspaces made), then the profiled one:
 * its rows into row's "profile"; 0 (said why) on failure. */
static int profile_batch(gmlp_context *ctx, gmlp_model *m, const gmlp_config *cfg, double flops, json_t *row)
{
    size_t batch = (size_t)json_integer_value(json_object_get(row, "batch")), n = 0;
    float *img = calloc(batch * cfg->in_chans * cfg->img_h * cfg->img_w, sizeof *img);
    float *logits = calloc(batch * (size_t)cfg->num_classes, sizeof *logits);
    gmlp_diag_kernel_time *rows = NULL;
    gmlp_status st = img && logits ? gmlp_classify(m, img, batch, logits) : GMLP_ERR_HOST_MEMORY;
    double wall = 0;
    if (st == GMLP_OK) {
        gmlp_diag_profile_reset(ctx);
        wall = bench_now();
        st = gmlp_classify(m, img, batch, logits);
        wall = bench_now() - wall;
    }
    if (st == GMLP_OK)
        st = gmlp_diag_profile(ctx, NULL, 0, &n); /* the count, to size the rows */
    if (st == GMLP_OK && !(rows = calloc(n ? n : 1, sizeof *rows)))
        st = GMLP_ERR_HOST_MEMORY;
    if (st == GMLP_OK)
        st = gmlp_diag_profile(ctx, rows, n, &n);
    free(img), free(logits);
    if (st != GMLP_OK) {
        fprintf(stderr, "gmlp-bench: --profile at batch %zu: %s\n", batch,
                st == GMLP_ERR_HOST_MEMORY ? "out of host memory" : gmlp_last_error(ctx));
        free(rows);
        return 0;
    }
    qsort(rows, n, sizeof *rows, by_total);
    double all = 0, gemm = 0, bytes = 0;
    for (size_t i = 0; i < n; i++) {
        all += rows[i].total_us;
        bytes += rows[i].bytes;
        gemm += is_gemm(rows[i].name) ? rows[i].total_us : 0;
    }
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        const gmlp_diag_kernel_time *r = &rows[i];
        json_array_append_new(list, json_pack("{s:s, s:I, s:f, s:f, s:f, s:b, s:f, s:f}", "kernel", r->name,
                                              "launches", (json_int_t)r->launches, "total_us", r->total_us,
                                              "mean_us", r->launches ? r->total_us / r->launches : 0.0, "share",
                                              all > 0 ? 100 * r->total_us / all : 0.0, "gemm", is_gemm(r->name),
                                              "bytes", r->bytes,
                                              "gb_per_s", r->total_us > 0 ? r->bytes / r->total_us / 1e3 : 0.0));
    }
    free(rows);
    /* all GEMMs' rate on every linear layer's FLOPs: each linear layer is one GEMM */
    json_object_set_new(row, "profile", list);
    json_object_set_new(row, "profile_kernel_us", json_real(all));
    json_object_set_new(row, "profile_bytes", json_real(bytes));
    json_object_set_new(row, "profile_wall_s", json_real(wall));
    json_object_set_new(row, "profile_gemm_us", json_real(gemm));
    json_object_set_new(row, "profile_gemm_gflops", json_real(gemm > 0 ? flops * batch / gemm / 1e3 : 0.0));
    return 1;
}

int bench_profile(bench_run *b, const char *dev_spec, const bench_setting *s, const unsigned char *file, size_t size,
                  size_t first_row, double flops_per_image)
{
    gmlp_context *ctx;
    gmlp_model *m;
    /* the library's kernel cache (NULL): the timed rows' were temporary */
    if (bench_open_model(dev_spec, s, file, size, NULL, 1, &ctx, &m) != GMLP_OK) {
        fprintf(stderr, "gmlp-bench: --profile: %s\n", gmlp_last_error(ctx));
        gmlp_context_destroy(ctx);
        return 0;
    }
    gmlp_config cfg = {.size = sizeof cfg};
    gmlp_model_config(m, &cfg);
    int ok = 1;
    for (size_t i = first_row; i < json_array_size(b->rows); i++)
        ok &= profile_batch(ctx, m, &cfg, flops_per_image, json_array_get(b->rows, i));
    gmlp_model_free(m);
    gmlp_context_destroy(ctx);
    return ok;
}

/* A profiled row's heading: what ran, and the forward's totals. */
static void heading(FILE *f, json_t *r, const char *prefix)
{
    fprintf(f, "%s%s: %s %s %s %s batch %lld: kernels %.3f ms of a %.3f ms forward (wall, profiling on); "
            "GEMMs %.3f ms, %.1f GFLOP/s on the linear layers; the operands move %.1f MB a forward\n",
            prefix, bench_json_str(r, "device"), bench_base_name(bench_json_str(r, "model")), bench_json_str(r, "weights"), bench_json_str(r, "gemm"),
            bench_json_str(r, "precision"),
            (long long)json_integer_value(json_object_get(r, "batch")), bench_json_num(r, "profile_kernel_us") / 1e3,
            bench_json_num(r, "profile_wall_s") * 1e3, bench_json_num(r, "profile_gemm_us") / 1e3, bench_json_num(r, "profile_gemm_gflops"),
            bench_json_num(r, "profile_bytes") / 1e6);
}

/* Each profiled row's heading and kernel table: text or markdown. */
static void print_tables(json_t *rows, FILE *f, int md)
{
    size_t i, j;
    json_t *r, *k;
    json_array_foreach(rows, i, r) {
        json_t *list = json_object_get(r, "profile");
        if (!list)
            continue;
        heading(f, r, md ? "\n" : "\n# profile ");
        if (md)
            fputs("\n| kernel | launches | total µs | mean µs | share | MB moved | GB/s |\n"
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
                  f);
        /* the kernel column as wide as its longest label: variants differ at their labels' ends */
        int width = 64;
        json_array_foreach(list, j, k)
            if ((int)strlen(bench_json_str(k, "kernel")) > width)
                width = (int)strlen(bench_json_str(k, "kernel"));
        if (!md)
            fprintf(f, "%-*s %8s %12s %10s %7s %9s %8s\n", width, "kernel", "launches", "total us", "mean us",
                    "share", "MB moved", "GB/s");
        json_array_foreach(list, j, k)
        {
            const char *name = bench_json_str(k, "kernel");
            const long long launches = (long long)json_integer_value(json_object_get(k, "launches"));
            const double total = bench_json_num(k, "total_us"), mean = bench_json_num(k, "mean_us"),
                         share = bench_json_num(k, "share"), mb = bench_json_num(k, "bytes") / 1e6,
                         rate = bench_json_num(k, "gb_per_s");
            if (md)
                fprintf(f, "| %s | %lld | %.1f | %.2f | %.2f%% | %.2f | %.1f |\n", name, launches, total, mean, share,
                        mb, rate);
            else
                fprintf(f, "%-*s %8lld %12.1f %10.2f %6.2f%% %9.2f %8.1f\n", width, name, launches, total, mean, share,
                        mb, rate);
        }
    }
}

void bench_profile_print(json_t *rows, FILE *f)
{
    print_tables(rows, f, 0);
}

int bench_profile_md(json_t *rows, FILE *f)
{
    print_tables(rows, f, 1);
    return ferror(f) != 0;
}
