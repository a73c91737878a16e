/* CSV (RFC 4180), a row per class: file,rank,index,label,prob,error, rank 1..k,
 * or one row of rank 0 with the error; and reading it back for --resume. */
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "format.h"

/* Quoted (quotes doubled) when it holds a comma, quote or line break. */
static void field(app_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        app_buf_add(b, s, strlen(s));
        return;
    }
    app_buf_add(b, "\"", 1);
    for (const char *q; (q = strchr(s, '"')); s = q + 1)
        app_buf_add(b, s, (size_t)(q - s + 1)), app_buf_add(b, "\"", 1);
    app_buf_add(b, s, strlen(s));
    app_buf_add(b, "\"", 1);
}

void app_csv_row(app_rows *o, const char *file, const app_result *r)
{
    char num[32];
    for (int i = 0; i < r->k; i++) {
        field(&o->text, file);
        app_buf_printf(&o->text, ",%d,%d,", i + 1, (int)r->index[i]);
        field(&o->text, r->labels[i]);
        app_buf_printf(&o->text, ",%s,\n", app_format_prob(r->prob[i], num));
    }
}

void app_csv_error(app_rows *o, const char *file, const char *why)
{
    field(&o->text, file);
    app_buf_add(&o->text, ",0,,,,", 6);
    field(&o->text, why);
    app_buf_add(&o->text, "\n", 1);
}

size_t app_csv_read(const char *s, size_t len, size_t pos, app_record *r)
{
    app_buf file = {0}, rank = {0};
    int n = 0;
    size_t i = pos;
    for (;;) {
        app_buf *dst = n == 0 ? &file : n == 1 ? &rank : NULL;
        if (i < len && s[i] == '"') {
            for (i++;; i++) {
                if (i >= len)
                    goto torn;
                if (s[i] == '"') {
                    if (i + 1 < len && s[i + 1] == '"')
                        i++;
                    else
                        break;
                }
                if (dst)
                    app_buf_add(dst, s + i, 1);
            }
            i++;
        } else {
            while (i < len && s[i] != ',' && s[i] != '\n' && s[i] != '\r') {
                if (dst)
                    app_buf_add(dst, s + i, 1);
                i++;
            }
        }
        n++;
        if (i >= len)
            goto torn;
        if (s[i] == ',') {
            i++;
            continue;
        }
        if (s[i] == '\r' && i + 1 < len && s[i + 1] == '\n')
            i++;
        if (s[i] != '\n')
            goto torn;
        break;
    }
    const int at = rank.s ? atoi(rank.s) : -1;
    if (n == 6 && at >= 0) {
        r->file = file.s ? file.s : calloc(1, 1);
        r->error = at == 0;
    } else {
        app_buf_free(&file);
    }
    app_buf_free(&rank);
    return i + 1;
torn:
    app_buf_free(&file);
    app_buf_free(&rank);
    return 0;
}
