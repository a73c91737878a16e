/* The formats gmlp-classify writes, one table row each (format.c): a name,
 * the output's extension that picks it, what it carries (classes, features),
 * a header, how one image's rows are written (its result, its failure), how
 * --resume reads them back, and whether the rows make one JSON document at
 * the end or lines as they come.  A binary format (npy) adds a file beside
 * the output, a commit after each batch and a resume of its own. */
#ifndef APP_FORMAT_H
#define APP_FORMAT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "result.h"
#include "strbuf.h"

/* Where rows go: lines (or bytes) into text, a document's entries into items, lines for the file beside the
 * output into side; records counts the rows a writer with commit wrote. */
typedef struct app_rows {
    app_buf text;
    json_t *items; /* a document format's, else NULL */
    app_buf side;
    size_t records;
} app_rows;

/* An open output. */
typedef struct app_out {
    FILE *f;
    FILE *side;      /* a writer with .side: the file beside f */
    int need_header; /* a writer with header_dims: its header is written before the first rows */
    size_t rows;     /* a writer with commit: the rows f holds */
} app_out;

/* What a format carries (bits): a run with --features writes features, others classes. */
enum { APP_CLASSES = 1, APP_FEATURES = 2 };

#define APP_RECORD_TOP 5 /* the classes a record keeps: --eval's top 5 */

/* A row read back by --resume: bytes [start, end) of the output. */
typedef struct app_record {
    size_t start, end;
    char *file; /* malloc'd; NULL: the row is not one gmlp-classify writes */
    int error;  /* an error row */
    /* a row of classes (--eval's resume): its first APP_RECORD_TOP or fewer (k), top[0] of rank `rank` (1: the
     * most probable; JSON lines hold an image's classes in one row, CSV one a row) */
    int rank, k;
    int32_t top[APP_RECORD_TOP];
} app_record;

typedef struct app_done app_done;
typedef struct app_writer app_writer;

struct app_writer {
    const char *name;      /* --format's value (file formats), or what -j and the default choose */
    const char *extension; /* an --output ending in .EXTENSION is written in it; NULL: stdout only */
    unsigned carries;      /* APP_CLASSES, APP_FEATURES: the runs it serves */
    const char *header;    /* the output's first line, or its start when header_dims follows; NULL for none */
    /* the header's rest for rows of dim features, written before the first rows (NULL: header is all) */
    void (*header_dims)(app_buf *b, int dim);
    int document;          /* 1: items, printed as one document ({"model", ..., "results"}) at the end */
    int errors_on_stderr;  /* a failure is also a "FILE: error: WHY" line on stderr */
    void (*row)(app_rows *o, const char *file, const app_result *r); /* NULL: no rows */
    void (*error)(app_rows *o, const char *file, const char *why); /* NULL: no row */
    /* --resume: the record at s[pos..len): its end, or 0 when it is cut short */
    size_t (*read)(const char *s, size_t len, size_t pos, app_record *r);
    /* A binary format: the file beside the output that names its rows (OUT.EXT -> OUT.SIDE), one per line; */
    const char *side;
    /* after each batch's bytes, f and side flushed: out->rows counted in the header (0: failed, errno set); */
    int (*commit)(app_out *o, int dim);
    /* --resume in place of read: the rows f and side both hold kept, the rest cut (1, or 0 with a message). */
    int (*resume)(const char *path, const app_writer *w, app_done *done, app_out *o);
};

/* By name and what the run carries; NULL for none.  file: only those with an extension (--format's). */
const app_writer *app_writer_named(const char *name, int file, unsigned carries);
/* By the output's extension; NULL when it has none of theirs. */
const app_writer *app_writer_of_path(const char *path, unsigned carries);
/* The file formats' extensions for messages, each after prefix: "jsonl or csv", ".jsonl, .csv or .npy". */
void app_writer_file_names(const char *prefix, unsigned carries, char *buf, size_t size);
/* The path of the file beside path (w->side), malloc'd: path without its .EXTENSION, then .SIDE. */
char *app_writer_side_path(const app_writer *w, const char *path);

/* The writers (format_*.c) */
void app_text_row(app_rows *o, const char *file, const app_result *r);
void app_json_row(app_rows *o, const char *file, const app_result *r);
void app_json_error(app_rows *o, const char *file, const char *why);
void app_jsonl_row(app_rows *o, const char *file, const app_result *r);
void app_jsonl_error(app_rows *o, const char *file, const char *why);
size_t app_jsonl_read(const char *s, size_t len, size_t pos, app_record *r);
void app_csv_row(app_rows *o, const char *file, const app_result *r);
void app_csv_error(app_rows *o, const char *file, const char *why);
size_t app_csv_read(const char *s, size_t len, size_t pos, app_record *r);
void app_csv_features_header(app_buf *b, int dim);
void app_csv_features_row(app_rows *o, const char *file, const app_result *r);
void app_csv_features_error(app_rows *o, const char *file, const char *why);
size_t app_csv_features_read(const char *s, size_t len, size_t pos, app_record *r);
void app_npy_header(app_buf *b, int dim);
void app_npy_row(app_rows *o, const char *file, const app_result *r);
int app_npy_commit(app_out *o, int dim);
int app_npy_resume(const char *path, const app_writer *w, app_done *done, app_out *o);
/* One image as gmlp-classify's --json and gmlp-server's rows: {"file", "top": [{"index", "label", "prob"}]}
 * (where classes were asked), "embedding": [...] (where features were), or {"file", "error"}; NULL when out
 * of memory. */
json_t *app_result_json(const char *file, const app_result *r);
/* Its features as a JSON array of numbers (doubles holding the float32s: %.9g reads back to the same
 * float32); NULL when out of memory. */
json_t *app_features_json(const app_result *r);

#endif
