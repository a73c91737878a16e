/* CSV (RFC 4180).  Classes: a row per class, file,rank,index,label,prob,error,
 * rank 1..k, or one row of rank 0 with the error.  Features: a row per image,
 * file,error,0,1,...,dim-1 (the error empty), or file,error alone.  And
 * reading both back for --resume. */
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

/* The record at s[pos..len): the first n_keep fields into keep, the count of its fields in *n; its end, or 0
 * when it is cut short. */
static size_t read_record(const char *s, size_t len, size_t pos, app_buf *keep, int n_keep, int *n)
{
    size_t i = pos;
    for (*n = 0;;) {
        app_buf *dst = *n < n_keep ? &keep[*n] : NULL;
        if (i < len && s[i] == '"') {
            for (i++;; i++) {
                if (i >= len)
                    return 0;
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
            const size_t start = i;
            while (i < len && s[i] != ',' && s[i] != '\n' && s[i] != '\r')
                i++;
            if (dst)
                app_buf_add(dst, s + start, i - start);
        }
        ++*n;
        if (i >= len)
            return 0;
        if (s[i] == ',') {
            i++;
            continue;
        }
        if (s[i] == '\r' && i + 1 < len && s[i + 1] == '\n')
            i++;
        return s[i] == '\n' ? i + 1 : 0;
    }
}

/* A record of fields [file, second, ...] (n_kept of them kept) that is ours (ok): its file and whether it is
 * an error row. */
static size_t take_record(app_buf *f, int n_kept, size_t end, int ok, int error, app_record *r)
{
    if (end && ok) {
        r->file = f[0].s ? f[0].s : calloc(1, 1);
        r->error = error;
    } else {
        app_buf_free(&f[0]);
    }
    for (int i = 1; i < n_kept; i++)
        app_buf_free(&f[i]);
    return end;
}

size_t app_csv_read(const char *s, size_t len, size_t pos, app_record *r)
{
    app_buf f[3] = {{0}, {0}, {0}}; /* file, rank, index */
    int n;
    const size_t end = read_record(s, len, pos, f, 3, &n);
    const int at = f[1].s ? atoi(f[1].s) : -1;
    if (at > 0 && f[2].s) /* a class: rank, index */
        r->rank = at, r->k = 1, r->top[0] = (int32_t)atol(f[2].s);
    return take_record(f, 3, end, n == 6 && at >= 0, at == 0, r);
}

void app_csv_features_header(app_buf *b, int dim)
{
    for (int i = 0; i < dim; i++)
        app_buf_printf(b, ",%d", i);
    app_buf_add(b, "\n", 1);
}

void app_csv_features_row(app_rows *o, const char *file, const app_result *r)
{
    char num[32];
    field(&o->text, file);
    app_buf_add(&o->text, ",", 1);
    for (int i = 0; i < r->dim; i++)
        app_buf_printf(&o->text, ",%s", app_format_prob(r->features[i], num));
    app_buf_add(&o->text, "\n", 1);
}

void app_csv_features_error(app_rows *o, const char *file, const char *why)
{
    field(&o->text, file);
    app_buf_add(&o->text, ",", 1);
    field(&o->text, why);
    app_buf_add(&o->text, "\n", 1);
}

size_t app_csv_features_read(const char *s, size_t len, size_t pos, app_record *r)
{
    app_buf f[2] = {{0}, {0}}; /* file, error */
    int n;
    const size_t end = read_record(s, len, pos, f, 2, &n);
    const int error = f[1].len > 0;
    return take_record(f, 2, end, error ? n == 2 : n > 2, error, r);
}
