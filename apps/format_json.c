/* JSON rows: --json's document entries, JSON lines (one object a line), and
 * reading JSON lines back for --resume.  A row holds what its image asked
 * for: its top classes, its features ("embedding"), or both. */
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "format.h"

static json_t *jstr(const char *s)
{
    return app_json_bytes(s, strlen(s));
}

json_t *app_features_json(const app_result *r)
{
    json_t *a = json_array();
    for (int i = 0; a && i < r->dim; i++)
        if (json_array_append_new(a, json_real((double)r->features[i])))
            json_decref(a), a = NULL;
    return a;
}

json_t *app_result_json(const char *file, const app_result *r)
{
    if (r->error)
        return json_pack("{s:o, s:o}", "file", jstr(file), "error", jstr(r->error));
    json_t *row = json_pack("{s:o}", "file", jstr(file));
    if (row && (r->k || !r->features)) {
        json_t *top = json_array();
        for (int i = 0; top && i < r->k; i++)
            if (json_array_append_new(top, json_pack("{s:i, s:o, s:f}", "index", (int)r->index[i], "label",
                                                     jstr(r->labels[i]), "prob", (double)r->prob[i])))
                json_decref(top), top = NULL;
        if (!top || json_object_set_new(row, "top", top))
            json_decref(row), row = NULL;
    }
    if (row && r->features) {
        json_t *e = app_features_json(r);
        if (!e || json_object_set_new(row, "embedding", e))
            json_decref(row), row = NULL;
    }
    return row;
}

/* Into the document's entries; a row lost to memory fails the output. */
static void add_item(app_rows *o, json_t *row)
{
    if (!row || json_array_append_new(o->items, row))
        o->text.oom = 1;
}

void app_json_row(app_rows *o, const char *file, const app_result *r)
{
    add_item(o, app_result_json(file, r));
}

void app_json_error(app_rows *o, const char *file, const char *why)
{
    add_item(o, app_result_json(file, &(app_result){.error = why}));
}

/* One object on one line; probabilities as %.9g. */
static void add_line(app_rows *o, json_t *row)
{
    char *s = row ? json_dumps(row, JSON_REAL_PRECISION(9)) : NULL;
    if (!s)
        o->text.oom = 1;
    else
        app_buf_printf(&o->text, "%s\n", s);
    free(s);
    json_decref(row);
}

void app_jsonl_row(app_rows *o, const char *file, const app_result *r)
{
    add_line(o, app_result_json(file, r));
}

void app_jsonl_error(app_rows *o, const char *file, const char *why)
{
    add_line(o, app_result_json(file, &(app_result){.error = why}));
}

size_t app_jsonl_read(const char *s, size_t len, size_t pos, app_record *r)
{
    const char *nl = memchr(s + pos, '\n', len - pos);
    if (!nl)
        return 0;
    json_t *j = json_loadb(s + pos, (size_t)(nl - s - pos), 0, NULL);
    const char *file = json_string_value(json_object_get(j, "file"));
    if (file && (json_object_get(j, "top") || json_object_get(j, "embedding") || json_object_get(j, "error"))) {
        r->file = strdup(file);
        r->error = json_object_get(j, "error") != NULL;
        json_t *top = json_object_get(j, "top");
        r->rank = 1;
        for (size_t i = 0; i < json_array_size(top) && r->k < APP_RECORD_TOP; i++)
            r->top[r->k++] = (int32_t)json_integer_value(json_object_get(json_array_get(top, i), "index"));
    }
    json_decref(j);
    return (size_t)(nl - s) + 1;
}
