/* Reference files of the fixtures made by tools/ (NAME.ref.safetensors, and
 * the precision modes' ../precision/NAME.prec.safetensors), for tests that
 * link the internal library. */
#ifndef GMLP_FIXTURE_H
#define GMLP_FIXTURE_H

#include <dirent.h>
#include <string.h>

#include "check.h"
#include "format/safetensors.h"

/* The safetensors file at path parsed into ref; the returned buffer backs
 * ref's tensors (free it after gmlp_st_free).  NULL, with a failure
 * recorded, when it cannot be read. */
static inline unsigned char *fixture_parse(const char *path, gmlp_st_file *ref)
{
    gmlp_error err = {.msg = ""};
    size_t size;
    unsigned char *buf = check_read_file(path, &size);
    if (!buf || gmlp_st_parse(buf, size, ref, &err) != GMLP_OK) {
        CHECK(0, "%s: cannot read reference: %s", path, buf ? err.msg : "unreadable");
        free(buf);
        return NULL;
    }
    return buf;
}

/* dir/NAME.ref.safetensors, as fixture_parse. */
static inline unsigned char *fixture_ref(const char *dir, const char *name, gmlp_st_file *ref)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.ref.safetensors", dir, name);
    return fixture_parse(path, ref);
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

/* The precision modes every fixture runs in besides FP32 (README
 * "Precision"), relative to the largest |value|: tol against the plain
 * float64 reference of timm / g-mlp-pytorch (with half weights at least the
 * storage's), and two checks against the float64 reference that rounds every
 * product's operands the same way (tools/precision_ref.py).  There the fp32
 * accumulation leaves ~1e-7, until one operand lies that close to a rounding
 * boundary and rounds the other way: its token's later operands then round
 * independently of the reference's, and its outputs differ by up to the
 * mode's whole error (seen on PoCL: 3.8e-4 in TF32, 2.6e-3 in BF16, on about
 * half the TF32 runs).  So each run's largest difference is only bounded
 * (tight: ~2.5x that), and what shows the rounding is the share of values
 * within FIXTURE_CLOSE of the reference over a suite: at least
 * FIXTURE_CLOSE_SHARE (PoCL: 83-98%; with the rounding left out of the
 * kernels, 0.5-9%; fixture_modes_summary). */
static const struct {
    gmlp_precision mode;
    const char *name;
    double tol, tight;
} fixture_modes[] = {{GMLP_PRECISION_TF32, "tf32", 2e-3, 1e-3},
                     {GMLP_PRECISION_FP16, "fp16", 2e-3, 1e-3},
                     {GMLP_PRECISION_BF16, "bf16", 1.5e-2, 6e-3}};
#define FIXTURE_MODES 3
#define FIXTURE_CLOSE 1e-5
#define FIXTURE_CLOSE_SHARE 0.5
/* Per mode: the values within FIXTURE_CLOSE of the mode's rounding
 * reference, and all values compared (fixture_compare_mode). */
static size_t fixture_close[FIXTURE_MODES], fixture_values[FIXTURE_MODES];

/* The share of each mode's values that matched its rounding reference to
 * fp32's accumulation, over the suite (none compared: nothing checked). */
static inline void fixture_modes_summary(const char *suite)
{
    for (int m = 0; m < FIXTURE_MODES; m++) {
        if (!fixture_values[m])
            continue;
        double share = (double)fixture_close[m] / (double)fixture_values[m];
        printf("%s %s: %zu of %zu values (%.1f%%) within %g of the %s rounding reference\n", suite,
               fixture_modes[m].name, fixture_close[m], fixture_values[m], 100 * share, FIXTURE_CLOSE,
               fixture_modes[m].name);
        CHECK(share >= FIXTURE_CLOSE_SHARE, "%s %s: only %.1f%% of the values within %g of the %s rounding reference: "
              "are the operands rounded?", suite, fixture_modes[m].name, 100 * share, FIXTURE_CLOSE,
              fixture_modes[m].name);
    }
}

/* Whether the precision modes run with storage s's weights: in the full tier
 * with both; in the quick tier (check_quick_tier) with the weights as stored
 * alone (fixture_storages[0]).  Each mode's programs are its own for each storage, the same
 * for every fixture, so the quick tier leaves out builds, not models: every
 * fixture still runs every mode, half weights still run every fixture in
 * FP32 (run_case), and each mode's half operands are gemm-precision's quick
 * sample (NT, half B: the linear layers' form). */
static inline int fixture_mode_storage_runs(int s)
{
    return s == 0 || !check_quick_tier();
}

/* dir/NAME.safetensors loaded with storage s's weights in precision mode;
 * NULL, with a failure recorded, when it does not load (want_refusal: a
 * context that must refuse the mode, GMLP_GEMM=clblast: the refusal
 * checked, NULL). */
