/* gmlp-bench --csv: a row per line, numbers at fixed decimals. */
#include "report.h"

void bench_csv_header(FILE *f)
{
    fputs("device,model,weights,gemm,precision,engine,batch,median_s,spread_s,e2e_median_s,images_per_s,tflops,sgemm_peak_tflops,"
          "first_result_cold_s,first_result_s,peak_device_bytes,weight_bytes,tokens_per_s\n",
          f);
}

void bench_csv_row(FILE *f, const bench_row *r)
{
    fprintf(f, "%s,%s,%s,%s,%s,%s,%zu,%.6f,%.6f,%.6f,%.2f,%.4f,%.4f,%.3f,%.3f,%zu,%zu,\n", r->device, r->model,
            r->weights, r->gemm, r->precision, r->engine, r->batch, r->median_s, r->spread_s, r->e2e_median_s, r->images_per_s, r->tflops,
            r->sgemm_peak_tflops, r->first_result_cold_s, r->first_result_s, r->peak_device_bytes, r->weight_bytes);
}
