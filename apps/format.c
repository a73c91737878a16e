#include "format.h"

#include <stdio.h>
#include <string.h>

/* A new format: a row here and its writer (format_*.c). */
static const app_writer writers[] = {
    /* the default on stdout: the file name, then a bar per class */
    {"text", NULL, NULL, 0, 1, app_text_row, NULL, NULL},
    /* -j: one document at the end */
    {"json", NULL, NULL, 1, 1, app_json_row, app_json_error, NULL},
    {"jsonl", "jsonl", NULL, 0, 0, app_jsonl_row, app_jsonl_error, app_jsonl_read},
    /* a row per class: rank 1..k, or rank 0 for an error */
    {"csv", "csv", "file,rank,index,label,prob,error\n", 0, 0, app_csv_row, app_csv_error, app_csv_read},
};
enum { N_WRITERS = sizeof writers / sizeof *writers };

const app_writer *app_writer_named(const char *name, int file)
{
    for (size_t i = 0; i < N_WRITERS; i++)
        if (!strcmp(name, writers[i].name) && (!file || writers[i].extension))
            return &writers[i];
    return NULL;
}

const app_writer *app_writer_of_path(const char *path)
{
    const char *dot = strrchr(path, '.');
    for (size_t i = 0; dot && !strchr(dot, '/') && i < N_WRITERS; i++)
        if (writers[i].extension && !strcmp(dot + 1, writers[i].extension))
            return &writers[i];
    return NULL;
}

void app_writer_file_names(const char *prefix, char *buf, size_t size)
{
    size_t n = 0, left = 0;
    for (size_t i = 0; i < N_WRITERS; i++)
        left += writers[i].extension != NULL;
    *buf = 0;
    for (size_t i = 0; i < N_WRITERS && n < size; i++)
        if (writers[i].extension)
            n += (size_t)snprintf(buf + n, size - n, "%s%s%s", prefix, writers[i].extension,
                                  --left > 1 ? ", " : left ? " or " : "");
}
