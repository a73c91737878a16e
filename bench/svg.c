/* gmlp-bench --svg: images/s against batch size, one line per device, model,
 * weight storage, GEMM backend and precision (the rows that have images_per_s), both
 * axes logarithmic, as a stand-alone SVG file a browser opens. */
#include <math.h>
#include <string.h>

#include "bench.h"
#include "report.h"
#include "svg.h"

#define W 960
#define PLOT_H 460
#define LEFT 80
#define RIGHT 30
#define TOP 40
#define BOTTOM 60 /* then one legend line per series */
#define LEGEND_LINE 18
#define MAX_SERIES 64

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                      "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

/* Rows of one line share these; a model file is named without its folder. */
static void series_key(json_t *row, char *buf, size_t size)
{
    snprintf(buf, size, "%s | %s | weights %s | gemm %s | %s", bench_json_str(row, "device"),
             bench_base_name(bench_json_str(row, "model")), bench_json_str(row, "weights"), bench_json_str(row, "gemm"),
             bench_json_str(row, "precision"));
}

/* Whether row r is a plotted point (of the series key, if not NULL): its batch and images/s. */
static int point(json_t *r, const char *key, double *b, double *ips)
{
    char k[256];
    series_key(r, k, sizeof k);
    *ips = json_number_value(json_object_get(r, "images_per_s"));
    *b = (double)json_integer_value(json_object_get(r, "batch"));
    return *ips > 0 && *b > 0 && (!key || !strcmp(k, key));
}

int bench_svg(json_t *rows, FILE *f)
{
    char keys[MAX_SERIES][256];
    int n_keys = 0;
    double bmin = INFINITY, bmax = 0, ymin = INFINITY, ymax = 0;
    size_t i;
    json_t *r;
    double b, ips;
    json_array_foreach(rows, i, r) {
        if (!point(r, NULL, &b, &ips))
            continue;
        char key[256];
        series_key(r, key, sizeof key);
        int k = 0;
        while (k < n_keys && strcmp(keys[k], key))
            k++;
        if (k == n_keys && n_keys < MAX_SERIES)
            snprintf(keys[n_keys++], sizeof keys[0], "%s", key);
        bmin = fmin(bmin, b), bmax = fmax(bmax, b), ymin = fmin(ymin, ips), ymax = fmax(ymax, ips);
    }
    const int H = TOP + PLOT_H + BOTTOM + LEGEND_LINE * n_keys;
    app_svg_begin(f, W, H, LEFT, "gmlp-bench: throughput against batch size");
    if (!n_keys) {
        fprintf(f, "<text x=\"%d\" y=\"%d\">no image rows to plot</text>\n</svg>\n", LEFT, H / 2);
        return ferror(f) != 0;
    }
    /* whole powers of two and ten around the data */
    double x0 = floor(log2(bmin)), x1 = fmax(ceil(log2(bmax)), x0 + 1);
    double y0 = floor(log10(ymin)), y1 = fmax(ceil(log10(ymax)), y0 + 1);
    const int pw = W - LEFT - RIGHT, ph = PLOT_H;
#define PX(b) (LEFT + pw * (log2(b) - x0) / (x1 - x0))
#define PY(v) (TOP + ph * (1 - (log10(v) - y0) / (y1 - y0)))
    for (double e = x0; e <= x1; e++) {
        double x = LEFT + pw * (e - x0) / (x1 - x0);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", x, TOP, x, TOP + ph);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.0f</text>\n", x, TOP + ph + 18, exp2(e));
    }
    for (double e = y0; e <= y1; e++) {
        double y = TOP + ph * (1 - (e - y0) / (y1 - y0));
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", LEFT, y, LEFT + pw, y);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", LEFT - 6, y + 4, pow(10, e));
    }
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>\n", LEFT, TOP, pw,
            ph);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">batch size</text>\n", LEFT + pw / 2, TOP + ph + 38);
    fprintf(f, "<text transform=\"translate(20 %d) rotate(-90)\" text-anchor=\"middle\">images/s</text>\n",
            TOP + ph / 2);
    for (int k = 0; k < n_keys; k++) {
        const char *color = palette[k % (int)(sizeof palette / sizeof *palette)];
        const char *dash = k >= 10 ? " stroke-dasharray=\"6 3\"" : "";
        /* the batches in the order measured: gmlp-bench runs them ascending per series */
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", color, dash);
        json_array_foreach(rows, i, r) {
            if (point(r, keys[k], &b, &ips))
                fprintf(f, "%.1f,%.1f ", PX(b), PY(ips));
        }
        fputs("\"/>\n", f);
        json_array_foreach(rows, i, r) {
            if (point(r, keys[k], &b, &ips))
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>%s: batch %.0f, %.1f "
                           "images/s</title></circle>\n",
                        PX(b), PY(ips), color, keys[k], b, ips);
        }
        int ly = TOP + ph + BOTTOM + LEGEND_LINE * k;
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
                LEFT, ly, LEFT + 24, ly, color, dash);
        fprintf(f, "<text x=\"%d\" y=\"%d\">", LEFT + 32, ly + 4);
        app_svg_escaped(f, keys[k]);
        fputs("</text>\n", f);
    }
#undef PX
#undef PY
    fputs("</svg>\n", f);
    return ferror(f) != 0;
}
