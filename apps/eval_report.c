/* --eval's report (eval.h): the accuracies, per-class precision and recall,
 * the confusion matrix; Markdown or JSON, and an SVG picture of the matrix
 * (up to MAX_SHOWN classes, else those with the most errors). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "eval.h"
#include "svg.h"

#define MAX_SHOWN 100 /* classes in the picture and the Markdown table */
#define MAX_PAIRS 10  /* the Markdown's most confused pairs */

typedef struct cell {
    int32_t t, p; /* true class, predicted (top-1) */
    size_t count;
} cell;

typedef struct stats {
    int32_t C; /* classes: the data set's and every one predicted */
    size_t images, failed, pending, top1, top5;
    size_t *support, *predicted, *correct; /* C each */
    cell *cells; /* the matrix's non-zero cells, by (t, p) */
    size_t n_cells;
    int32_t *shown; /* the classes in the table and the picture, ascending */
    int32_t n_shown, n_present; /* n_present: classes with images or predictions */
} stats;

static int by_cell(const void *a, const void *b)
{
    const cell *x = a, *y = b;
    return x->t != y->t ? (x->t > y->t) - (x->t < y->t) : (x->p > y->p) - (x->p < y->p);
}

static int by_count(const void *a, const void *b)
{
    const cell *x = a, *y = b;
    return x->count != y->count ? (x->count < y->count) - (x->count > y->count) : by_cell(a, b);
}

static size_t errors_of(const stats *s, int32_t c)
{
    return s->support[c] + s->predicted[c] - 2 * s->correct[c];
}

static const stats *sort_stats; /* qsort has no context argument */
static int by_errors(const void *a, const void *b)
{
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    const size_t ex = errors_of(sort_stats, x), ey = errors_of(sort_stats, y);
    return ex != ey ? (ex < ey) - (ex > ey) : (x > y) - (x < y);
}

static int by_index(const void *a, const void *b)
{
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static void free_stats(stats *s)
{
    free(s->support);
    free(s->predicted);
    free(s->correct);
    free(s->cells);
    free(s->shown);
}

static int make_stats(const app_eval *e, stats *s)
{
    *s = (stats){.C = e->n_classes};
    for (size_t i = 0; i < e->n; i++)
        if (e->state[i] == 1 && e->top1[i] >= s->C)
            s->C = e->top1[i] + 1;
    const size_t C = (size_t)s->C;
    s->support = calloc(C + 1, sizeof *s->support);
    s->predicted = calloc(C + 1, sizeof *s->predicted);
    s->correct = calloc(C + 1, sizeof *s->correct);
    s->cells = malloc((e->n + 1) * sizeof *s->cells);
    s->shown = malloc((C + 1) * sizeof *s->shown);
    if (!s->support || !s->predicted || !s->correct || !s->cells || !s->shown)
        return 0;
    for (size_t i = 0; i < e->n; i++) {
        if (e->state[i] != 1) {
            s->failed += e->state[i] == 2;
            s->pending += e->state[i] == 0;
            continue;
        }
        const int32_t t = e->label[i], p = e->top1[i];
        s->images++;
        s->top1 += t == p;
        s->top5 += e->in_top5[i];
        s->support[t]++;
        s->predicted[p]++;
        s->correct[t] += t == p;
        s->cells[s->n_cells++] = (cell){t, p, 1};
    }
    qsort(s->cells, s->n_cells, sizeof *s->cells, by_cell);
    size_t m = 0;
    for (size_t i = 0; i < s->n_cells; i++)
        if (m && s->cells[m - 1].t == s->cells[i].t && s->cells[m - 1].p == s->cells[i].p)
            s->cells[m - 1].count++;
        else
            s->cells[m++] = s->cells[i];
    s->n_cells = m;
    for (int32_t c = 0; c < s->C; c++)
        if (s->support[c] || s->predicted[c])
            s->shown[s->n_present++] = c;
    s->n_shown = s->n_present;
    if (s->n_shown > MAX_SHOWN) { /* the classes with the most errors, then in order */
        sort_stats = s;
        qsort(s->shown, (size_t)s->n_shown, sizeof *s->shown, by_errors);
        s->n_shown = MAX_SHOWN;
        qsort(s->shown, (size_t)s->n_shown, sizeof *s->shown, by_index);
    }
    return 1;
}

static const char *class_name(const app_eval *e, int32_t c, char *buf, size_t size)
{
    if (c < e->n_classes)
        return e->classes[c];
    if (c < e->n_names && e->names[c])
        return e->names[c];
    snprintf(buf, size, "%d", (int)c);
    return buf;
}

static const char *model_label(const app_eval *e, int32_t c)
{
    return c < e->n_names && e->names[c] ? e->names[c] : "";
}

static double ratio(size_t a, size_t b)
{
    return b ? (double)a / (double)b : 0;
}

static json_t *summary_json(const app_eval *e, const stats *s, const app_eval_run *run)
{
    json_t *classes = json_array(), *confusion = json_array();
    char buf[24];
    for (int32_t c = 0; classes && c < s->C; c++) {
        if (!s->support[c] && !s->predicted[c])
            continue;
        const char *name = class_name(e, c, buf, sizeof buf);
        json_t *row = json_pack("{s:i, s:o, s:o, s:I, s:I, s:I, s:o, s:o}", "index", (int)c, "name",
                                app_json_bytes(name, strlen(name)), "label",
                                app_json_bytes(model_label(e, c), strlen(model_label(e, c))), "support",
                                (json_int_t)s->support[c], "predicted", (json_int_t)s->predicted[c], "correct",
                                (json_int_t)s->correct[c], "precision",
                                s->predicted[c] ? json_real(ratio(s->correct[c], s->predicted[c])) : json_null(),
                                "recall", s->support[c] ? json_real(ratio(s->correct[c], s->support[c])) : json_null());
        if (!row || json_array_append_new(classes, row))
            json_decref(classes), classes = NULL;
    }
    for (size_t i = 0; confusion && i < s->n_cells; i++)
        if (json_array_append_new(confusion, json_pack("[i, i, I]", (int)s->cells[i].t, (int)s->cells[i].p,
                                                       (json_int_t)s->cells[i].count)))
            json_decref(confusion), confusion = NULL;
    if (!classes || !confusion) {
        json_decref(classes);
        json_decref(confusion);
        return NULL;
    }
    return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:f, s:f, s:i, s:o, s:o}", "model", run->model, "device",
                     run->devices, "precision", run->precision, "images", (json_int_t)s->images, "failed",
                     (json_int_t)s->failed, "outside", (json_int_t)e->outside, "top1", 100 * ratio(s->top1, s->images),
                     "top5", 100 * ratio(s->top5, s->images), "classes_in_data", e->n_classes, "classes", classes,
                     "confusion", confusion);
}

