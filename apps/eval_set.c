/* --eval's labelled images (eval.h): ImageFolder trees and path,label CSV
 * files, the classes by --class-map or by name in timm's natural order. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common.h"
#include "eval.h"
#include "portable.h"

/* An image before the classes are known: its class by name, or by index (a CSV's number; name NULL). */
typedef struct entry {
    char *path, *name;
    long index;
} entry;

typedef struct entries {
    entry *e;
    size_t n, cap;
    int oom;
} entries;

static void add(entries *l, char *path, const char *name, long index)
{
    char *n = name ? strdup(name) : NULL;
    if (!l->oom && l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 1024;
        entry *grown = realloc(l->e, cap * sizeof *grown);
        l->oom = !grown;
        if (grown)
            l->e = grown, l->cap = cap;
    }
    if (l->oom || !path || (name && !n)) {
        l->oom = 1;
        free(path);
        free(n);
        return;
    }
    l->e[l->n++] = (entry){path, n, index};
}

/* timm's natural_key order (timm.utils.natural_key): case-insensitive, runs of digits by their value; where
 * one name's text ends or meets a digit and the other's goes on, the first comes first. */
static int natural_cmp(const char *a, const char *b)
{
    for (;;) {
        if (!*a || !*b)
            return !*b - !*a;
        const int da = isdigit((unsigned char)*a), db = isdigit((unsigned char)*b);
        if (da && db) {
            while (*a == '0' && isdigit((unsigned char)a[1]))
                a++;
            while (*b == '0' && isdigit((unsigned char)b[1]))
                b++;
            size_t la = 0, lb = 0;
            while (isdigit((unsigned char)a[la]))
                la++;
            while (isdigit((unsigned char)b[lb]))
                lb++;
            int c = la != lb ? (la < lb ? -1 : 1) : strncmp(a, b, la);
            if (c)
                return c;
            a += la, b += lb;
            continue;
        }
        if (da != db)
            return da ? -1 : 1;
        const int ca = tolower((unsigned char)*a), cb = tolower((unsigned char)*b);
        if (ca != cb)
            return ca < cb ? -1 : 1;
        a++, b++;
    }
}

static int by_natural(const void *a, const void *b)
{
    return natural_cmp(*(char *const *)a, *(char *const *)b);
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->path, ((const entry *)b)->path);
}

/* An ImageFolder root: every image under it, its class the name of the folder holding it. */
static int add_tree(entries *l, const char *root, app_inputs *in, size_t *outside)
{
    app_inputs t = {.recursive = 1};
    if (!app_inputs_add(&t, root)) {
        app_inputs_free(&t);
        return 0;
    }
    in->skipped += t.skipped;
    for (size_t i = 0; i < t.n; i++) {
        char *p = t.paths[i], *slash = strrchr(p, '/');
        size_t root_len = strlen(root);
        t.paths[i] = NULL;
        if (slash <= p + root_len) { /* at the root itself: in no class folder */
            ++*outside;
            free(p);
            continue;
        }
        const char *leaf = slash - 1;
        while (*leaf != '/')
            leaf--;
        char name[NAME_MAX + 1];
        snprintf(name, sizeof name, "%.*s", (int)(slash - leaf - 1), leaf + 1);
        add(l, p, name, -1);
    }
    app_inputs_free(&t);
    return 1;
}

/* A CSV of path,label lines. */
static int add_csv(entries *l, const char *csv)
{
    FILE *f = fopen(csv, "r");
    if (!f) {
        fprintf(stderr, "gmlp-classify: cannot open %s: %s\n", csv, strerror(errno));
        return 0;
    }
    const char *slash = strrchr(csv, '/');
    const int dir_len = slash ? (int)(slash - csv + 1) : 0;
    char *line = NULL;
    size_t cap = 0, number = 0;
    int ok = 1;
    for (ssize_t len; ok && (len = app_getline(&line, &cap, f)) != -1;) {
        number++;
        line[strcspn(line, "\r\n")] = 0;
        char *comma = strrchr(line, ',');
        if (!*line || (number == 1 && !strcasecmp(line, "path,label")))
            continue;
        long long index = -1;
        if (!comma || comma == line || !comma[1]) {
            fprintf(stderr, "gmlp-classify: %s:%zu: expected path,label\n", csv, number);
            ok = 0;
            break;
        }
        *comma = 0;
        const int numeric = app_parse_int(comma + 1, 0, INT32_MAX - 1, &index);
        size_t n = strlen(line) + (size_t)dir_len + 1;
        char *path = malloc(n);
        if (path)
            snprintf(path, n, "%.*s%s", line[0] == '/' ? 0 : dir_len, csv, line);
        add(l, path, numeric ? NULL : comma + 1, numeric ? (long)index : -1);
    }
    free(line);
    fclose(f);
    return ok;
}

