/* gmlp-bench --md: the results as GitHub-flavoured markdown tables, as
 * llama-bench's -o md writes them: the image models, then the language
 * models, a model file named without its folder. */
#include <string.h>

#include "bench.h"
#include "report.h"

/* A table cell: '|' would end it. */
static void cell(FILE *f, const char *s)
{
    fputs("| ", f);
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc(' ', f);
}

int bench_md(json_t *rows, FILE *f)
{
    size_t i;
    json_t *r;
    int images = 0, lms = 0;
    json_array_foreach(rows, i, r) {
        images += json_object_get(r, "images_per_s") != NULL;
        lms += json_object_get(r, "tokens_per_s") != NULL;
    }
    if (images) {
        fputs("| device | model | weights | gemm | precision | engine | batch | median ms | spread ms | e2e ms (host to host) | images/s | TFLOP/s "
              "| % of SGEMM peak | cold first result s | first result s | peak MiB | weights MiB |\n"
              "| --- | --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
              "| ---: |\n",
              f);
        bench_row row;
        json_array_foreach(rows, i, r) {
            if (!bench_row_from_json(r, &row))
                continue;
            cell(f, row.device);
            cell(f, bench_base_name(row.model));
            fprintf(f, "| %s | %s | %s | %s | %zu | %.3f | %.3f | %.3f | %.1f | %.3f | %.1f | %.3f | %.3f | %.1f | %.1f |\n",
                    row.weights, row.gemm, row.precision, row.engine, row.batch, row.median_s * 1e3, row.spread_s * 1e3,
                    row.e2e_median_s * 1e3, row.images_per_s, row.tflops, bench_row_peak_share(&row),
                    row.first_result_cold_s, row.first_result_s, row.peak_device_bytes / 1048576.0,
                    row.weight_bytes / 1048576.0);
        }
    }
    if (lms) {
        fputs(images ? "\n" : "", f);
        fputs("| device | language model | precision | engine | batch | mode | tokens/s | median ms | spread ms |\n"
              "| --- | --- | --- | --- | ---: | --- | ---: | ---: | ---: |\n",
              f);
        json_array_foreach(rows, i, r) {
            if (!json_object_get(r, "tokens_per_s"))
                continue;
            cell(f, bench_json_str(r, "device"));
            cell(f, bench_base_name(bench_json_str(r, "model")));
            cell(f, bench_json_str(r, "precision"));
            cell(f, bench_json_str(r, "engine"));
            fprintf(f, "| %lld | %s | %.1f | %.3f | %.3f |\n", (long long)json_integer_value(json_object_get(r, "batch")),
                    bench_json_str(r, "mode"), bench_json_num(r, "tokens_per_s"), bench_json_num(r, "seconds") * 1e3, bench_json_num(r, "spread_s") * 1e3);
        }
    }
    return ferror(f) != 0;
}
