/* Hugging Face model folders (tests/data/hf, written by timm's save_for_hf):
 * each loads through gmlp_model_load, preprocesses its PNGs as timm's eval
 * transform did (PIL, bit-exact) and classifies them to timm's float64
 * logits; labels and sources as config.json gives them; the conflict
 * fixture's disagreements; every refusal of a folder, and the broken
 * config.json corpus (tests/data/broken/config).
 *   test_hf HF_DIR BROKEN_CONFIG_DIR */
#include <jansson.h>
#include <math.h>
#include <stb/stb_image.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"

static const char *const interp_names[] = {"bicubic", "bilinear", "nearest", "box", "hamming", "lanczos"};
static const char *const cases[] = {"mixer_miil", "gmlp_grey_nocrop", "gmlp_wide", "gmlp_nearest_pad",
                                    "gmlp_squash", "mixer_border", "gmlp_conflict"};

/* config.json's label names as timm reads them: the top level's, else pretrained_cfg's. */
static json_t *config_labels(json_t *root)
{
    json_t *l = json_object_get(root, "label_names");
    return l ? l : json_object_get(json_object_get(root, "pretrained_cfg"), "label_names");
}

static void check_labels(const char *name, const gmlp_model *m, const gmlp_config *cfg, const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/config.json", dir, name);
    json_t *root = json_load_file(path, 0, NULL);
    CHECK(root != NULL, "%s: cannot read", path);
    json_t *labels = root ? config_labels(root) : NULL;
    /* the conflict fixture's labels come from the metadata */
    const char *meta = gmlp_model_metadata(m, "gmlp.labels");
    for (int i = 0; i < cfg->num_classes; i++) {
        const char *got = gmlp_model_label(m, i);
        char want[256] = "";
        if (meta) {
            const char *p = meta;
            for (int k = 0; k < i && p; k++)
                p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
            snprintf(want, sizeof want, "%.*s", p ? (int)strcspn(p, "\n") : 0, p ? p : "");
        } else if (labels) {
            snprintf(want, sizeof want, "%s", json_string_value(json_array_get(labels, (size_t)i)));
        }
        if (labels || meta)
            CHECK(got && !strcmp(got, want), "%s: label %d is '%s', expected '%s'", name, i, got ? got : "(null)",
                  want);
        else
            CHECK(got == NULL, "%s: label %d is '%s' without label names", name, i, got);
    }
    gmlp_source want = meta ? GMLP_SOURCE_METADATA : labels ? GMLP_SOURCE_CONFIG_JSON : GMLP_SOURCE_DEFAULT;
    CHECK(gmlp_model_config_source(m, "labels") == want, "%s: labels source %d, expected %d", name,
          gmlp_model_config_source(m, "labels"), want);
    json_decref(root);
}

