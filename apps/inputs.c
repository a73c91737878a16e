#include "inputs.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "portable.h"

/* what apps/image.c decodes */
static const char *const image_ext[] = {"png", "jpg", "jpeg", "bmp", "gif", "tga", "psd",
                                        "hdr", "pbm", "pgm", "ppm", "pnm", "pic", "webp", NULL};

int app_is_image_name(const char *name)
{
    const char *dot = strrchr(name, '.');
    for (int i = 0; dot && image_ext[i]; i++)
        if (!strcasecmp(dot + 1, image_ext[i]))
            return 1;
    return 0;
}

static int push(app_inputs *in, char *path)
{
    if (!path)
        return 0;
    if (in->n == in->cap) {
        size_t cap = in->cap ? 2 * in->cap : 256;
        char **grown = realloc(in->paths, cap * sizeof *grown);
        if (!grown) {
            free(path);
            return 0;
        }
        in->paths = grown;
        in->cap = cap;
    }
    in->paths[in->n++] = path;
    return 1;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b); /* bytewise: strcmp compares as unsigned char */
}

/* PATH joined with NAME as given, not normalised ("dir/" + "a" is "dir/a"). */
static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir), m = strlen(name);
    int slash = n && dir[n - 1] != '/';
    char *p = malloc(n + slash + m + 1);
    if (p) {
        memcpy(p, dir, n);
        if (slash)
            p[n] = '/';
        memcpy(p + n + slash, name, m + 1);
    }
    return p;
}

static int out_of_memory(const char *dir)
{
    fprintf(stderr, "gmlp-classify: out of memory listing %s\n", dir);
    return 0;
}

/* The sorted entry names of dir (NULL and a message when it cannot be read). */
static char **read_names(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "gmlp-classify: cannot read folder %s: %s\n", dir, strerror(errno));
        return NULL;
    }
    char **names = malloc(sizeof *names);
    size_t cap = 1;
    int oom = !names;
    *n = 0;
    for (struct dirent *e; !oom && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (*n == cap) {
            char **grown = realloc(names, 2 * cap * sizeof *grown);
            if (!(oom = !grown)) {
                names = grown;
                cap *= 2;
            }
        }
        if (!oom && !(oom = !(names[*n] = strdup(e->d_name))))
            ++*n;
    }
    closedir(d);
    if (oom) {
        for (size_t i = 0; names && i < *n; i++)
            free(names[i]);
        free(names);
        out_of_memory(dir);
        return NULL;
    }
    qsort(names, *n, sizeof *names, by_name);
    return names;
}

static int add_folder(app_inputs *in, const char *dir)
{
    size_t n;
    char **names = read_names(dir, &n);
    int ok = names != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        char *path = join(dir, names[i]);
        struct stat st;
        if (!path)
            ok = out_of_memory(dir);
        else if (names[i][0] == '.')
            in->skipped++; /* dotfiles and dot folders */
        else if (app_lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            ok = !in->recursive || add_folder(in, path);
        else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            ; /* a symlinked folder: not followed */
        else if (app_is_image_name(names[i])) {
            ok = push(in, path) || out_of_memory(dir);
            path = NULL; /* the list owns it now */
        } else
            in->skipped++;
        free(path);
    }
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
    return ok;
}

int app_inputs_add(app_inputs *in, const char *arg)
{
    struct stat st;
    if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
        return add_folder(in, arg);
    if (!push(in, strdup(arg))) {
        fprintf(stderr, "gmlp-classify: out of memory\n");
        return 0;
    }
    return 1;
}

int app_inputs_add_list(app_inputs *in, FILE *f)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int ok = 1;
    while (ok && (len = app_getline(&line, &cap, f)) != -1) {
        if (len && line[len - 1] == '\n')
            line[--len] = 0;
        if (len && line[len - 1] == '\r')
            line[--len] = 0;
        if (len)
            ok = app_inputs_add(in, line);
    }
    free(line);
    return ok;
}

typedef struct ranked {
    const char *path;
    size_t pos;
} ranked;

static int by_path(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

void app_inputs_dedupe(app_inputs *in)
{
    ranked *r = malloc(in->n * sizeof *r + 1);
    char *drop = calloc(in->n + 1, 1);
    if (!r || !drop) { /* out of memory: repeats stay (each is still classified correctly) */
        free(r);
        free(drop);
        return;
    }
    for (size_t i = 0; i < in->n; i++)
        r[i] = (ranked){in->paths[i], i};
    qsort(r, in->n, sizeof *r, by_path);
    for (size_t i = 1; i < in->n; i++)
        if (!strcmp(r[i].path, r[i - 1].path))
            drop[r[i].pos] = 1;
    size_t m = 0;
    for (size_t i = 0; i < in->n; i++) {
        if (drop[i])
            free(in->paths[i]);
        else
            in->paths[m++] = in->paths[i];
    }
    in->n = m;
    free(r);
    free(drop);
}

void app_inputs_free(app_inputs *in)
{
    for (size_t i = 0; i < in->n; i++)
        free(in->paths[i]);
    free(in->paths);
    in->paths = NULL;
    in->n = in->cap = 0;
}
