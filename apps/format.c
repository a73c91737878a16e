/* The output formats' table (format.h) and finding a format in it. */
#include "format.h"

#include <stdio.h>
#include <string.h>

/* A new format: a row here and its writer (format_*.c). */
static const app_writer writers[] = {
    /* the default on stdout: the file name, then a bar per class */
    {.name = "text", .errors_on_stderr = 1, .row = app_text_row},
    /* -j */
    {.name = "json", .document = 1, .errors_on_stderr = 1, .row = app_json_row, .error = app_json_error},
    {.name = "jsonl", .extension = "jsonl", .row = app_jsonl_row, .error = app_jsonl_error, .read = app_jsonl_read},
    /* a row per class, rank 1..k; an error's rank is 0 */
    {.name = "csv", .extension = "csv", .header = "file,rank,index,label,prob,error\n", .row = app_csv_row,
     .error = app_csv_error, .read = app_csv_read},
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
