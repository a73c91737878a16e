/* Reference files of the fixtures made by tools/ (NAME.ref.safetensors),
 * for tests that link the internal library. */
#ifndef GMLP_FIXTURE_H
#define GMLP_FIXTURE_H

#include <dirent.h>
#include <string.h>

#include "check.h"
#include "format/safetensors.h"

/* dir/NAME.ref.safetensors parsed into ref; the returned buffer backs ref's
 * tensors (free it after gmlp_st_free).  NULL, with a failure recorded,
 * when it cannot be read. */
static inline unsigned char *fixture_ref(const char *dir, const char *name, gmlp_st_file *ref)
{
    char path[1024];
    gmlp_error err = {.msg = ""};
    snprintf(path, sizeof path, "%s/%s.ref.safetensors", dir, name);
    size_t size;
    unsigned char *buf = check_read_file(path, &size);
    if (!buf || gmlp_st_parse(buf, size, ref, &err) != GMLP_OK) {
        CHECK(0, "%s: cannot read reference: %s", path, buf ? err.msg : "unreadable");
        free(buf);
        return NULL;
    }
    return buf;
}

/* An F64 tensor's values, copied out (the data may be unaligned). */
static inline double *fixture_f64(const gmlp_st_tensor *t)
{
    double *d = malloc(t->numel * sizeof *d);
    memcpy(d, t->data, t->numel * sizeof *d);
    return d;
}

/* The weight storages every fixture runs with, and the tolerance against the
 * float64 reference, relative to the largest |value|: weights as stored, and
 * as half on the device (its rounding, 2^-11 relative, dominates). */
static const struct {
    gmlp_weight_type weights;
    const char *name;
    double tol;
} fixture_storages[] = {{GMLP_WEIGHTS_F32, "f32", 1e-4}, {GMLP_WEIGHTS_F16, "f16", 2e-3}};
#define FIXTURE_STORAGES 2

/* dir/NAME.safetensors loaded with storage s's weights; NULL, with a failure
 * recorded, when it does not load. */
static inline gmlp_model *fixture_load(gmlp_context *ctx, const char *dir, const char *name, int s)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.safetensors", dir, name);
    gmlp_load_options opts;
    gmlp_load_options_default(&opts);
    opts.weights = fixture_storages[s].weights;
    gmlp_model *model = NULL;
    gmlp_status st = gmlp_model_load_ex(ctx, path, &opts, &model);
    CHECK(st == GMLP_OK, "%s: load: %s", name, gmlp_last_error(ctx));
    return st == GMLP_OK ? model : NULL;
}

/* got against the F64 tensor want within storage s's tolerance; detail is
 * printed after the error. */
static inline void fixture_compare(const char *name, int s, const char *what, const float *got,
                                   const gmlp_st_tensor *want, const char *detail)
{
    double *w = fixture_f64(want);
    double e = rel_error(got, w, want->numel, 1e-6), tol = fixture_storages[s].tol;
    printf("%-24s %s %-8s max rel error %.2e%s\n", name, fixture_storages[s].name, what, e, detail);
    CHECK(e <= tol, "%s %s %s: relative error %.3g > %g", name, fixture_storages[s].name, what, e, tol);
    free(w);
}

/* Runs each(ctx, dir, NAME, storage) for every NAME.ref.safetensors in dir
 * and every storage; returns the number of NAMEs (-1: dir unreadable). */
static inline int fixture_each(gmlp_context *ctx, const char *dir,
                               void (*each)(gmlp_context *ctx, const char *dir, const char *name, int storage))
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int cases = 0;
    const char *suffix = ".ref.safetensors";
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name), sl = strlen(suffix);
        if (len <= sl || strcmp(e->d_name + len - sl, suffix))
            continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(len - sl), e->d_name);
        for (int s = 0; s < FIXTURE_STORAGES; s++)
            each(ctx, dir, name, s);
        cases++;
    }
    closedir(d);
    return cases;
}

#endif