static inline gmlp_model *fixture_load_mode(gmlp_context *ctx, const char *dir, const char *name, int s,
                                            gmlp_precision mode, int want_refusal)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.safetensors", dir, name);
    gmlp_load_options opts;
    gmlp_load_options_default(&opts);
    opts.weights = fixture_storages[s].weights;
    opts.precision = mode;
    gmlp_model *model = NULL;
    gmlp_status st = gmlp_model_load_ex(ctx, path, &opts, &model);
    if (want_refusal) {
        CHECK(st == GMLP_ERR_UNSUPPORTED && !model, "%s: precision %s with CLBlast: %s, want GMLP_ERR_UNSUPPORTED",
              name, gmlp_precision_name(mode), gmlp_status_string(st));
        gmlp_model_free(model);
        return NULL;
    }
    CHECK(st == GMLP_OK, "%s: load in %s: %s", name, gmlp_precision_name(mode), gmlp_last_error(ctx));
    gmlp_precision got = GMLP_PRECISION_AUTO;
    CHECK(st != GMLP_OK || (gmlp_model_precision(model, &got, NULL, 0) == GMLP_OK && got == mode),
          "%s: loaded in %s, runs %s", name, gmlp_precision_name(mode), gmlp_precision_name(got));
    return st == GMLP_OK ? model : NULL;
}

/* The precision modes' references of fixture NAME of folder dir:
 * dir/../precision/NAME.prec.safetensors (tools/precision_ref.py), parsed
 * into prec; the returned buffer backs its tensors.  NULL, with a failure
 * recorded, when it cannot be read. */
static inline unsigned char *fixture_prec(const char *dir, const char *name, gmlp_st_file *prec)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/../precision/%s.prec.safetensors", dir, name);
    return fixture_parse(path, prec);
}

/* Mode m's reference of what (logits, features) for storage s: the tensor
 * with the weights through half where the file has one (MODE.f16.WHAT),
 * else MODE.WHAT; NULL, with a failure recorded, if absent. */
static inline const gmlp_st_tensor *fixture_prec_find(const gmlp_st_file *prec, const char *name, int m, int s,
                                                      const char *what)
{
    char key[64];
    snprintf(key, sizeof key, "%s.%s.%s", fixture_modes[m].name, fixture_storages[s].name, what);
    const gmlp_st_tensor *t = gmlp_st_find(prec, key);
    snprintf(key, sizeof key, "%s.%s", fixture_modes[m].name, what);
    if (!t)
        t = gmlp_st_find(prec, key);
    CHECK(t && (t->dtype == GMLP_DT_F32 || t->dtype == GMLP_DT_F64), "%s: no %s in its precision references", name,
          key);
    return t && (t->dtype == GMLP_DT_F32 || t->dtype == GMLP_DT_F64) ? t : NULL;
}

/* got (n floats) in mode m with storage s against the plain float64
 * reference want (F64) and the mode's reference tight (F32 or F64), each
 * within its bound; prints both errors. */
static inline void fixture_compare_mode(const char *name, int s, int m, const char *what, const float *got,
                                        const gmlp_st_tensor *want, const gmlp_st_tensor *tight, const char *detail)
{
    double *w = fixture_f64(want), *t = malloc(want->numel * sizeof *t);
    double tol = fmax(fixture_modes[m].tol, fixture_storages[s].tol), tol_tight = fixture_modes[m].tight;
    CHECK(tight->numel == want->numel, "%s %s %s: %zu values in the mode's reference, %zu in the plain one", name,
          fixture_modes[m].name, what, tight->numel, want->numel);
    for (size_t i = 0; i < want->numel; i++) {
        if (i >= tight->numel) {
            t[i] = NAN;
        } else if (tight->dtype == GMLP_DT_F64) {
            memcpy(&t[i], (const char *)tight->data + i * sizeof(double), sizeof(double));
        } else {
            float f;
            memcpy(&f, (const char *)tight->data + i * sizeof f, sizeof f);
            t[i] = f;
        }
    }
    double e = rel_error(got, w, want->numel, 1e-6), et = rel_error(got, t, want->numel, 1e-6);
    double maxt = 1e-6;
    for (size_t i = 0; i < want->numel; i++)
        maxt = fmax(maxt, fabs(t[i]));
    size_t close = 0;
    for (size_t i = 0; i < want->numel; i++)
        close += fabs((double)got[i] - t[i]) <= FIXTURE_CLOSE * maxt;
    fixture_close[m] += close;
    fixture_values[m] += want->numel;
    printf("%-24s %s %s %-8s max rel error %.2e, against its rounding reference %.2e (%zu of %zu within %g)%s\n",
           name, fixture_storages[s].name, fixture_modes[m].name, what, e, et, close, want->numel, FIXTURE_CLOSE,
           detail);
    CHECK(e <= tol, "%s %s %s %s: relative error %.3g > %g", name, fixture_storages[s].name, fixture_modes[m].name,
          what, e, tol);
    CHECK(et <= tol_tight, "%s %s %s %s: relative error %.3g against the %s reference > %g", name,
          fixture_storages[s].name, fixture_modes[m].name, what, et, fixture_modes[m].name, tol_tight);
    free(w), free(t);
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
