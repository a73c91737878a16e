/* GEMM tuning through the public API, on a small random gMLP: gmlp_tune
 * writes the device's tuning file; a new context uses it and gives logits
 * within 1e-4 of the untuned run; corrupt, truncated, other-device,
 * unknown-tiling files, and files of the format before tilings had names,
 * are ignored with one log line and change nothing;
 * a tuned CLBlast win runs CLBlast, and GMLP_GEMM=kernel still forces the
 * kernel; the device report names the tuned choices.  argv[1]: a cache directory of the test's own (the tuning file
 * would otherwise change what the other tests run). */
#include <dirent.h>
#include <jansson.h>
#include <string.h>

#include "check.h"
#include "gmlp_diag.h"

#define BATCH 3

static const char *cache_dir;
static char tune_path[2048];
static char logged[8192];
static int tune_lines;

static void on_log(void *user, gmlp_log_level level, const char *msg)
{
    (void)user;
    (void)level;
    if (strstr(msg, "GEMM tuning file")) {
        tune_lines++;
        snprintf(logged + strlen(logged), sizeof logged - strlen(logged), "%s\n", msg);
    }
}

static gmlp_context *context(int profiling)
{
    gmlp_context_options o;
    gmlp_context_options_default(&o);
    o.cache_dir = cache_dir;
    o.log = on_log;
    o.log_level = GMLP_LOG_INFO;
    o.profiling = profiling;
    logged[0] = 0;
    tune_lines = 0;
    return check_context_ex(&o);
}

static void *model_data;
static size_t model_size;
static size_t n_logits;

/* Logits of the model on fixed images in a fresh context; *clblast_rows: the
 * profile rows that name CLBlast (profiling on). */
static float *logits(int *clblast_rows)
{
    gmlp_context *ctx = context(1);
    gmlp_model *m = NULL;
    float *out = malloc(n_logits * sizeof *out);
    size_t n_in = (size_t)BATCH * 3 * 32 * 32;
    float *img = malloc(n_in * sizeof *img);
    for (size_t i = 0; i < n_in; i++)
        img[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    CHECK(gmlp_model_load_memory(ctx, model_data, model_size, &m) == GMLP_OK, "load: %s", gmlp_last_error(ctx));
    CHECK(m && gmlp_classify(m, img, BATCH, out) == GMLP_OK, "classify: %s", gmlp_last_error(ctx));
    gmlp_diag_kernel_time rows[64];
    size_t n = 0;
    CHECK(gmlp_diag_profile(ctx, rows, 64, &n) == GMLP_OK, "profile: %s", gmlp_last_error(ctx));
    *clblast_rows = 0;
    for (size_t i = 0; i < n && i < 64; i++)
        *clblast_rows += strstr(rows[i].name, "CLBlast") != NULL;
    gmlp_model_free(m);
    gmlp_context_destroy(ctx);
    free(img);
    return out;
}

static double max_rel(const float *a, const float *b)
{
    double worst = 0, scale = 1e-3;
    for (size_t i = 0; i < n_logits; i++)
        scale = fabs(b[i]) > scale ? fabs(b[i]) : scale;
    for (size_t i = 0; i < n_logits; i++) {
        double d = fabs((double)a[i] - b[i]);
        worst = d > worst || isnan(d) ? (isnan(d) ? INFINITY : d) : worst;
    }
    return worst / scale;
}

static void find_tune_file(void)
{
    DIR *d = opendir(cache_dir);
    struct dirent *e;
    tune_path[0] = 0;
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 10 && !strcmp(e->d_name + n - 10, ".tune.json"))
            snprintf(tune_path, sizeof tune_path, "%s/%s", cache_dir, e->d_name);
    }
    if (d)
        closedir(d);
}

static void write_file(const char *bytes, size_t n)
{
    FILE *f = fopen(tune_path, "wb");
    CHECK(f && fwrite(bytes, 1, n, f) == n, "writing %s", tune_path);
    if (f)
        fclose(f);
}

static int steps, timed_kernels, winners, rejected;

static void on_progress(void *user, const gmlp_tune_step *s)
{
    (void)user;
    if (s->winner) {
        winners++;
        printf("winner %-28s %-26s %10.1f us\n", s->group, s->candidate, s->us);
    } else {
        steps++;
        timed_kernels += !s->skipped && !strncmp(s->candidate, "kernel", 6);
        rejected += s->skipped && !strcmp(s->skipped, "wrong result");
    }
}

/* The tuned file with every float group's winner replaced: CLBlast (tiling
 * NULL) or the kernel with that tiling; their count in *n. */