/* One folder against its reference: preprocessing, logits, labels, sources. */
static void check_case(gmlp_context *ctx, const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    gmlp_model *m = NULL;
    gmlp_status st = gmlp_model_load(ctx, path, &m);
    CHECK(st == GMLP_OK, "%s: %s", name, gmlp_last_error(ctx));
    gmlp_st_file ref;
    unsigned char *refbuf = fixture_ref(dir, name, &ref);
    if (st != GMLP_OK || !refbuf) {
        gmlp_model_free(m);
        free(refbuf);
        return;
    }
    gmlp_config cfg = {.size = sizeof cfg};
    gmlp_model_config(m, &cfg);
    const gmlp_st_tensor *images = gmlp_st_find(&ref, "images"), *logits = gmlp_st_find(&ref, "logits");
    const char *inputs = gmlp_st_meta(&ref, "inputs");
    int batch = images ? (int)images->shape[0] : 0;
    CHECK(images && logits && inputs && images->ndim == 4 && images->shape[1] == cfg.in_chans &&
              images->shape[2] == cfg.img_h && images->shape[3] == cfg.img_w && logits->shape[1] == cfg.num_classes,
          "%s: the reference does not fit the model (%dx%dx%d, %d classes)", name, cfg.in_chans, cfg.img_h, cfg.img_w,
          cfg.num_classes);
    size_t n = (size_t)cfg.in_chans * cfg.img_h * cfg.img_w, plane = (size_t)cfg.img_h * cfg.img_w;
    float *x = calloc(n * (size_t)(batch ? batch : 1), sizeof *x), *want = calloc(n, sizeof *want);
    float *out = calloc((size_t)(batch ? batch : 1) * cfg.num_classes, sizeof *out);
    const char *p = inputs;
    double maxd = 0;
    for (int b = 0; images && b < batch && p; b++) {
        char image[512];
        snprintf(image, sizeof image, "%s/%.*s", dir, (int)strcspn(p, "\n"), p);
        p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
        int w, h, ch;
        unsigned char *px = stbi_load(image, &w, &h, &ch, 0);
        CHECK(px != NULL, "%s: %s", image, stbi_failure_reason());
        if (!px)
            continue;
        st = gmlp_preprocess_rgb8(&cfg, px, w, h, ch, x + (size_t)b * n);
        CHECK(st == GMLP_OK, "%s: preprocess %s: %s", name, image, gmlp_last_error(NULL));
        memcpy(want, images->data + (size_t)b * n * sizeof *want, n * sizeof *want);
        /* in 8-bit pixel units: PNG through PIL is reproduced exactly, up to float rounding */
        for (size_t i = 0; i < n; i++)
            maxd = fmax(maxd, fabs((double)x[(size_t)b * n + i] - want[i]) * cfg.std[i / plane]);
        stbi_image_free(px);
    }
    CHECK(maxd <= 1e-6, "%s: preprocessing differs from timm's by %.3g (pixel units / 255)", name, maxd);
    double *ref_logits = logits ? fixture_f64(logits) : NULL;
    st = batch ? gmlp_classify(m, x, (size_t)batch, out) : GMLP_ERR_INVALID_ARGUMENT;
    CHECK(st == GMLP_OK, "%s: classify: %s", name, gmlp_last_error(ctx));
    double rel = ref_logits ? rel_error(out, ref_logits, (size_t)batch * cfg.num_classes, 1e-3) : INFINITY;
    printf("%-18s %dx%dx%d %-8s crop %.3g mode %d: preprocessing |diff| %.2g, logits rel. error %.2g\n", name,
           cfg.in_chans, cfg.img_h, cfg.img_w,
           interp_names[cfg.interpolation],
           cfg.crop_pct, cfg.crop_mode, maxd, rel);
    CHECK(rel <= 1e-4, "%s: logits differ from timm's by %.3g relative", name, rel);
    check_labels(name, m, &cfg, dir);
    /* every preprocessing value comes from config.json (timm writes them all), but the metadata's */
    static const char *const keys[] = {"img_size", "mean", "std", "crop_pct", "crop_mode", "interpolation"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        char meta_key[64];
        snprintf(meta_key, sizeof meta_key, "gmlp.%s", keys[k]);
        gmlp_source want_src = gmlp_model_metadata(m, meta_key) ? GMLP_SOURCE_METADATA : GMLP_SOURCE_CONFIG_JSON;
        CHECK(gmlp_model_config_source(m, keys[k]) == want_src, "%s: source of %s is %d, expected %d", name,
              keys[k], gmlp_model_config_source(m, keys[k]), want_src);
    }
    free(ref_logits);
    free(x);
    free(want);
    free(out);
    gmlp_st_free(&ref);
    free(refbuf);
    gmlp_model_free(m);
}

