/* Where classified batches go: a small reorder window so that their results
 * are written in input order by the output's writer (format.h), each write
 * flushed; the progress line and the summary. */
#ifndef APP_SINK_H
#define APP_SINK_H

#include <jansson.h>
#include <stdio.h>

#include "batch.h"
#include "eval.h"
#include "format.h"

typedef struct app_sink {
    const app_writer *w;
    app_out out;
    json_t *results; /* a document format's rows, printed at the end (app_sink_document) */
    app_batch **slot; /* batch id % window */
    size_t window, next; /* next: the id of the next batch to write */
    size_t total, images, errors, skipped; /* images to do in this run; done; failed; skipped files */
    int progress, quiet, bench;
    double t0, drawn;
    double open_s, load_s; /* the devices' context creation and model load before t0 (0: not known) */
    int write_failed;
    app_eval *eval; /* --eval: told every result, its report at the end (owned) */
    const char *eval_svg; /* --svg */
    int eval_json;        /* -j with --eval: the report as JSON */
} app_sink;

int app_sink_init(app_sink *s, const app_writer *w, app_out out, size_t window, size_t total);
/* Starts the clock of images/s and ETA (once the models are loaded). */
void app_sink_start(app_sink *s);
/* Takes a classified batch (id < next + window) and writes every batch that is now in order. */
void app_sink_take(app_sink *s, app_batch *b);
/* Redraws the progress line (at most every 0.2 s unless forced). */
void app_sink_progress(app_sink *s, int force);
/* Ends the progress line and prints the summary (unless -q), with the
 * start-up's split where open_s and load_s are known. */
/* A document format's one document, after a complete run:
 * {"model", "device", "precision", "engine", "results"}; nothing for the others.
 * With --eval, first the evaluation's report on stdout (and --svg's picture). */
void app_sink_document(app_sink *s, const char *model, const char *devices, const char *precision,
                       const char *engines);
void app_sink_summary(app_sink *s, double model_rate, const char *devices);
void app_sink_free(app_sink *s);

#endif
