/* The formats gmlp-classify writes, one table row each (format.c): a name,
 * the output's extension that picks it, a header, how one image's rows are
 * written (its result, its failure), how --resume reads them back, and
 * whether the rows make one JSON document at the end or lines as they come. */
#ifndef APP_FORMAT_H
#define APP_FORMAT_H

#include <jansson.h>
#include <stddef.h>

#include "result.h"
#include "strbuf.h"

/* Where rows go: lines into text, a document's entries into items. */
typedef struct app_rows {
    app_buf text;
    json_t *items; /* a document format's, else NULL */
} app_rows;

/* A row read back by --resume: bytes [start, end) of the output. */
typedef struct app_record {
    size_t start, end;
    char *file; /* malloc'd; NULL: the row is not one gmlp-classify writes */
    int error;  /* an error row */
} app_record;

typedef struct app_writer {
    const char *name;      /* --format's value (file formats), or what -j and the default choose */
    const char *extension; /* an --output ending in .EXTENSION is written in it; NULL: stdout only */
    const char *header;    /* the output's first line, NULL for none */
    int document;          /* 1: items, printed as one document ({"model", ..., "results"}) at the end */
    int errors_on_stderr;  /* a failure is also a "FILE: error: WHY" line on stderr */
    void (*row)(app_rows *o, const char *file, const app_result *r);
    void (*error)(app_rows *o, const char *file, const char *why); /* NULL: no row */
    /* --resume: the record at s[pos..len): its end, or 0 when it is cut short */
    size_t (*read)(const char *s, size_t len, size_t pos, app_record *r);
} app_writer;

/* By name; NULL for none.  file: only those with an extension (--format's). */
const app_writer *app_writer_named(const char *name, int file);
/* By the output's extension; NULL when it has none of theirs. */
const app_writer *app_writer_of_path(const char *path);
/* The file formats' extensions for messages, each after prefix: "jsonl or csv", ".jsonl or .csv". */
void app_writer_file_names(const char *prefix, char *buf, size_t size);

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
/* One image as gmlp-classify's --json and gmlp-server's rows: {"file", "top": [{"index", "label", "prob"}]}
 * or {"file", "error"}; NULL when out of memory. */
json_t *app_result_json(const char *file, const app_result *r);

#endif
