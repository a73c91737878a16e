/* The files of tests/data through the safetensors parser and the config
 * inference, as gmlp_model_load takes them, without any OpenCL device (so
 * valgrind can run it): every valid fixture (each tensor converts; every
 * truncation refused), the whole broken-file corpus (status and message;
 * the parser-level cases refused by the parser itself, with nothing left
 * behind) and the fuzz regressions (each with its manifest's verdict).
 * Hand-built buffers: test_safetensors_parser. */
#include <dirent.h>
#include <jansson.h>
#include <string.h>
#include <strings.h>

#include "check.h"
#include "format/safetensors.h"
#include "model/model.h"

/* Parser, then config inference and tensor checks, as gmlp_model_load does. */
static gmlp_status validate(const unsigned char *buf, size_t size, gmlp_error *err)
{
    gmlp_st_file f;
    gmlp_status st = gmlp_st_parse(buf, size, &f, err);
    if (st != GMLP_OK)
        return st;
    gmlp_config cfg = {.size = sizeof cfg};
    st = gmlp_config_infer(&f, NULL, &cfg, err);
    if (st == GMLP_OK)
        st = gmlp_config_check_tensors(&f, &cfg, err);
    gmlp_st_free(&f);
    return st;
}

/* Each tensor of a parsed file converts to float exactly when it is F32,
 * F16 or BF16. */
static int converts(const gmlp_st_file *f)
{
    int ok = 1;
    for (size_t k = 0; k < f->n_tensors; k++) {
        const gmlp_st_tensor *t = &f->tensors[k];
        float *dst = malloc((t->numel ? t->numel : 1) * sizeof *dst);
        int want = t->dtype == GMLP_DT_F32 || t->dtype == GMLP_DT_F16 || t->dtype == GMLP_DT_BF16 ? 0 : -1;
        ok &= dst && gmlp_st_to_f32(t, dst) == want;
        free(dst);
    }
    return ok;
}

static void test_fixtures(const char *dir)
{
    static const char *const names[] = {"gmlp_rgb", "gmlp_gray_f16", "gmlp_nonsquare_bf16", "gmlp_headless",
                                        "mixer_rgb", "mixer_gray_batch5", "gmlp_s16_tiny_like"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char path[1024];
        gmlp_error err = {.msg = ""};
        snprintf(path, sizeof path, "%s/e2e/%s.safetensors", dir, names[i]);
        size_t size;
        unsigned char *buf = check_read_file(path, &size);
        CHECK(buf && validate(buf, size, &err) == GMLP_OK, "%s: %s", names[i], err.msg);
        gmlp_st_file f;
        if (buf && gmlp_st_parse(buf, size, &f, &err) == GMLP_OK) {
            CHECK(converts(&f), "%s: a tensor does not convert as its dtype says", names[i]);
            gmlp_st_free(&f);
        }
        /* every strict prefix of a valid file is refused, none crashes; each
         * copied to its exact size so that a read past the end shows under
         * ASan or valgrind */
        int refused = 0, tried = 0;
        for (size_t cut = 0; buf && cut < size; cut += 1 + size / 97, tried++) {
            unsigned char *p = malloc(cut ? cut : 1);
            memcpy(p, buf, cut);
            refused += validate(p, cut, &err) != GMLP_OK;
            free(p);
        }
        CHECK(refused == tried, "%s: %d of %d truncations accepted", names[i], tried - refused, tried);
        free(buf);
    }
}

/* Corpus cases the parser itself must refuse; the others are valid
 * safetensors that only the config inference refuses. */