/* A Markdown table cell: | escaped. */
static void md_cell(FILE *f, const char *s)
{
    fputs("| ", f);
    for (; *s; s++)
        fputs(*s == '|' ? "\\|" : (char[2]){*s, 0}, f);
    fputc(' ', f);
}

static void markdown(const app_eval *e, const stats *s, const app_eval_run *run, FILE *f)
{
    char buf[24], pct[2][32];
    fputs("## gmlp-classify --eval\n\n", f);
    fprintf(f, "Model `%s` on %s, %s.\n\n", run->model, run->devices, run->precision);
    fputs("| images | failed | top-1 | top-5 | classes |\n|---:|---:|---:|---:|---:|\n", f);
    fprintf(f, "| %zu | %zu | %.2f %% | %.2f %% | %d |\n\n", s->images, s->failed, 100 * ratio(s->top1, s->images),
            100 * ratio(s->top5, s->images), e->n_classes);
    if (s->n_shown < s->n_present)
        fprintf(f, "The %d of %d classes with the most errors (the JSON summary has them all):\n\n", s->n_shown,
                s->n_present);
    fputs("| class | name | model's label | support | predicted | precision | recall |\n"
          "|---:|---|---|---:|---:|---:|---:|\n", f);
    for (int32_t k = 0; k < s->n_shown; k++) {
        const int32_t c = s->shown[k];
        snprintf(pct[0], sizeof pct[0], "%.2f %%", 100 * ratio(s->correct[c], s->predicted[c]));
        snprintf(pct[1], sizeof pct[1], "%.2f %%", 100 * ratio(s->correct[c], s->support[c]));
        fprintf(f, "| %d ", (int)c);
        md_cell(f, class_name(e, c, buf, sizeof buf));
        md_cell(f, model_label(e, c));
        fprintf(f, "| %zu | %zu | %s | %s |\n", s->support[c], s->predicted[c], s->predicted[c] ? pct[0] : "-",
                s->support[c] ? pct[1] : "-");
    }
    cell *off = malloc((s->n_cells + 1) * sizeof *off);
    size_t n = 0;
    for (size_t i = 0; off && i < s->n_cells; i++)
        if (s->cells[i].t != s->cells[i].p)
            off[n++] = s->cells[i];
    if (n) {
        qsort(off, n, sizeof *off, by_count);
        fputs("\nMost confused (true class, predicted class, images):\n\n| true | predicted | images |\n"
              "|---|---|---:|\n", f);
        for (size_t i = 0; i < n && i < MAX_PAIRS; i++) {
            md_cell(f, class_name(e, off[i].t, buf, sizeof buf));
            md_cell(f, class_name(e, off[i].p, buf, sizeof buf));
            fprintf(f, "| %zu |\n", off[i].count);
        }
    }
    free(off);
}

