#include "resume.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "portable.h"
#include "strbuf.h"

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int app_done_has(const app_done *d, const char *file)
{
    return d->n && bsearch(&file, d->files, d->n, sizeof *d->files, by_str) != NULL;
}

void app_done_sort(app_done *d)
{
    if (d->n)
        qsort(d->files, d->n, sizeof *d->files, by_str);
}

void app_done_free(app_done *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->files[i]);
    free(d->files);
    *d = (app_done){0};
}

/* The records of an earlier output; *torn_at is where a torn last record
 * starts (len when there is none).  0 with a message when it is not ours. */
static int parse_output(const char *path, const char *s, size_t len, const app_writer *w, app_record **out,
                        size_t *n, size_t *torn_at)
{
    size_t pos = 0, cap = 0;
    *out = NULL;
    *n = 0;
    if (w->header) {
        const size_t hn = strlen(w->header);
        const char *nl = w->header_dims && len >= hn ? memchr(s + hn, '\n', len - hn) : NULL;
        if (strncmp(s, w->header, len < hn ? len : hn)) {
            fprintf(stderr, "gmlp-classify: %s does not start with gmlp-classify's %s header\n", path, w->name);
            return 0;
        }
        if (len < hn || (w->header_dims && !nl)) {
            *torn_at = 0; /* killed while writing the header */
            return 1;
        }
        pos = nl ? (size_t)(nl - s) + 1 : hn; /* header_dims: the rest of the line names the columns */
    }
    while (pos < len) {
        app_record r = {.start = pos};
        size_t end = w->read(s, len, pos, &r);
        if (!end)
            break;
        if (!r.file) {
            fprintf(stderr, "gmlp-classify: %s: the row at byte %zu is not one gmlp-classify writes\n", path, pos);
            return 0;
        }
        r.end = pos = end;
        if (*n == cap) {
            cap = cap ? 2 * cap : 1024;
            app_record *grown = realloc(*out, cap * sizeof *grown);
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
    /* an image's rows (CSV's k) are written together, so fewer than the others
     * have at the end means the write was cut between rows */
    if (*n) {
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

/* Writes the kept records to a new file that replaces path. */
static int rewrite(const char *path, const char *s, const app_writer *w, const app_record *r, size_t n,
                   const char *keep)
{
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 8);
    FILE *o = NULL;
    if (tmp) {
        snprintf(tmp, plen + 8, "%s.tmp", path);
        o = fopen(tmp, "wb");
    }
    int ok = o != NULL;
    if (ok && w->header) /* the header as it was (header_dims: with its columns) */
        ok = fwrite(s, 1, r[0].start, o) == r[0].start;
    for (size_t i = 0; ok && i < n; i++)
        if (keep[i])
            ok = fwrite(s + r[i].start, 1, r[i].end - r[i].start, o) == r[i].end - r[i].start;
    if (o && fclose(o))
        ok = 0;
    ok = ok && app_rename(tmp, path) == 0;
    if (!ok)
        fprintf(stderr, "gmlp-classify: cannot rewrite %s without its error rows: %s\n", path, strerror(errno));
    free(tmp);
    return ok;
}

int app_resume(const char *path, const app_writer *w, int retry_errors, app_done *done, app_out *out)
{
    char *s = NULL;
    size_t len, n = 0, torn_at = 0;
    app_record *r = NULL;
    *done = (app_done){0};
    *out = (app_out){0};
    if (w->resume)
        return w->resume(path, w, done, out);
    if (!app_read_file(path, &s, &len)) {
        fprintf(stderr, "gmlp-classify: cannot read %s: %s\n", path, strerror(errno));
        free(s);
        return 0;
    }
    int ok = parse_output(path, s, len, w, &r, &n, &torn_at);
    char *keep = ok ? malloc(n + 1) : NULL;
    size_t dropped = 0;
    ok = ok && keep;
    for (size_t i = 0; ok && i < n; i++) {
        keep[i] = !(retry_errors && r[i].error);
        dropped += !keep[i];
    }
    if (ok && dropped)
        ok = rewrite(path, s, w, r, n, keep);
    else if (ok && torn_at < len) {
        /* the row a kill cut off is written again */
        ok = truncate(path, (off_t)torn_at) == 0;
        if (!ok)
            fprintf(stderr, "gmlp-classify: cannot cut the torn last row of %s: %s\n", path, strerror(errno));
    }
    done->files = ok ? malloc((n + 1) * sizeof *done->files) : NULL;
    ok = ok && done->files;
    /* one entry per image (CSV has --top rows each); the names not taken are freed after */
    for (size_t i = 0; ok && i < n; i++)
        if (keep[i] && (i == 0 || strcmp(r[i].file, r[i - 1].file))) {
            done->files[done->n++] = r[i].file;
            keep[i] = 2;
        }
    for (size_t i = 0; i < n; i++)
        if (!ok || keep[i] != 2)
            free(r[i].file);
    if (ok)
        app_done_sort(done);
    free(keep);
    free(r);
    free(s);
    if (ok && !(out->f = fopen(path, "ab")))
        fprintf(stderr, "gmlp-classify: cannot append to %s: %s\n", path, strerror(errno));
    if (!out->f) {
        app_done_free(done);
        return 0;
    }
    if (w->header && torn_at == 0) { /* the header itself was cut */
        if (w->header_dims)
            out->need_header = 1; /* it names the columns: written with the first rows */
        else
            fputs(w->header, out->f);
    }
    return 1;
}