static int parser_level(const char *file)
{
    static const char *const prefixes[] = {"empty", "trunc_", "header_", "offsets_", "length_mismatch",
                                           "dtype_unknown", "shape_", "entry_not_object", "duplicate_name", "not_st_",
                                           "metadata_"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (!strncmp(file, prefixes[i], strlen(prefixes[i])))
            return 1;
    return 0;
}

/* strcasestr, which Windows' C runtime lacks */
static int contains_nocase(const char *s, const char *part)
{
    for (size_t n = strlen(part); *s; s++)
        if (!strncasecmp(s, part, n))
            return 1;
    return !*part;
}

static int is_zeroed(const gmlp_st_file *f)
{
    return !f->tensors && !f->n_tensors && !f->meta_keys && !f->meta_values && !f->n_meta;
}

static void test_corpus(const char *dir)
{
    char path[1024], line[1024], file[512], status[64], fragment[256];
    snprintf(path, sizeof path, "%s/broken/manifest.txt", dir);
    FILE *m = fopen(path, "r");
    CHECK(m != NULL, "cannot open %s", path);
    int cases = 0;
    while (m && fgets(line, sizeof line, m)) {
        if (sscanf(line, "%511[^\t]\t%63[^\t]\t%255[^\t\n]", file, status, fragment) != 3 || !strcmp(status, "IO"))
            continue;
        snprintf(path, sizeof path, "%s/broken/%s", dir, file);
        size_t size;
        unsigned char *buf = check_read_file(path, &size);
        gmlp_error err = {.msg = ""};
        gmlp_status want = !strcmp(status, "FORMAT") ? GMLP_ERR_FORMAT : GMLP_ERR_UNSUPPORTED;
        gmlp_status st = buf ? validate(buf, size, &err) : GMLP_ERR_IO;
        CHECK(st == want, "%s: expected %s, got %s: %s", file, status, gmlp_status_string(st), err.msg);
        CHECK(contains_nocase(err.msg, fragment), "%s: message lacks '%s': %s", file, fragment, err.msg);
        /* the parser alone: refuses the parser-level cases, leaving *out zeroed; parses the others */
        gmlp_st_file f;
        memset(&f, 0xa5, sizeof f);
        st = buf ? gmlp_st_parse(buf, size, &f, &err) : GMLP_ERR_IO;
        if (parser_level(file))
            CHECK(st == GMLP_ERR_FORMAT && is_zeroed(&f), "%s: the parser accepts a parser-level case (%s)", file,
                  gmlp_status_string(st));
        else
            CHECK(st == GMLP_OK, "%s: a model-level case is not valid safetensors: %s", file, err.msg);
        if (st == GMLP_OK)
            gmlp_st_free(&f);
        free(buf);
        cases++;
    }
    if (m)
        fclose(m);
    CHECK(cases >= 40, "only %d corpus cases", cases);
}

/* Inputs that once crashed a fuzzer (*.bin) get the verdict their manifest
 * line gives (OK or a status name), and every one has a line. */
static void test_fuzz_regressions(const char *dir)
{
    char path[1024], line[1024], file[512], status[64];
    snprintf(path, sizeof path, "%s/fuzz-regressions/manifest.txt", dir);
    FILE *m = fopen(path, "r");
    CHECK(m != NULL, "cannot open %s", path);
    int listed = 0;
    while (m && fgets(line, sizeof line, m)) {
        if (line[0] == '#' || sscanf(line, "%511s %63s", file, status) != 2)
            continue;
        snprintf(path, sizeof path, "%s/fuzz-regressions/%s", dir, file);
        size_t size;
        unsigned char *buf = check_read_file(path, &size);
        gmlp_error err = {.msg = ""};
        gmlp_status st = buf ? validate(buf, size, &err) : GMLP_ERR_IO;
        const char *got = st == GMLP_OK                ? "OK"
                          : st == GMLP_ERR_FORMAT      ? "FORMAT"
                          : st == GMLP_ERR_UNSUPPORTED ? "UNSUPPORTED"
                                                       : gmlp_status_string(st);
        CHECK(!strcmp(got, status), "%s: expected %s, got %s: %s", file, status, got, err.msg);
        free(buf);
        listed++;
    }
    if (m)
        fclose(m);
    int present = 0;
    snprintf(path, sizeof path, "%s/fuzz-regressions", dir);
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        present += len > 4 && !strcmp(e->d_name + len - 4, ".bin");
    }
    if (d)
        closedir(d);
    CHECK(present == listed, "%d regression inputs (*.bin) but %d manifest lines", present, listed);
}

/* DIR/e2e/NAME.safetensors with its __metadata__ replaced by meta (a JSON
 * object's text, "{}": none), through config inference into cfg. */