/* The picture: rows the true classes, columns the predicted, each cell shaded by its share of its row. */
static int svg(const app_eval *e, const stats *s, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "gmlp-classify: cannot write %s: %s\n", path, strerror(errno));
        return 0;
    }
    const int m = s->n_shown > 0 ? s->n_shown : 1, names = 170, cell_px = 800 / m < 6 ? 6 : 800 / m > 40 ? 40 : 800 / m;
    const int x0 = names + 30, y0 = names + 50, W = x0 + m * cell_px + 20, H = y0 + m * cell_px + 40;
    char title[160], buf[24];
    snprintf(title, sizeof title, "gmlp-classify --eval: confusion matrix (top-1 %.2f %%, %zu images)",
             100 * ratio(s->top1, s->images), s->images);
    app_svg_begin(f, W < 720 ? 720 : W, H, 10, title);
    if (s->n_shown < s->n_present)
        fprintf(f, "<text x=\"10\" y=\"44\">the %d of %d classes with the most errors</text>\n", s->n_shown,
                s->n_present);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">predicted</text>\n", x0 + m * cell_px / 2, y0 - names - 8);
    fprintf(f, "<text transform=\"translate(14 %d) rotate(-90)\" text-anchor=\"middle\">true</text>\n",
            y0 + m * cell_px / 2);
    const int font = cell_px < 12 ? cell_px : 12;
    for (int k = 0; k < s->n_shown; k++) {
        const char *name = class_name(e, s->shown[k], buf, sizeof buf);
        const int mid = k * cell_px + cell_px / 2 + font / 3;
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"%d\" text-anchor=\"end\">", x0 - 4, y0 + mid, font);
        app_svg_escaped(f, name);
        fprintf(f, "</text>\n<text transform=\"translate(%d %d) rotate(-90)\" font-size=\"%d\">", x0 + mid, y0 - 4,
                font);
        app_svg_escaped(f, name);
        fputs("</text>\n", f);
    }
    /* the shown classes' places, by class index (shown is ascending) */
    for (size_t i = 0; i < s->n_cells; i++) {
        const cell *c = &s->cells[i];
        const int32_t *r = bsearch(&c->t, s->shown, (size_t)s->n_shown, sizeof *s->shown, by_index);
        const int32_t *q = bsearch(&c->p, s->shown, (size_t)s->n_shown, sizeof *s->shown, by_index);
        if (!r || !q)
            continue;
        const double share = ratio(c->count, s->support[c->t]);
        const int x = x0 + (int)(q - s->shown) * cell_px, y = y0 + (int)(r - s->shown) * cell_px;
        /* white to #1f77b4 (gmlp-bench's first colour) */
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"rgb(%d,%d,%d)\"><title>", x, y, cell_px,
                cell_px, (int)(255 - share * 224), (int)(255 - share * 136), (int)(255 - share * 75));
        app_svg_escaped(f, class_name(e, c->t, buf, sizeof buf));
        fputs(" as ", f);
        app_svg_escaped(f, class_name(e, c->p, buf, sizeof buf));
        fprintf(f, ": %zu</title></rect>\n", c->count);
        if (cell_px >= 24)
            fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"%d\" text-anchor=\"middle\" fill=\"%s\">%zu</text>\n",
                    x + cell_px / 2, y + cell_px / 2 + 4, cell_px >= 36 ? 11 : 9, share > 0.5 ? "white" : "black",
                    c->count);
    }
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>\n</svg>\n", x0, y0,
            m * cell_px, m * cell_px);
    int ok = !ferror(f);
    if (fclose(f) || !ok) {
        fprintf(stderr, "gmlp-classify: cannot write %s\n", path);
        return 0;
    }
    return 1;
}

int app_eval_report(const app_eval *e, const app_eval_run *run, FILE *f, int json, const char *svg_path)
{
    stats s;
    int ok = make_stats(e, &s);
    if (ok && json) {
        json_t *doc = summary_json(e, &s, run);
        ok = doc && !json_dumpf(doc, f, JSON_INDENT(2) | JSON_REAL_PRECISION(9)) && fputc('\n', f) != EOF;
        json_decref(doc);
    } else if (ok)
        markdown(e, &s, run, f);
    ok = ok && !fflush(f) && !ferror(f);
    if (!ok)
        fprintf(stderr, "gmlp-classify: cannot write the evaluation's report\n");
    ok = ok && (!svg_path || svg(e, &s, svg_path));
    free_stats(&s);
    return ok;
}
