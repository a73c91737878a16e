/* What gmlp-classify writes: one image's rows in each format, the output
 * file (never overwritten) and --resume's reading of an earlier one. */
#ifndef APP_OUTPUT_H
#define APP_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A growing string; oom is set (and later adds ignored) when memory runs out. */
typedef struct app_buf {
    char *s;
    size_t len, cap;
    int oom;
} app_buf;
void app_buf_add(app_buf *b, const char *s, size_t n);
void app_buf_printf(app_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void app_buf_free(app_buf *b);

typedef enum app_format {
    APP_FORMAT_TEXT,  /* the default on stdout: the file name, then a bar per class */
    APP_FORMAT_JSON,  /* --json: one document at the end ({"model", "device", "results"}) */
    APP_FORMAT_JSONL, /* one JSON object per line */
    APP_FORMAT_CSV,   /* file,rank,index,label,prob,error */
} app_format;

/* "jsonl" or "csv"; 0 for anything else. */
int app_format_parse(const char *name, app_format *f);
/* By the file's extension (.jsonl, .csv); 0 when it has neither. */
int app_format_of_path(const char *path, app_format *f);

/* One image's rows: its top k classes (labels[i] names index[i]), or its error. */
void app_rows_result(app_buf *b, app_format f, const char *file, int k, const int32_t *index, const float *prob,
                     const char *const *labels);
void app_rows_error(app_buf *b, app_format f, const char *file, const char *error);

/* The sorted set of files an earlier output holds. */
typedef struct app_done {
    char **files;
    size_t n;
} app_done;
int app_done_has(const app_done *d, const char *file);
void app_done_free(app_done *d);

/* The run an output belongs to, kept beside it (PATH.gmlp-run.json) so that a
 * --resume with another model or --top is refused. */
typedef struct app_run_id {
    const char *model; /* the model's real path */
    int top;
} app_run_id;

/* Opens PATH for a new run (refused when it exists: 2 with a message) or, with
 * resume, reads what it holds into done (a torn last row is cut off, error rows
 * dropped with retry_errors) and opens it for appending.  1 when open; 0 a
 * run-time failure, 2 a usage error (message on stderr). */
int app_output_open(const char *path, app_format f, const app_run_id *id, int resume, int retry_errors,
                    app_done *done, FILE **out);

#endif
