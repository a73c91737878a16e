#include "output.h"

#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BAR_WIDTH 20

void app_buf_add(app_buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *grown = realloc(b->s, cap);
        if (!grown) {
            b->oom = 1;
            return;
        }
        b->s = grown;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void app_buf_printf(app_buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        app_buf_add(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    app_buf_add(b, big, (size_t)n);
    free(big);
}

void app_buf_free(app_buf *b)
{
    free(b->s);
    *b = (app_buf){0};
}

int app_format_parse(const char *name, app_format *f)
{
    if (!strcmp(name, "jsonl"))
        *f = APP_FORMAT_JSONL;
    else if (!strcmp(name, "csv"))
        *f = APP_FORMAT_CSV;
    else
        return 0;
    return 1;
}

int app_format_of_path(const char *path, app_format *f)
{
    const char *dot = strrchr(path, '.');
    return dot && !strchr(dot, '/') && app_format_parse(dot + 1, f);
}

/* RFC 4180: quoted (quotes doubled) when it holds a comma, quote or line break. */
static void csv_field(app_buf *b, const char *s)
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

static json_t *jstr(const char *s)
{
    return app_json_bytes(s, strlen(s));
}

/* One JSON object on one line; probabilities as %.9g. */
static void json_line(app_buf *b, json_t *row)
{
    char *s = row ? json_dumps(row, JSON_REAL_PRECISION(9)) : NULL;
    if (!s)
        b->oom = 1;
    else
        app_buf_printf(b, "%s\n", s);
    free(s);
    json_decref(row);
}

static void text_line(app_buf *b, double p, const char *name)
{
    char bar[BAR_WIDTH + 1];
    int n = (int)lround(p * BAR_WIDTH);
    memset(bar, '#', (size_t)n);
    memset(bar + n, ' ', (size_t)(BAR_WIDTH - n));
    bar[BAR_WIDTH] = 0;
    app_buf_printf(b, "  %6.2f%%  %s  %s\n", 100 * p, bar, name);
}

void app_rows_result(app_buf *b, app_format f, const char *file, int k, const int32_t *index, const float *prob,
                     const char *const *labels)
{
    char num[32];
    json_t *top = NULL;
    if (f == APP_FORMAT_TEXT)
        app_buf_printf(b, "%s\n", file);
    else if (f != APP_FORMAT_CSV)
        top = json_array();
    for (int i = 0; i < k; i++) {
        if (f == APP_FORMAT_TEXT) {
            text_line(b, prob[i], labels[i]);
        } else if (f == APP_FORMAT_CSV) {
            csv_field(b, file);
            app_buf_printf(b, ",%d,%d,", i + 1, (int)index[i]);
            csv_field(b, labels[i]);
            app_buf_printf(b, ",%s,\n", app_format_prob(prob[i], num));
        } else {
            json_array_append_new(top, json_pack("{s:i, s:o, s:f}", "index", (int)index[i], "label",
                                                 jstr(labels[i]), "prob", (double)prob[i]));
        }
    }
    if (top)
        json_line(b, json_pack("{s:o, s:o}", "file", jstr(file), "top", top));
}

void app_rows_error(app_buf *b, app_format f, const char *file, const char *error)
{
    if (f == APP_FORMAT_CSV) {
        csv_field(b, file);
        app_buf_add(b, ",0,,,,", 6);
        csv_field(b, error);
        app_buf_add(b, "\n", 1);
    } else if (f != APP_FORMAT_TEXT) {
        json_line(b, json_pack("{s:o, s:o}", "file", jstr(file), "error", jstr(error)));
    }
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int app_done_has(const app_done *d, const char *file)
{
    return d->n && bsearch(&file, d->files, d->n, sizeof *d->files, by_str) != NULL;
}

void app_done_free(app_done *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->files[i]);
    free(d->files);
    *d = (app_done){0};
}

/* ---- reading an earlier output ---- */

/* One record read back: its file, whether it is an error row, its rank (CSV). */
typedef struct record {
    size_t start, end; /* bytes [start, end) of the file, line break included */
    char *file;
    int error, rank;
} record;

/* One CSV record from s[pos..len): the first two fields into file and rank.
 * The end of the record (after its line break), or 0 when it is torn (no
 * line break outside quotes before the end) or malformed. */
static size_t csv_record(const char *s, size_t len, size_t pos, record *r, int *fields)
{
    app_buf field = {0}, rank = {0};
    int n = 0;
    size_t i = pos;
    for (;;) {
        app_buf *dst = n == 0 ? &field : n == 1 ? &rank : NULL;
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
    *fields = n;
    r->file = field.s ? field.s : calloc(1, 1);
    r->rank = rank.s ? atoi(rank.s) : -1;
    r->error = r->rank == 0;
    app_buf_free(&rank);
    return i + 1;
torn:
    app_buf_free(&field);
    app_buf_free(&rank);
    return 0;
}

static size_t jsonl_record(const char *s, size_t len, size_t pos, record *r, int *ok)
{
    const char *nl = memchr(s + pos, '\n', len - pos);
    if (!nl)
        return 0;
    json_t *j = json_loadb(s + pos, (size_t)(nl - s - pos), 0, NULL);
    const char *file = json_string_value(json_object_get(j, "file"));
    *ok = file && (json_object_get(j, "top") || json_object_get(j, "error"));
    if (*ok) {
        r->file = strdup(file);
        r->error = json_object_get(j, "error") != NULL;
    }
    json_decref(j);
    return (size_t)(nl - s) + 1;
}

static int read_all(const char *path, char **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    app_buf b = {0};
    char chunk[65536];
    size_t n;
    if (!f)
        return 0;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        app_buf_add(&b, chunk, n);
    int ok = !ferror(f) && !b.oom;
    fclose(f);
    *data = b.s ? b.s : calloc(1, 1);
    *len = b.len;
    return ok && *data;
}

/* The records of an earlier output; *torn_at is where a torn last record
 * starts (len when there is none).  0 with a message when it is not ours. */
static int parse_output(const char *path, const char *s, size_t len, app_format f, record **out, size_t *n,
                        size_t *torn_at)
{
    static const char header[] = "file,rank,index,label,prob,error\n";
    size_t pos = 0, cap = 0;
    *out = NULL;
    *n = 0;
    if (f == APP_FORMAT_CSV) {
        if (len < sizeof header - 1 && !strncmp(s, header, len)) {
            *torn_at = 0; /* killed while writing the header */
            return 1;
        }
        if (strncmp(s, header, sizeof header - 1)) {
            fprintf(stderr, "gmlp-classify: %s does not start with gmlp-classify's CSV header\n", path);
            return 0;
        }
        pos = sizeof header - 1;
    }
    while (pos < len) {
        record r = {.start = pos};
        int ok = 1;
        size_t end = f == APP_FORMAT_CSV ? csv_record(s, len, pos, &r, &ok) : jsonl_record(s, len, pos, &r, &ok);
        if (!end)
            break;
        if (f == APP_FORMAT_CSV)
            ok = ok == 6 && r.rank >= 0;
        if (!ok || !r.file) {
            free(r.file);
            fprintf(stderr, "gmlp-classify: %s: the row at byte %zu is not one gmlp-classify writes\n", path, pos);
            return 0;
        }
        r.end = pos = end;
        if (*n == cap) {
            cap = cap ? 2 * cap : 1024;
            record *grown = realloc(*out, cap * sizeof *grown);
            if (!grown) {
                free(r.file);
                fprintf(stderr, "gmlp-classify: out of memory reading %s\n", path);
                return 0;
            }
            *out = grown;
        }
        (*out)[(*n)++] = r;
    }
    *torn_at = pos;
    /* CSV: an image's rows are written together, so fewer than the others
     * have at the end means the write was cut between rows */
    if (f == APP_FORMAT_CSV && *n) {
        size_t last = *n, most = 0, run = 0;
        while (last > 0 && !strcmp((*out)[last - 1].file, (*out)[*n - 1].file))
            last--;
        for (size_t i = 0; i < *n; i++) {
            run = i && !strcmp((*out)[i].file, (*out)[i - 1].file) ? run + 1 : 1;
            if (i < last && run > most)
                most = run;
        }
        if (!(*out)[*n - 1].error && *n - last < most) {
            *torn_at = (*out)[last].start;
            while (*n > last)
                free((*out)[--*n].file);
        }
    }
    return 1;
}

static char *sidecar_path(const char *path)
{
    size_t n = strlen(path);
    char *p = malloc(n + 16);
    if (p)
        snprintf(p, n + 16, "%s.gmlp-run.json", path);
    return p;
}

static int write_sidecar(const char *path, const app_run_id *id)
{
    char *side = sidecar_path(path);
    json_t *j = json_pack("{s:o, s:i}", "model", jstr(id->model), "top", id->top);
    int ok = side && j && json_dump_file(j, side, JSON_INDENT(2)) == 0;
    if (!ok)
        fprintf(stderr, "gmlp-classify: cannot write %s\n", side ? side : "the run file");
    json_decref(j);
    free(side);
    return ok;
}

/* 1 when the output was made by the same model and --top; else 2 with a message. */
static int check_sidecar(const char *path, const app_run_id *id)
{
    char *side = sidecar_path(path);
    json_error_t e;
    json_t *j = side ? json_load_file(side, 0, &e) : NULL;
    const char *model = json_string_value(json_object_get(j, "model"));
    json_int_t top = json_integer_value(json_object_get(j, "top"));
    int ok = 2;
    if (!model)
        fprintf(stderr,
                "gmlp-classify: --resume: cannot tell which model and --top wrote %s (%s is missing or unreadable)\n",
                path, side ? side : "its run file");
    else if (strcmp(model, id->model))
        fprintf(stderr, "gmlp-classify: --resume: %s was written with the model %s, not %s\n", path, model, id->model);
    else if (top != id->top)
        fprintf(stderr, "gmlp-classify: --resume: %s was written with --top %lld, not %d\n", path, (long long)top,
                id->top);
    else
        ok = 1;
    json_decref(j);
    free(side);
    return ok;
}

/* Writes the kept records to a new file that replaces path. */
static int rewrite(const char *path, const char *s, app_format f, const record *r, size_t n, const char *keep)
{
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 8);
    FILE *o = NULL;
    if (tmp) {
        snprintf(tmp, plen + 8, "%s.tmp", path);
        o = fopen(tmp, "wb");
    }
    int ok = o != NULL;
    if (ok && f == APP_FORMAT_CSV)
        ok = fputs("file,rank,index,label,prob,error\n", o) >= 0;
    for (size_t i = 0; ok && i < n; i++)
        if (keep[i])
            ok = fwrite(s + r[i].start, 1, r[i].end - r[i].start, o) == r[i].end - r[i].start;
    if (o && fclose(o))
        ok = 0;
    ok = ok && rename(tmp, path) == 0;
    if (!ok)
        fprintf(stderr, "gmlp-classify: cannot rewrite %s without its error rows: %s\n", path, strerror(errno));
    free(tmp);
    return ok;
}

static int resume(const char *path, app_format f, const app_run_id *id, int retry_errors, app_done *done,
                  FILE **out)
{
    int st = check_sidecar(path, id);
    if (st != 1)
        return st;
    char *s;
    size_t len, n = 0, torn_at = 0;
    record *r = NULL;
    if (!read_all(path, &s, &len)) {
        fprintf(stderr, "gmlp-classify: cannot read %s: %s\n", path, strerror(errno));
        free(s);
        return 0;
    }
    int ok = parse_output(path, s, len, f, &r, &n, &torn_at);
    char *keep = ok ? malloc(n + 1) : NULL;
    size_t dropped = 0;
    ok = ok && keep;
    for (size_t i = 0; ok && i < n; i++) {
        keep[i] = !(retry_errors && r[i].error);
        dropped += !keep[i];
    }
    if (ok && dropped)
        ok = rewrite(path, s, f, r, n, keep);
    else if (ok && torn_at < len) {
        /* the row a kill cut off is written again */
        ok = truncate(path, (off_t)torn_at) == 0;
        if (!ok)
            fprintf(stderr, "gmlp-classify: cannot cut the torn last row of %s: %s\n", path, strerror(errno));
    }
    done->files = ok ? malloc((n + 1) * sizeof *done->files) : NULL;
    ok = ok && done->files;
    for (size_t i = 0; i < n; i++) {
        if (ok && keep[i] && (i == 0 || strcmp(r[i].file, r[i - 1].file)))
            done->files[done->n++] = r[i].file;
        else
            free(r[i].file);
    }
    if (ok)
        qsort(done->files, done->n, sizeof *done->files, by_str);
    free(keep);
    free(r);
    free(s);
    if (ok && !(*out = fopen(path, "ab")))
        fprintf(stderr, "gmlp-classify: cannot append to %s: %s\n", path, strerror(errno));
    if (ok && *out && f == APP_FORMAT_CSV && torn_at == 0) /* the header itself was cut */
        fputs("file,rank,index,label,prob,error\n", *out);
    return ok && *out;
}

int app_output_open(const char *path, app_format f, const app_run_id *id, int resume_run, int retry_errors,
                    app_done *done, FILE **out)
{
    *out = NULL;
    *done = (app_done){0};
    if (!strcmp(path, "-")) {
        if (resume_run) {
            fprintf(stderr, "gmlp-classify: --resume needs an --output file, not stdout\n");
            return 2;
        }
        *out = stdout;
    } else {
        struct stat st;
        if (stat(path, &st) == 0) {
            if (resume_run)
                return resume(path, f, id, retry_errors, done, out);
            fprintf(stderr, "gmlp-classify: %s exists; it is not overwritten (--resume continues it)\n", path);
            return 2;
        }
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd < 0 || !(*out = fdopen(fd, "wb"))) {
            fprintf(stderr, "gmlp-classify: cannot create %s: %s\n", path, strerror(errno));
            if (fd >= 0)
                close(fd);
            return 0;
        }
        if (!write_sidecar(path, id))
            return 0;
    }
    if (f == APP_FORMAT_CSV) {
        fputs("file,rank,index,label,prob,error\n", *out);
        fflush(*out);
    }
    return 1;
}
