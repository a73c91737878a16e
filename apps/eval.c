/* --eval's results (eval.h): each labelled image's top-1 class and whether its
 * label is among its top 5, from the pipeline's typed results or, on
 * --resume, from the rows an earlier run wrote. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "strbuf.h"

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The image's place in the set, or -1. */
static long find(const app_eval *e, const char *path)
{
    char *const *p = e->n ? bsearch(&path, e->paths, e->n, sizeof *e->paths, by_str) : NULL;
    return p ? (long)(p - e->paths) : -1;
}

/* The model's name of class c, kept the first time a result names it. */
static void name(app_eval *e, int32_t c, const char *label)
{
    if (c < 0 || !label)
        return;
    if (c >= e->n_names) {
        int32_t n = c + 1 > 2 * e->n_names ? c + 1 : 2 * e->n_names;
        char **grown = realloc(e->names, (size_t)n * sizeof *grown);
        if (!grown) /* names are for reading the report only: the class's number stands in */
            return;
        memset(grown + e->n_names, 0, (size_t)(n - e->n_names) * sizeof *grown);
        e->names = grown;
        e->n_names = n;
    }
    if (!e->names[c])
        e->names[c] = strdup(label);
}

/* A class of rank `rank` (1: the most probable) for image i. */
static void rank_class(app_eval *e, long i, int rank, int32_t c)
{
    if (rank == 1)
        e->top1[i] = c;
    if (rank <= APP_EVAL_TOP && c == e->label[i])
        e->in_top5[i] = 1;
}

void app_eval_take(app_eval *e, const char *path, const app_result *r)
{
    const long i = find(e, path);
    if (i < 0)
        return;
    e->state[i] = r->error || r->k < 1 ? 2 : 1;
    e->in_top5[i] = 0;
    for (int j = 0; !r->error && j < r->k; j++) {
        rank_class(e, i, j + 1, r->index[j]);
        name(e, r->index[j], r->labels[j]);
    }
}

int app_eval_resume(app_eval *e, const char *path, const app_writer *w)
{
    char *s = NULL;
    size_t len, pos = 0;
    if (!app_read_file(path, &s, &len)) {
        fprintf(stderr, "gmlp-classify: cannot read %s: %s\n", path, strerror(errno));
        free(s);
        return 0;
    }
    if (w->header) /* app_resume checked it */
        pos = strlen(w->header) < len ? strlen(w->header) : len;
    for (size_t end; pos < len; pos = end) {
        app_record r = {.start = pos};
        if (!(end = w->read(s, len, pos, &r)))
            break;
        const long i = r.file ? find(e, r.file) : -1;
        if (i >= 0) {
            if (r.error)
                e->state[i] = 2;
            else if (e->state[i] != 2)
                e->state[i] = 1;
            for (int j = 0; !r.error && j < r.k; j++)
                rank_class(e, i, r.rank + j, r.top[j]);
        }
        free(r.file);
    }
    free(s);
    return 1;
}

void app_eval_free(app_eval *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->paths[i]);
    for (int c = 0; c < e->n_classes; c++)
        free(e->classes[c]);
    for (int32_t c = 0; c < e->n_names; c++)
        free(e->names[c]);
    free(e->paths);
    free(e->label);
    free(e->classes);
    free(e->state);
    free(e->top1);
    free(e->in_top5);
    free(e->names);
    *e = (app_eval){0};
}
