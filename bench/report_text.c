/* gmlp-bench's image rows as stdout's table: fixed columns, a model named
 * without its folder. */
#include "bench.h"
#include "report.h"

double bench_row_peak_share(const bench_row *r)
{
    return r->sgemm_peak_tflops > 0 ? 100 * r->tflops / r->sgemm_peak_tflops : 0.0;
}

void bench_text_header(FILE *f, int name_w)
{
    fprintf(f, "%-28s %-*s %-3s %-7s %-4s %-17s %6s %10s %9s %9s %10s %8s %7s %7s %7s %8s %8s\n", "device", name_w,
            "model", "wts", "gemm", "prec", "engine", "batch", "median ms", "spread ms", "e2e ms", "images/s", "TFLOP/s", "%peak", "cold s",
            "first s", "peakMiB", "wMiB");
}

void bench_text_row(FILE *f, int name_w, const bench_row *r)
{
    fprintf(f, "%-28.28s %-*.*s %-3s %-7s %-4s %-17.17s %6zu %10.3f %9.3f %9.3f %10.1f %8.3f %6.1f%% %7.3f %7.3f %8.1f "
            "%8.1f\n",
            r->device, name_w, name_w, bench_base_name(r->model), r->weights, r->gemm, r->precision, r->engine,
            r->batch, r->median_s * 1e3,
            r->spread_s * 1e3, r->e2e_median_s * 1e3, r->images_per_s, r->tflops, bench_row_peak_share(r),
            r->first_result_cold_s, r->first_result_s, r->peak_device_bytes / 1048576.0, r->weight_bytes / 1048576.0);
}