static char *float_winners(const char *text, const char *tiling, int *n)
{
    json_t *root = json_loads(text, 0, NULL), *w;
    size_t i;
    *n = 0;
    json_array_foreach(json_object_get(root, "winners"), i, w)
    {
        if (!strcmp(json_string_value(json_object_get(w, "a")), "float") &&
            !strcmp(json_string_value(json_object_get(w, "b")), "float")) {
            json_object_set_new(w, "backend", json_string(tiling ? "kernel" : "clblast"));
            if (tiling)
                json_object_set_new(w, "tiling", json_string(tiling));
            else
                json_object_del(w, "tiling");
            (*n)++;
        }
    }
    char *out = json_dumps(root, 0);
    json_decref(root);
    return out;
}

/* The device report's float GEMM line, read with the tuning file: it names
 * want and not unwanted (NULL: anything goes). */
static void check_report(const char *want, const char *unwanted)
{
    const char *old = getenv("GMLP_CACHE_DIR");
    char *saved = old ? strdup(old) : NULL;
    setenv("GMLP_CACHE_DIR", cache_dir, 1); /* gmlp_device_report's context reads the tuning file from there */
    static char report[1 << 15];
    size_t n = gmlp_device_report(NULL, report, sizeof report);
    char *line = n ? strstr(report, "gmlp_gemm (float)") : NULL, *end = line ? strchr(line, '\n') : NULL;
    if (end)
        *end = 0;
    printf("%s\n", line ? line : "");
    CHECK(line && strstr(line, want) && !(unwanted && strstr(line, unwanted)), "report: want '%s', not '%s': %s",
          want, unwanted ? unwanted : "", line ? line : gmlp_last_error(NULL));
    if (saved)
        setenv("GMLP_CACHE_DIR", saved, 1);
    else
        unsetenv("GMLP_CACHE_DIR");
    free(saved);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: test_tuning CACHE_DIR\n");
        return 2;
    }
    cache_dir = argv[1];
    unsetenv("GMLP_GEMM");
    const gmlp_config cfg = {.arch = GMLP_ARCH_GMLP, .in_chans = 3, .img_h = 32, .img_w = 32, .patch_h = 8,
                             .patch_w = 8, .dim = 32, .depth = 2, .ffn_dim = 64, .num_classes = 10, .heads = 1};
    n_logits = (size_t)BATCH * 10;
    CHECK(gmlp_diag_random_model(&cfg, 7, &model_data, &model_size) == GMLP_OK, "random model");
    find_tune_file();
    if (tune_path[0])
        remove(tune_path); /* a previous run's */

    int cb;
    float *plain = logits(&cb);
    CHECK(tune_lines == 0 && cb == 0, "no tuning file: no log line, no CLBlast (%d lines)", tune_lines);

    gmlp_context *ctx = context(1);
    gmlp_model *m = NULL;
    CHECK(gmlp_model_load_memory(ctx, model_data, model_size, &m) == GMLP_OK, "load");
    CHECK(gmlp_tune(ctx, m, 0, NULL, NULL) == GMLP_ERR_INVALID_ARGUMENT, "batch 0 refused");
    CHECK(gmlp_tune(NULL, m, 1, NULL, NULL) == GMLP_ERR_INVALID_ARGUMENT, "NULL context refused");
    gmlp_status st = gmlp_tune(ctx, m, BATCH, on_progress, NULL);
    CHECK(st == GMLP_OK, "gmlp_tune: %s", gmlp_last_error(ctx));
    CHECK(steps >= 20 && winners >= 2 && rejected == 0, "%d candidates, %d winners, %d wrong results", steps,
          winners, rejected);
    CHECK(timed_kernels >= 10, "%d kernel candidates timed", timed_kernels);
    gmlp_model_free(m);
    gmlp_context_destroy(ctx);
    find_tune_file();
    CHECK(tune_path[0] != 0, "tuning file written in %s", cache_dir);
    char *text = NULL;
    FILE *f = fopen(tune_path, "rb");
    long len = 0;
    if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = calloc((size_t)len + 1, 1)) && fread(text, 1, (size_t)len, f) != (size_t)len)
        len = 0;
    if (f)
        fclose(f);
    CHECK(text && len > 0, "reading %s", tune_path);
    if (!text || len <= 0)
        return check_summary("tuning");

    float *tuned = logits(&cb);
    CHECK(tune_lines == 1 && strstr(logged, "used"), "tuned context logs its file: %s", logged);
    CHECK(max_rel(tuned, plain) <= 1e-4, "tuned logits within 1e-4 of untuned: %g", max_rel(tuned, plain));
    free(tuned);

    /* unusable files: ignored, one log line, exactly the untuned logits */
    char *other = strdup(text);
    char *dev = strstr(other, "\"device\"");
    if (dev && (dev = strchr(dev + 8, '"')))
        dev[1] = dev[1] == 'X' ? 'Y' : 'X'; /* another device's name */
    int n_float;
    /* 16 work-items a group: every device's compiler allows that (rusticl 32) */
    const char *known = "tiled_16x16x4_4x4";
    char *tiling = float_winners(text, "tiled_96x64x8_4x4", &n_float);
    char *v1 = strdup(text); /* the format before tilings had names */
    char *version = strstr(v1, "gmlp-tune-2");
    if (version)
        version[strlen("gmlp-tune-")] = '1';
    struct {
        const char *what, *bytes;
        size_t n;
        const char *why; /* in the log line; NULL: any */
    } bad[] = {
        {"truncated", text, (size_t)len / 2, NULL},
        {"empty", text, 0, NULL},
        {"garbage", "\x7f\x45\x4c\x46\x01\x01\x01\x00\xff\xfe", 10, NULL},
        {"another device", other, strlen(other), NULL},
        {"unknown tiling", tiling, strlen(tiling), NULL},
        {"format 1", v1, strlen(v1), "tune again"},
        {"deep nesting", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", 60, NULL},
        {"wrong root", "[1, 2, 3]", 9, NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        write_file(bad[i].bytes, bad[i].n);
        float *got = logits(&cb);
        CHECK(tune_lines == 1 && strstr(logged, "ignored") && (!bad[i].why || strstr(logged, bad[i].why)),
              "%s file: one 'ignored' line, got %d: %s", bad[i].what,
              tune_lines, logged);
        CHECK(!memcmp(got, plain, n_logits * sizeof *got) && cb == 0, "%s file: the untuned logits", bad[i].what);
        free(got);
    }
    CHECK(n_float > 0, "the tuned file has float groups");
    CHECK(strstr(text, "\"tiling\": \"") != NULL, "the tuned file names its tilings");

    /* every float group tuned to one known tiling: used, no CLBlast */
    int n_clblast;
    char *kern = float_winners(text, known, &n_clblast);
    write_file(kern, strlen(kern));
    float *got = logits(&cb);
    CHECK(tune_lines == 1 && strstr(logged, "used") && cb == 0, "kernel-tiling file used, no CLBlast: %s", logged);
    CHECK(max_rel(got, plain) <= 1e-4, "%s-tuned logits within 1e-4: %g", known, max_rel(got, plain));
    check_report("tiled_16x16x4_4x4 (tuned)", "CLBlast");
    check_report("tuned", NULL);
    free(got);
    free(kern);

    /* every float group tuned to CLBlast: CLBlast runs, unless the kernel is
     * forced; a build without CLBlast runs the defaults instead */
    char *clb = float_winners(text, NULL, &n_clblast);
    write_file(clb, strlen(clb));
    got = logits(&cb);
    CHECK(n_clblast > 0 && tune_lines == 1 && strstr(logged, "used"), "CLBlast file used: %s", logged);
    if (GMLP_HAVE_CLBLAST) {
        CHECK(cb > 0, "tuned CLBlast winners run CLBlast");
        check_report("CLBlast (tuned)", known);
    } else {
        printf("SKIP: tuned CLBlast winners running CLBlast: built without CLBlast (the kernel's defaults checked)\n");
        CHECK(cb == 0, "built without CLBlast, its tuned winners run the kernel (%d CLBlast rows)", cb);
        check_report("NT: ", "CLBlast");
    }
    CHECK(max_rel(got, plain) <= 1e-4, "CLBlast-tuned logits within 1e-4: %g", max_rel(got, plain));
    free(got);
    setenv("GMLP_GEMM", "kernel", 1);
    got = logits(&cb);
    CHECK(cb == 0, "GMLP_GEMM=kernel forces the kernel over tuned CLBlast winners (%d CLBlast rows)", cb);
    CHECK(max_rel(got, plain) <= 1e-4, "forced-kernel logits within 1e-4: %g", max_rel(got, plain));
    check_report("NT: ", "CLBlast");
    free(got);
    unsetenv("GMLP_GEMM");

    /* a causal language model: its whole-sequence and decoding-step shapes */
    const gmlp_config lm = {.arch = GMLP_ARCH_LM, .vocab_size = 40, .seq_len = 24, .dim = 32, .depth = 1,
                            .ffn_dim = 64, .causal = 1, .heads = 1};
    void *lm_data;
    size_t lm_size;
    CHECK(gmlp_diag_random_model(&lm, 3, &lm_data, &lm_size) == GMLP_OK, "random LM: %s", gmlp_last_error(NULL));
    ctx = context(1);
    m = NULL;
    winners = steps = rejected = 0;
    CHECK(gmlp_model_load_memory(ctx, lm_data, lm_size, &m) == GMLP_OK, "LM load: %s", gmlp_last_error(ctx));
    CHECK(m && gmlp_tune(ctx, m, 2, on_progress, NULL) == GMLP_OK, "LM tune: %s", gmlp_last_error(ctx));
    CHECK(winners >= 2 && rejected == 0, "LM: %d winners, %d wrong results", winners, rejected);
    gmlp_model_free(m);
    gmlp_context_destroy(ctx);
    free(lm_data);

    write_file(text, (size_t)len); /* the image model's results again, for a look after the test */
    free(clb);
    free(other);
    free(tiling);
    free(v1);
    free(text);
    free(plain);
    free(model_data);
    return check_summary("tuning");
}
