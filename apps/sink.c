#include "sink.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int app_sink_init(app_sink *s, const app_writer *w, app_out out, size_t window, size_t total)
{
    *s = (app_sink){.w = w, .out = out, .window = window, .total = total, .t0 = now()};
    s->slot = calloc(window, sizeof *s->slot);
    s->progress = isatty(STDERR_FILENO);
    if (w->document)
        s->results = json_array();
    return s->slot && (!w->document || s->results);
}

void app_sink_start(app_sink *s)
{
    s->t0 = now();
}

/* "1:02:03" or "2:03" */
static void clock_text(double t, char *buf, size_t n)
{
    long s = t < 0 || t > 1e9 ? 0 : (long)(t + 0.5);
    if (s >= 3600)
        snprintf(buf, n, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(buf, n, "%ld:%02ld", s / 60, s % 60);
}

void app_sink_progress(app_sink *s, int force)
{
    const double t = now();
    if (!s->progress || s->quiet || (!force && t - s->drawn < 0.2))
        return;
    s->drawn = t;
    const double rate = t > s->t0 ? (double)s->images / (t - s->t0) : 0;
    char elapsed[32], eta[32] = "?";
    clock_text(t - s->t0, elapsed, sizeof elapsed);
    if (rate > 0)
        clock_text((double)(s->total - s->images) / rate, eta, sizeof eta);
    fprintf(stderr, "\r%zu/%zu images  %.1f images/s  elapsed %s  ETA %s\033[K", s->images, s->total, rate, elapsed,
            eta);
}

/* The batch's bytes: the rows, then the lines beside them, each flushed, then the commit; 0 on failure. */
static int put(app_sink *s, const app_rows *rows, int dim)
{
    app_out *o = &s->out;
    if (rows->text.len && (fwrite(rows->text.s, 1, rows->text.len, o->f) != rows->text.len || fflush(o->f)))
        return 0;
    if (rows->side.len && (fwrite(rows->side.s, 1, rows->side.len, o->side) != rows->side.len || fflush(o->side)))
        return 0;
    o->rows += rows->records;
    return !s->w->commit || s->w->commit(o, dim);
}

static void write_batch(app_sink *s, app_batch *b)
{
    app_rows rows = {.items = s->results};
    app_buf errors = {0}; /* "FILE: error: WHY" lines for stderr, after the rows */
    if (s->out.need_header && s->w->header_dims) { /* it names the features' columns: known now */
        if (s->w->header)
            app_buf_add(&rows.text, s->w->header, strlen(s->w->header));
        s->w->header_dims(&rows.text, b->dim);
        s->out.need_header = 0;
    }
    for (size_t i = 0; i < b->n; i++) {
        const app_result *r = &b->results[i];
        if (s->eval)
            app_eval_take(s->eval, b->paths[i], r);
        if (!r->error) {
            if (s->w->row)
                s->w->row(&rows, b->paths[i], r);
            continue;
        }
        s->errors++;
        if (s->w->error)
            s->w->error(&rows, b->paths[i], r->error);
        if (s->w->errors_on_stderr)
            app_buf_printf(&errors, "%s: error: %s\n", b->paths[i], r->error);
    }
    if ((rows.text.oom || rows.side.oom || errors.oom) && !s->write_failed) {
        fprintf(stderr, "gmlp-classify: out of host memory writing the output\n");
        s->write_failed = 1;
    } else if (!s->write_failed && !put(s, &rows, b->dim)) {
        perror("gmlp-classify: writing the output");
        s->write_failed = 1;
    }
    if (errors.len) {
        if (s->progress && !s->quiet)
            fputs("\r\033[K", stderr);
        fputs(errors.s, stderr);
    }
    app_buf_free(&rows.text);
    app_buf_free(&rows.side);
    app_buf_free(&errors);
    s->images += b->n;
}

void app_sink_take(app_sink *s, app_batch *b)
{
    s->slot[b->id % s->window] = b;
    for (app_batch *w; (w = s->slot[s->next % s->window]) && w->id == s->next; s->next++) {
        s->slot[s->next % s->window] = NULL;
        write_batch(s, w);
        app_batch_free(w);
    }
    app_sink_progress(s, 0);
}

void app_sink_document(app_sink *s, const char *model, const char *devices, const char *precision,
                       const char *engines)
{
    if (s->eval && !app_eval_report(s->eval, &(app_eval_run){model, devices, precision}, stdout, s->eval_json,
                                    s->eval_svg))
        s->write_failed = 1;
    if (!s->w->document)
        return;
    json_t *doc = json_pack("{s:s, s:s, s:s, s:s, s:O}", "model", model, "device", devices, "precision", precision,
                            "engine", engines, "results", s->results);
    if (!doc || json_dumpf(doc, s->out.f, JSON_INDENT(2) | JSON_REAL_PRECISION(9)) || fputc('\n', s->out.f) == EOF ||
        fflush(s->out.f)) {
        fprintf(stderr, "gmlp-classify: cannot write the JSON document\n");
        s->write_failed = 1;
    }
    json_decref(doc);
}

void app_sink_summary(app_sink *s, double model_rate, const char *devices)
{
    if (s->progress && !s->quiet && s->total)
        app_sink_progress(s, 1), fputc('\n', stderr);
    const double t = now() - s->t0;
    if (s->quiet || !(s->progress || s->bench || s->total >= 16))
        return;
    fprintf(stderr, "%zu images, %zu errors, %zu skipped files in %.3f s: %.1f images/s end to end", s->images,
            s->errors, s->skipped, t, t > 0 ? (double)s->images / t : 0.0);
    if (model_rate > 0)
        fprintf(stderr, ", %.1f images/s in the model", model_rate);
    fprintf(stderr, " (%s)", devices);
    if (s->open_s > 0)
        fprintf(stderr, "; before them: OpenCL context %.3f s, model load %.3f s", s->open_s, s->load_s);
    fputc('\n', stderr);
}

void app_sink_free(app_sink *s)
{
    for (size_t i = 0; s->slot && i < s->window; i++)
        app_batch_free(s->slot[i]);
    free(s->slot);
    json_decref(s->results);
    if (s->eval)
        app_eval_free(s->eval);
    free(s->eval);
    s->slot = NULL;
    s->results = NULL;
    s->eval = NULL;
}