static gmlp_status with_metadata(const char *dir, const char *name, const char *meta, gmlp_config *cfg,
                                 gmlp_error *err)
{
    char path[1024];
    size_t size, hlen = 0;
    snprintf(path, sizeof path, "%s/e2e/%s.safetensors", dir, name);
    unsigned char *buf = check_read_file(path, &size);
    for (int i = 7; buf && i >= 0; i--)
        hlen = hlen << 8 | buf[i];
    json_t *h = buf ? json_loadb((const char *)buf + 8, hlen, 0, NULL) : NULL;
    json_object_set_new(h, "__metadata__", json_loads(meta, 0, NULL));
    char *text = h ? json_dumps(h, JSON_COMPACT) : NULL;
    size_t tlen = text ? strlen(text) : 0, out_size = 8 + tlen + (size - 8 - hlen);
    unsigned char *out = text ? malloc(out_size) : NULL;
    gmlp_status st = GMLP_ERR_IO;
    gmlp_st_file f;
    if (out) {
        for (int i = 0; i < 8; i++)
            out[i] = (unsigned char)((uint64_t)tlen >> (8 * i));
        memcpy(out + 8, text, tlen);
        memcpy(out + 8 + tlen, buf + 8 + hlen, size - 8 - hlen);
        if ((st = gmlp_st_parse(out, out_size, &f, err)) == GMLP_OK) {
            st = gmlp_config_infer(&f, NULL, cfg, err);
            gmlp_st_free(&f);
        }
    }
    free(out);
    free(text);
    json_decref(h);
    free(buf);
    return st;
}

/* The gmlp.* metadata's forms: sizes only as digits, crop_pct's range on the
 * value read, a resize preprocessing can do, gmlp.patch_size for gMLPVision only. */
static void test_metadata_values(const char *dir)
{
    static const struct {
        const char *meta, *fragment; /* NULL: accepted */
    } cases[] = {
        {"{\"gmlp.img_size\": \"12,20\"}", NULL},
        {"{\"gmlp.img_size\": \"0x6\"}", "gmlp.img_size '0x6' is not"},
        {"{\"gmlp.img_size\": \"12.0,20\"}", "gmlp.img_size '12.0,20' is not"},
        {"{\"gmlp.img_size\": \"+12,20\"}", "gmlp.img_size '+12,20' is not"},
        {"{\"gmlp.img_size\": \"12, 20\"}", "gmlp.img_size '12, 20' is not"},
        {"{\"gmlp.img_size\": \"12,20\", \"gmlp.crop_pct\": \"4\"}", NULL},
        {"{\"gmlp.img_size\": \"12,20\", \"gmlp.crop_pct\": \"4.0000001\"}", "must be a decimal in (0, 4]"},
        {"{\"gmlp.img_size\": \"12,20\", \"gmlp.crop_pct\": \"1e-6\"}", "floor(img_size / crop_pct)"},
        {"{\"gmlp.img_size\": \"12,20\", \"gmlp.patch_size\": \"4\"}", "gmlp.patch_size is for gMLPVision only"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gmlp_config cfg = {.size = sizeof cfg};
        gmlp_error err = {.msg = ""};
        gmlp_status st = with_metadata(dir, "gmixer_grey_f16", cases[i].meta, &cfg, &err);
        if (!cases[i].fragment)
            CHECK(st == GMLP_OK, "%s: %s", cases[i].meta, err.msg);
        else
            CHECK(st == GMLP_ERR_FORMAT && strstr(err.msg, cases[i].fragment), "%s: %s (%s)", cases[i].meta,
                  err.msg, gmlp_status_string(st));
    }
}

/* A grey ResMLP / gMixer without mean or std: the architecture's ImageNet
 * values averaged, as timm's resolve_input_data_config gives (0.449, 0.226:
 * float64 sums in order, then float32). */
static void test_default_norm(const char *dir)
{
    const float mean = (float)((0.485 + 0.456 + 0.406) / 3), std = (float)((0.229 + 0.224 + 0.225) / 3);
    static const char *const names[] = {"resmlp_grey_headless_f16", "gmixer_grey_f16"};
    for (size_t i = 0; i < 2; i++) {
        gmlp_config cfg = {.size = sizeof cfg};
        gmlp_error err = {.msg = ""};
        gmlp_status st = with_metadata(dir, names[i], "{\"gmlp.img_size\": \"12,20\"}", &cfg, &err);
        CHECK(st == GMLP_OK && cfg.in_chans == 1 && cfg.mean[0] == mean && cfg.std[0] == std,
              "%s: mean %.9g std %.9g, timm's %.9g %.9g (%s)", names[i], cfg.mean[0], cfg.std[0], mean, std, err.msg);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: test_safetensors DATA_DIR\n");
        return 2;
    }
    test_fixtures(argv[1]);
    test_corpus(argv[1]);
    test_fuzz_regressions(argv[1]);
    test_metadata_values(argv[1]);
    test_default_norm(argv[1]);
    return check_summary("test_safetensors");
}
