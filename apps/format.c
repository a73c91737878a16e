/* The output formats' table (format.h) and finding a format in it. */
#include "format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A new format: a row here and its writer (format_*.c). */
static const app_writer writers[] = {
    /* the default on stdout: the file name, then a bar per class */
    {.name = "text", .carries = APP_CLASSES, .errors_on_stderr = 1, .row = app_text_row},
    /* --eval without --output: no rows (the report is the output), failures on stderr */
    {.name = "none", .carries = APP_CLASSES, .errors_on_stderr = 1},
    /* -j; with --features each result's "embedding" */
    {.name = "json", .carries = APP_CLASSES | APP_FEATURES, .document = 1, .errors_on_stderr = 1, .row = app_json_row,
     .error = app_json_error},
    {.name = "jsonl", .extension = "jsonl", .carries = APP_CLASSES | APP_FEATURES, .row = app_jsonl_row,
     .error = app_jsonl_error, .read = app_jsonl_read},
    /* a row per class, rank 1..k; an error's rank is 0 */
    {.name = "csv", .extension = "csv", .carries = APP_CLASSES, .header = "file,rank,index,label,prob,error\n",
     .row = app_csv_row, .error = app_csv_error, .read = app_csv_read},
    /* a row per image: file, error (empty), then its features, a column each */
    {.name = "csv", .extension = "csv", .carries = APP_FEATURES, .header = "file,error",
     .header_dims = app_csv_features_header, .row = app_csv_features_row, .error = app_csv_features_error,
     .read = app_csv_features_read},
    /* NumPy's float32 (n, dim) array, its rows' files in OUT.paths.txt; failures on stderr only */
    {.name = "npy", .extension = "npy", .carries = APP_FEATURES, .errors_on_stderr = 1, .header_dims = app_npy_header,
     .row = app_npy_row, .side = "paths.txt", .commit = app_npy_commit, .resume = app_npy_resume},
};
enum { N_WRITERS = sizeof writers / sizeof *writers };

const app_writer *app_writer_named(const char *name, int file, unsigned carries)
{
    for (size_t i = 0; i < N_WRITERS; i++)
        if (!strcmp(name, writers[i].name) && (!file || writers[i].extension) && writers[i].carries & carries)
            return &writers[i];
    return NULL;
}

/* The extension of path: after its last dot in its last component, or NULL. */
static const char *extension_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    return dot && !strchr(dot, '/') ? dot + 1 : NULL;
}

const app_writer *app_writer_of_path(const char *path, unsigned carries)
{
    const char *ext = extension_of(path);
    for (size_t i = 0; ext && i < N_WRITERS; i++)
        if (writers[i].extension && !strcmp(ext, writers[i].extension) && writers[i].carries & carries)
            return &writers[i];
    return NULL;
}

void app_writer_file_names(const char *prefix, unsigned carries, char *buf, size_t size)
{
    size_t n = 0, left = 0;
    for (size_t i = 0; i < N_WRITERS; i++)
        left += writers[i].extension && writers[i].carries & carries;
    *buf = 0;
    for (size_t i = 0; i < N_WRITERS && n < size; i++)
        if (writers[i].extension && writers[i].carries & carries)
            n += (size_t)snprintf(buf + n, size - n, "%s%s%s", prefix, writers[i].extension,
                                  --left > 1 ? ", " : left ? " or " : "");
}

char *app_writer_side_path(const app_writer *w, const char *path)
{
    const char *ext = extension_of(path);
    size_t keep = ext && !strcmp(ext, w->extension) ? (size_t)(ext - 1 - path) : strlen(path);
    size_t n = keep + strlen(w->side) + 2;
    char *side = malloc(n);
    if (side)
        snprintf(side, n, "%.*s.%s", (int)keep, path, w->side);
    return side;
}
