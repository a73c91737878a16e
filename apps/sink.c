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

int app_sink_init(app_sink *s, app_format f, FILE *out, size_t window, size_t total)
{
    *s = (app_sink){.format = f, .out = out, .window = window, .total = total, .t0 = now()};
    s->slot = calloc(window, sizeof *s->slot);
    s->progress = isatty(STDERR_FILENO);
    if (f == APP_FORMAT_JSON)
        s->results = json_array();
    return s->slot && (f != APP_FORMAT_JSON || s->results);
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

static void write_batch(app_sink *s, app_batch *b)
{
    if (s->format == APP_FORMAT_JSON) {
        /* the rows are JSON lines: one result each */
        for (char *line = b->rows.s, *nl; line && (nl = strchr(line, '\n')); line = nl + 1) {
            json_t *j = json_loadb(line, (size_t)(nl - line), 0, NULL);
            if (j)
                json_array_append_new(s->results, j);
        }
    } else if (b->rows.len && !s->write_failed) {
        if (fwrite(b->rows.s, 1, b->rows.len, s->out) != b->rows.len || fflush(s->out)) {
            perror("gmlp-classify: writing the output");
            s->write_failed = 1;
        }
    }
    if (b->errors.len && (s->format == APP_FORMAT_TEXT || s->format == APP_FORMAT_JSON)) {
        if (s->progress && !s->quiet)
            fputs("\r\033[K", stderr);
        fputs(b->errors.s, stderr);
    }
    s->images += b->n;
    s->errors += b->n_err;
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
    s->slot = NULL;
    s->results = NULL;
}