/* --class-map: one class name a line (surrounding white space dropped, as timm's load_class_map does). */
static char **read_class_map(const char *file, int *n)
{
    FILE *f = fopen(file, "r");
    if (!f) {
        fprintf(stderr, "gmlp-classify: cannot open --class-map %s: %s\n", file, strerror(errno));
        return NULL;
    }
    char **names = NULL, *line = NULL;
    size_t cap = 0;
    int oom = 0;
    *n = 0;
    for (ssize_t len; !oom && (len = app_getline(&line, &cap, f)) != -1 && *n < INT32_MAX;) {
        char *s = line, *end = line + len;
        while (s < end && isspace((unsigned char)*s))
            s++;
        while (end > s && isspace((unsigned char)end[-1]))
            *--end = 0;
        char **grown = realloc(names, (size_t)(*n + 1) * sizeof *names);
        oom = !grown || !(s = strdup(s));
        if (grown)
            names = grown;
        if (!oom)
            names[(*n)++] = s;
    }
    free(line);
    fclose(f);
    if (oom || !*n) {
        fprintf(stderr, "gmlp-classify: --class-map %s: %s\n", file, oom ? "out of memory" : "no class names");
        for (int i = 0; i < *n; i++)
            free(names[i]);
        free(names);
        return NULL;
    }
    return names;
}

/* The class of each entry's name: by the map, else the names found in natural order. */
static int name_classes(app_eval *e, entries *l, const char *class_map)
{
    if (class_map)
        return (e->classes = read_class_map(class_map, &e->n_classes)) != NULL;
    char **names = malloc((l->n + 1) * sizeof *names);
    if (!names)
        return 0;
    size_t m = 0;
    for (size_t i = 0; i < l->n; i++)
        if (l->e[i].name)
            names[m++] = l->e[i].name;
    qsort(names, m, sizeof *names, by_natural);
    int ok = (e->classes = malloc((m + 1) * sizeof *e->classes)) != NULL;
    for (size_t i = 0; ok && i < m; i++)
        if (!i || strcmp(names[i], names[i - 1]))
            ok = (e->classes[e->n_classes++] = strdup(names[i])) != NULL;
    e->n_classes -= !ok && e->n_classes; /* the failed strdup's NULL */
    free(names);
    return ok;
}

static long class_of(const app_eval *e, const entry *x)
{
    if (!x->name)
        return x->index;
    for (int c = 0; c < e->n_classes; c++) /* a few classes, or a sorted list: either is cheap beside decoding */
        if (!strcmp(e->classes[c], x->name))
            return c;
    return -1;
}

int app_eval_open(app_eval *e, char *const *args, int n_args, const char *class_map, app_inputs *in)
{
    entries l = {0};
    int ok = 1, said = 0; /* said: a message is out */
    *e = (app_eval){0};
    for (int i = 0; ok && i < n_args; i++) {
        struct stat st;
        const char *dot = strrchr(args[i], '.');
        if (stat(args[i], &st) == 0 && S_ISDIR(st.st_mode))
            ok = add_tree(&l, args[i], in, &e->outside);
        else if (dot && !strcasecmp(dot, ".csv"))
            ok = add_csv(&l, args[i]);
        else {
            fprintf(stderr, "gmlp-classify: --eval %s: not a folder (an ImageFolder tree) nor a .csv of path,label "
                            "lines\n", args[i]);
            ok = 0;
        }
    }
    said = !ok;
    ok = ok && !l.oom;
    if (ok && !(ok = name_classes(e, &l, class_map)))
        said = class_map != NULL;
    if (ok && l.n)
        qsort(l.e, l.n, sizeof *l.e, by_path);
    e->paths = ok ? malloc((l.n + 1) * sizeof *e->paths) : NULL;
    e->label = ok ? malloc((l.n + 1) * sizeof *e->label) : NULL;
    ok = ok && e->paths && e->label;
    long most = e->n_classes - 1;
    for (size_t i = 0; i < l.n; i++) {
        long c = ok ? class_of(e, &l.e[i]) : -1;
        if (c < 0 || (e->n && !strcmp(e->paths[e->n - 1], l.e[i].path))) { /* not in --class-map; a repeat */
            e->outside += c < 0;
            free(l.e[i].path);
        } else {
            e->paths[e->n] = l.e[i].path;
            e->label[e->n++] = (int32_t)c;
            most = c > most ? c : most;
        }
        free(l.e[i].name);
    }
    free(l.e);
    if (ok && most >= e->n_classes) { /* a CSV's indices past the named classes: named by number */
        char **grown = realloc(e->classes, (size_t)(most + 1) * sizeof *grown);
        ok = grown != NULL;
        if (grown)
            e->classes = grown;
        for (; ok && e->n_classes <= most; e->n_classes++) {
            char name[24];
            snprintf(name, sizeof name, "%d", e->n_classes);
            ok = (e->classes[e->n_classes] = strdup(name)) != NULL;
        }
    }
    e->state = ok ? calloc(e->n + 1, 1) : NULL;
    e->in_top5 = ok ? calloc(e->n + 1, 1) : NULL;
    e->top1 = ok ? calloc(e->n + 1, sizeof *e->top1) : NULL;
    ok = ok && e->state && e->in_top5 && e->top1;
    for (size_t i = 0; ok && i < e->n; i++)
        if (!(ok = app_inputs_add(in, e->paths[i])))
            said = 1;
    if (!ok && !said)
        fprintf(stderr, "gmlp-classify: out of memory reading the labelled images\n");
    return ok;
}