/* gmlp_conflict: the metadata wins, and the disagreements are described. */
static void check_conflict(gmlp_context *ctx, const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/gmlp_conflict", dir);
    gmlp_model *m;
    if (gmlp_model_load(ctx, path, &m) != GMLP_OK) {
        CHECK(0, "gmlp_conflict: %s", gmlp_last_error(ctx));
        return;
    }
    static const struct {
        const char *key, *fragment; /* NULL: they agree, or one is absent */
    } want[] = {
        {"mean", "gmlp.mean '0.5,0.4,0.3' (used) and config.json pretrained_cfg.mean '0.485,0.456,0.406'"},
        {"interpolation", "gmlp.interpolation 'bilinear' (used) and config.json pretrained_cfg.interpolation "
                          "'bicubic'"},
        {"labels", "from class 2 on: 'bird' and 'fish'"},
        {"std", NULL},
        {"crop_pct", NULL},
        {"img_size", NULL},
        {"crop_mode", NULL},
        {"nonsense", NULL},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const char *c = gmlp_model_config_conflict(m, want[i].key);
        printf("conflict %-14s %s\n", want[i].key, c ? c : "(none)");
        if (want[i].fragment)
            CHECK(c && strstr(c, want[i].fragment), "gmlp_conflict: %s: '%s' lacks '%s'", want[i].key,
                  c ? c : "(none)", want[i].fragment);
        else
            CHECK(c == NULL, "gmlp_conflict: %s: unexpected conflict '%s'", want[i].key, c);
    }
    /* a user's value wins over both */
    CHECK(gmlp_model_override(m, "mean", "0.1,0.2,0.3") == GMLP_OK, "override: %s", gmlp_last_error(ctx));
    CHECK(gmlp_model_config_source(m, "mean") == GMLP_SOURCE_USER, "mean's source after an override");
    gmlp_config cfg = {.size = sizeof cfg};
    gmlp_model_config(m, &cfg);
    CHECK(cfg.mean[1] == 0.2f, "override: mean[1] %g", cfg.mean[1]);
    /* every filter timm's eval transform takes by name; its training-only "random" is refused */
    for (int i = 0; i < (int)(sizeof interp_names / sizeof *interp_names); i++) {
        CHECK(gmlp_model_override(m, "interpolation", interp_names[i]) == GMLP_OK, "override %s: %s",
              interp_names[i], gmlp_last_error(ctx));
        gmlp_model_config(m, &cfg);
        CHECK(cfg.interpolation == i, "override %s: interpolation %d", interp_names[i], cfg.interpolation);
    }
    CHECK(gmlp_model_override(m, "interpolation", "random") == GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(ctx), "lanczos"),
          "override interpolation 'random': %s", gmlp_last_error(ctx));
    CHECK(gmlp_model_config_conflict(NULL, "mean") == NULL, "conflict of a NULL model");
    gmlp_model_free(m);
}

static int contains_nocase(const char *hay, const char *needle)
{
    for (size_t n = strlen(needle); *hay; hay++)
        if (!strncasecmp(hay, needle, n))
            return 1;
    return 0;
}

static void expect_refusal(gmlp_context *ctx, const char *what, const char *path, gmlp_status want,
                           const char *fragment)
{
    gmlp_model *m = (gmlp_model *)1;
    gmlp_status st = gmlp_model_load(ctx, path, &m);
    const char *msg = gmlp_last_error(ctx);
    printf("%-30s %-22s %s\n", what, gmlp_status_string(st), msg);
    CHECK(st == want && m == NULL, "%s: expected %s, got %s", what, gmlp_status_string(want), gmlp_status_string(st));
    CHECK(contains_nocase(msg, fragment), "%s: message lacks '%s': %s", what, fragment, msg);
    if (st == GMLP_OK)
        gmlp_model_free(m);
}

static int copy_file(const char *from, const char *to)
{
    size_t size;
    unsigned char *buf = check_read_file(from, &size);
    FILE *f = buf ? fopen(to, "wb") : NULL;
    int ok = f && fwrite(buf, 1, size, f) == size;
    if (f)
        ok &= fclose(f) == 0;
    free(buf);
    return ok;
}

