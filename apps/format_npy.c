/* NumPy's .npy (format 1.0): a float32 (n, dim) array, little-endian, one row
 * per image that has features, and beside it (OUT.paths.txt) their files, one
 * a line in the same order.  The header has a fixed size (128 bytes), so that
 * its count of rows is rewritten in place after each batch: the rows first,
 * then their paths, then the count, so that at every moment the header counts
 * no more rows than both files hold.  --resume keeps the rows both files hold
 * whole and cuts the rest.  Images that fail have no row (stderr says why); a
 * --resume tries them again. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "resume.h"
#include "strbuf.h"

#define NPY_HEADER 128 /* magic, version, length and the dictionary, space-padded to 64-byte alignment */
static const char magic[8] = "\x93NUMPY\x01\x00";

static void header(char out[NPY_HEADER], size_t rows, int dim)
{
    char dict[NPY_HEADER];
    int n = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu, %d), }", rows, dim);
    memcpy(out, magic, 8);
    out[8] = (char)(NPY_HEADER - 10);
    out[9] = 0;
    memset(out + 10, ' ', NPY_HEADER - 10);
    memcpy(out + 10, dict, (size_t)n);
    out[NPY_HEADER - 1] = '\n';
}

void app_npy_header(app_buf *b, int dim)
{
    char h[NPY_HEADER];
    header(h, 0, dim);
    app_buf_add(b, h, NPY_HEADER);
}

void app_npy_row(app_rows *o, const char *file, const app_result *r)
{
    app_buf_add_f32le(&o->text, r->features, (size_t)r->dim);
    app_buf_printf(&o->side, "%s\n", file);
    o->records++;
}

/* The header's count of rows rewritten in place. */
static int set_rows(FILE *f, size_t rows, int dim)
{
    char h[NPY_HEADER];
    header(h, rows, dim);
    return !fseek(f, 0, SEEK_SET) && fwrite(h, 1, NPY_HEADER, f) == NPY_HEADER && !fflush(f) &&
           !fseek(f, 0, SEEK_END);
}

int app_npy_commit(app_out *o, int dim)
{
    return set_rows(o->f, o->rows, dim);
}

/* The dim of a header this file writes; 0 when it is not one. */
static int header_dim(const char *s)
{
    size_t rows;
    int dim, end = 0;
    if (memcmp(s, magic, 8) || s[8] != NPY_HEADER - 10 || s[9] || s[NPY_HEADER - 1] != '\n' ||
        sscanf(s + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu, %d), }%n", &rows, &dim, &end) != 2 ||
        !end || dim < 1)
        return 0;
    return dim;
}

int app_npy_resume(const char *path, const app_writer *w, app_done *done, app_out *o)
{
    char *side_path = app_writer_side_path(w, path), *s = NULL, *names = NULL;
    size_t len = 0, n_names = 0;
    int ok = side_path && app_read_file(path, &s, &len);
    if (!ok) {
        fprintf(stderr, "gmlp-classify: cannot read %s: %s\n", path, strerror(errno));
        goto out;
    }
    int dim = len >= NPY_HEADER ? header_dim(s) : 0;
    if (len >= NPY_HEADER ? !dim : memcmp(s, magic, len < 8 ? len : 8) != 0) { /* shorter: cut in its header */
        fprintf(stderr, "gmlp-classify: %s does not start with gmlp-classify's npy header\n", path);
        ok = 0;
        goto out;
    }
    /* the paths: the lines that end (a kill may have cut the last); a missing file holds none */
    if (!app_read_file(side_path, &names, &n_names)) {
        if (errno != ENOENT) {
            fprintf(stderr, "gmlp-classify: cannot read %s: %s\n", side_path, strerror(errno));
            ok = 0;
            goto out;
        }
        n_names = 0;
    }
    const size_t row_bytes = (size_t)dim * 4, rows = dim ? (len - NPY_HEADER) / row_bytes : 0;
    size_t kept = 0, end = 0;
    char **files = malloc((rows + 1) * sizeof *files);
    ok = files != NULL;
    for (char *p = names, *nl; ok && names && kept < rows && (nl = memchr(p, '\n', n_names - (size_t)(p - names))); p = nl + 1) {
        *nl = 0;
        ok = (files[kept++] = strdup(p)) != NULL;
        end = (size_t)(nl + 1 - names);
    }
    *done = (app_done){.files = files, .n = kept};
    if (!ok) {
        fprintf(stderr, "gmlp-classify: out of memory reading %s\n", side_path);
        goto out;
    }
    app_done_sort(done);
    /* both cut to the rows they both hold; the header counts them */
    o->need_header = !dim;
    o->rows = kept;
    if (truncate(path, dim ? (off_t)(NPY_HEADER + kept * row_bytes) : 0) ||
        (names && truncate(side_path, (off_t)end)) || !(o->f = fopen(path, "r+b")) ||
        !(o->side = fopen(side_path, "ab")) || (dim && !set_rows(o->f, kept, dim))) {
        fprintf(stderr, "gmlp-classify: cannot cut %s and %s to the rows they both hold: %s\n", path, side_path,
                strerror(errno));
        ok = 0;
    }
out:
    if (!ok) {
        if (o->f)
            fclose(o->f);
        if (o->side)
            fclose(o->side);
        o->f = o->side = NULL;
        app_done_free(done);
    }
    free(s);
    free(names);
    free(side_path);
    return ok;
}