/* Folders that are refused: the weights only as a pickle, no weights, and
 * each broken config.json beside gmlp_wide's weights. */
static void check_refusals(gmlp_context *ctx, const char *dir, const char *broken)
{
    char path[1024], tmp[] = "/tmp/gmlp_test_hf_XXXXXX", weights[1100], config[1100];
    snprintf(path, sizeof path, "%s/bin_only", dir);
    expect_refusal(ctx, "bin_only", path, GMLP_ERR_UNSUPPORTED, "tools/export_vision.py");
    snprintf(path, sizeof path, "%s/images", dir);
    expect_refusal(ctx, "no model.safetensors", path, GMLP_ERR_IO, "without model.safetensors (looked for");
    if (!mkdtemp(tmp)) {
        CHECK(0, "mkdtemp failed");
        return;
    }
    snprintf(weights, sizeof weights, "%s/model.safetensors", tmp);
    snprintf(config, sizeof config, "%s/config.json", tmp);
    snprintf(path, sizeof path, "%s/gmlp_wide/model.safetensors", dir);
    CHECK(copy_file(path, weights), "cannot copy %s", path);
    /* a config.json over the size cap, made here rather than stored (sparse) */
    FILE *f = fopen(config, "wb");
    int made = f && fputs("{", f) >= 0 && fseek(f, (16L << 20) + 1, SEEK_SET) == 0 && fputs("}", f) >= 0;
    if (f)
        made &= fclose(f) == 0;
    CHECK(made, "cannot write %s", config);
    expect_refusal(ctx, "config.json over 16 MiB", tmp, GMLP_ERR_FORMAT, "config.json is 16777218 bytes");
    /* the weights without config.json: this non-square model then needs gmlp.img_size */
    unlink(config);
    expect_refusal(ctx, "no config.json (non-square)", tmp, GMLP_ERR_FORMAT, "gmlp.img_size");
    /* a config.json that is there but cannot be read is no missing one */
    CHECK(mkdir(config, 0700) == 0, "cannot make %s", config);
    expect_refusal(ctx, "config.json a directory", tmp, GMLP_ERR_IO, "config.json': not a regular file");
    rmdir(config);
    CHECK(symlink("config.json", config) == 0, "cannot link %s", config);
    expect_refusal(ctx, "config.json a link loop", tmp, GMLP_ERR_IO, "config.json': too many levels");
    unlink(config);

    char line[1024], file[256], status[64], fragment[256];
    snprintf(path, sizeof path, "%s/manifest.txt", broken);
    FILE *mf = fopen(path, "r");
    CHECK(mf != NULL, "cannot open %s", path);
    int n = 0;
    while (mf && fgets(line, sizeof line, mf)) {
        fragment[0] = 0;
        if (sscanf(line, "%255[^\t]\t%63[^\t\n]\t%255[^\t\n]", file, status, fragment) < 2)
            continue;
        snprintf(path, sizeof path, "%s/%s", broken, file);
        CHECK(copy_file(path, config), "cannot copy %s", path);
        if (strcmp(status, "OK")) {
            expect_refusal(ctx, file, tmp, strcmp(status, "FORMAT") ? GMLP_ERR_UNSUPPORTED : GMLP_ERR_FORMAT,
                           fragment);
        } else {
            gmlp_model *m = NULL;
            CHECK(gmlp_model_load(ctx, tmp, &m) == GMLP_OK, "%s: %s", file, gmlp_last_error(ctx));
            gmlp_config cfg = {.size = sizeof cfg};
            if (m && gmlp_model_config(m, &cfg) == GMLP_OK)
                CHECK(cfg.img_h == 24 && cfg.img_w == 40, "%s: image %dx%d", file, cfg.img_h, cfg.img_w);
            gmlp_model_free(m);
        }
        n++;
    }
    if (mf)
        fclose(mf);
    CHECK(n >= 30, "only %d broken configs", n);

    /* a g-mlp-pytorch gMLPVision and a timm ResMLP (both 6 classes) in a
     * folder: config.json's preprocessing and labels apply, and a name of
     * another family is a contradiction */
    static const struct {
        const char *fixture, *name, *other, *refusal;
        int arch;
    } folders[] = {
        {"gmlpvision_rgb", "gmlp_vision", "gmlp_s16_224",
         "'gmlp_s16_224' is a timm gMLP, but the weights are a g-mlp-pytorch gMLPVision", GMLP_ARCH_GMLP_VISION},
        {"resmlp_rgb", "resmlp_24_224", "mixer_b16_224",
         "'mixer_b16_224' is a timm MLP-Mixer, but the weights are a timm ResMLP", GMLP_ARCH_RESMLP},
    };
    for (size_t i = 0; i < sizeof folders / sizeof *folders; i++) {
        snprintf(path, sizeof path, "%s/../e2e/%s.safetensors", dir, folders[i].fixture);
        CHECK(copy_file(path, weights), "cannot copy %s", path);
        for (int other = 0; other < 2; other++) {
            f = fopen(config, "wb");
            CHECK(f && fprintf(f, "{\"architecture\": \"%s\", \"num_classes\": 6, \"label_names\": [\"a\", "
                                  "\"b\", \"c\", \"d\", \"e\", \"f\"], \"pretrained_cfg\": {\"mean\": [0.1, 0.2, "
                                  "0.3], \"interpolation\": \"bilinear\"}}",
                               other ? folders[i].other : folders[i].name) > 0,
                  "cannot write %s", config);
            if (f)
                fclose(f);
            if (other) {
                expect_refusal(ctx, folders[i].fixture, tmp, GMLP_ERR_FORMAT, folders[i].refusal);
                continue;
            }
            gmlp_model *m = NULL;
            gmlp_config cfg = {.size = sizeof cfg};
            CHECK(gmlp_model_load(ctx, tmp, &m) == GMLP_OK, "%s folder: %s", folders[i].fixture,
                  gmlp_last_error(ctx));
            if (m && gmlp_model_config(m, &cfg) == GMLP_OK)
                CHECK(cfg.arch == folders[i].arch && cfg.mean[2] == 0.3f && cfg.interpolation == GMLP_INTERP_BILINEAR &&
                          !strcmp(gmlp_model_label(m, 5), "f"),
                      "%s folder: config.json's values not applied", folders[i].fixture);
            gmlp_model_free(m);
        }
    }
    unlink(config);
    unlink(weights);
    rmdir(tmp);
}

/* Label lists written with CRLF line ends lose the CR; empty names stay. */
static void check_label_forms(gmlp_context *ctx, const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/gmlp_wide", dir);
    gmlp_model *m = NULL;
    CHECK(gmlp_model_load(ctx, path, &m) == GMLP_OK, "gmlp_wide: %s", gmlp_last_error(ctx));
    if (!m)
        return;
    CHECK(gmlp_model_override(m, "labels", "cat\r\n\r\nbird\r\nfish\r\n") == GMLP_OK, "CRLF labels: %s",
          gmlp_last_error(ctx));
    static const char *const want[] = {"cat", "", "bird", "fish"};
    for (int i = 0; i < 4; i++)
        CHECK(!strcmp(gmlp_model_label(m, i), want[i]), "CRLF label %d is '%s', expected '%s'", i,
              gmlp_model_label(m, i), want[i]);
    gmlp_model_free(m);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        printf("usage: test_hf HF_DIR BROKEN_CONFIG_DIR\n");
        return 2;
    }
    gmlp_context *ctx = check_context();
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_case(ctx, argv[1], cases[i]);
    check_conflict(ctx, argv[1]);
    check_label_forms(ctx, argv[1]);
    check_refusals(ctx, argv[1], argv[2]);
    gmlp_context_destroy(ctx);
    return check_summary("test_hf");
}
