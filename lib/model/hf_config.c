/* config.json of a model folder → the gmlp.* strings of its preprocessing
 * and the sizes it states.  Read as timm's load_model_config_from_hf does:
 * pretrained_cfg holds the preprocessing (the earliest uploads have no
 * pretrained_cfg and keep it at the top level), a top-level label_names wins
 * over pretrained_cfg's, and "labels" is the deprecated name of
 * label_names.  Keys the library does not use are ignored; those it uses
 * must have the type timm writes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "format/json.h"
#include "model/hf_config.h"

#define MAX_DEPTH 32 /* timm's configs nest 3 levels deep */

typedef struct reader {
    gmlp_hf_config *c;
    gmlp_error *err;
    const char *prefix; /* "pretrained_cfg." or "" (the earliest layout) */
} reader;

static gmlp_status bad_type(reader *r, const char *key, const char *want, const json_t *v)
{
    return gmlp_fail(r->err, GMLP_ERR_FORMAT, "config.json %s must be %s (it is %s)", key, want, gmlp_json_kind(v));
}

/* Appends to a growing string; 0 when out of memory. */
typedef struct sbuf {
    char *s;
    size_t len, cap;
} sbuf;

static int sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *p = gmlp_realloc(b->s, cap);
        if (!p)
            return 0;
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
    return 1;
}

/* A JSON number as the shortest decimal that reads back as the same double
 * (0.485, not 0.48499999999999999). */
static void number_text(const json_t *v, char *buf, size_t size)
{
    if (json_is_integer(v)) {
        snprintf(buf, size, "%lld", (long long)json_integer_value(v));
        return;
    }
    double d = json_real_value(v);
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, d);
        if (strtod(buf, NULL) == d)
            return;
    }
}

static gmlp_status set_value(reader *r, gmlp_preproc_key k, const char *key, const char *text, size_t len)
{
    gmlp_hf_config *c = r->c;
    free(c->value[k]);
    if (!(c->value[k] = gmlp_malloc(len + 1)))
        return gmlp_fail(r->err, GMLP_ERR_HOST_MEMORY, "out of host memory reading config.json");
    memcpy(c->value[k], text, len);
    c->value[k][len] = 0;
    snprintf(c->key[k], sizeof c->key[k], "%s", key);
    return GMLP_OK;
}

/* An array of 1 to max numbers after `first` others (input_size's channels) as "a,b,c". */
static gmlp_status numbers(reader *r, gmlp_preproc_key k, const char *key, const json_t *v, size_t first, size_t max)
{
    if (!json_is_array(v))
        return bad_type(r, key, "an array of numbers", v);
    if (json_array_size(v) <= first || json_array_size(v) > first + max)
        return gmlp_fail(r->err, GMLP_ERR_FORMAT, "config.json %s has %zu entries (expected %zu to %zu)", key,
                         json_array_size(v), first + 1, first + max);
    char text[GMLP_MAX_NORM_VALUES * 26] = "";
    for (size_t i = first; i < json_array_size(v); i++) {
        const json_t *e = json_array_get(v, i);
        char num[40];
        if (!json_is_number(e))
            return gmlp_fail(r->err, GMLP_ERR_FORMAT, "config.json %s[%zu] must be a number (it is %s)", key, i,
                             gmlp_json_kind(e));
        number_text(e, num, sizeof num);
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s", i > first ? "," : "", num);
    }
    return set_value(r, k, key, text, strlen(text));
}

static gmlp_hf_size *new_size(reader *r, const char *key, gmlp_hf_kind kind)
{
    gmlp_hf_size *s = &r->c->sizes[r->c->n_sizes++]; /* at most GMLP_HF_MAX_SIZES calls */
    snprintf(s->key, sizeof s->key, "%s", key);
    s->kind = kind;
    return s;
}

static gmlp_status add_size(reader *r, const char *key, gmlp_hf_kind kind, const json_t *v)
{
    if (!json_is_integer(v))
        return bad_type(r, key, "an integer", v);
    new_size(r, key, kind)->value[0] = json_integer_value(v);
    return GMLP_OK;
}

/* v's two values as timm's to_2tuple takes them: [a, b], or v for both. */
static void to_2tuple(const json_t *v, const json_t *ab[2])
{
    const int two = json_is_array(v) && json_array_size(v) == 2;
    ab[0] = two ? json_array_get(v, 0) : v;
    ab[1] = two ? json_array_get(v, 1) : v;
}

/* An integer or [H, W] of them, into hw. */
static gmlp_status pair(reader *r, const char *key, const json_t *v, long long hw[2])
{
    const json_t *ab[2];
    to_2tuple(v, ab);
    const json_t *h = ab[0], *w = ab[1];
    if (!json_is_integer(h) || !json_is_integer(w))
        return bad_type(r, key, "an integer or [height, width]", v);
    hw[0] = json_integer_value(h);
    hw[1] = json_integer_value(w);
    return GMLP_OK;
}

/* input_size [C, H, W]: the image size and a channel count. */
static gmlp_status input_size(reader *r, const json_t *v)
{
    char key[48];
    snprintf(key, sizeof key, "%sinput_size", r->prefix);
    if (json_is_array(v) && json_array_size(v) != 3)
        return gmlp_fail(r->err, GMLP_ERR_FORMAT,
                         "config.json %s has %zu entries (expected 3: channels, height, width)", key,
                         json_array_size(v));
    GMLP_TRY(numbers(r, GMLP_PK_IMG_SIZE, key, v, 1, 2));
    return add_size(r, key, GMLP_HF_CHANNELS, json_array_get(v, 0));
}

static gmlp_status string_value(reader *r, gmlp_preproc_key k, const char *name, const json_t *v)
{
    char key[48];
    snprintf(key, sizeof key, "%s%s", r->prefix, name);
    if (!json_is_string(v))
        return bad_type(r, key, "a string", v);
    return set_value(r, k, key, json_string_value(v), json_string_length(v));
}

/* Entry i of label_names: the list's, or the object's whose key is i (timm's
 * save_for_hf takes a dict {id: name}; JSON spells the ids "0", "1", ...);
 * NULL for an object without that key. */
static const json_t *label_at(const json_t *v, size_t i)
{
    char id[24];
    snprintf(id, sizeof id, "%zu", i);
    return json_is_array(v) ? json_array_get(v, i) : json_object_get(v, id);
}

/* label_names: one string per class (empty ones too, as timm keeps them),
 * each ended by a newline, so that an empty last name still counts. */
static gmlp_status labels(reader *r, const char *key, const json_t *v)
{
    if (!json_is_array(v) && !json_is_object(v))
        return bad_type(r, key, "an array of strings or an object {\"0\": name, ...}", v);
    size_t n = json_is_array(v) ? json_array_size(v) : json_object_size(v);
    if (n == 0)
        return gmlp_fail(r->err, GMLP_ERR_FORMAT, "config.json %s is empty", key);
    sbuf b = {0};
    gmlp_status st = GMLP_OK;
    for (size_t i = 0; i < n && st == GMLP_OK; i++) {
        const json_t *e = label_at(v, i);
        if (!e)
            st = gmlp_fail(r->err, GMLP_ERR_FORMAT, "config.json %s has %zu entries but no key \"%zu\": its keys "
                           "must be the class indices 0 to %zu", key, n, i, n - 1);
        else if (!json_is_string(e))
            st = gmlp_fail(r->err, GMLP_ERR_FORMAT, "config.json %s[%zu] must be a string (it is %s)", key, i,
                           gmlp_json_kind(e));
        else if (memchr(json_string_value(e), '\n', json_string_length(e)))
            st = gmlp_fail(r->err, GMLP_ERR_FORMAT, "config.json %s[%zu] holds a newline", key, i);
        else if (!sb_add(&b, json_string_value(e), json_string_length(e)) || !sb_add(&b, "\n", 1))
            st = gmlp_fail(r->err, GMLP_ERR_HOST_MEMORY, "out of host memory reading config.json %s", key);
    }
    if (st != GMLP_OK) {
        free(b.s);
        return st;
    }
    free(r->c->value[GMLP_PK_LABELS]);
    r->c->value[GMLP_PK_LABELS] = b.s;
    snprintf(r->c->key[GMLP_PK_LABELS], sizeof r->c->key[GMLP_PK_LABELS], "%s", key);
    return GMLP_OK;
}

/* The preprocessing keys of one object (pretrained_cfg, or the top level of
 * the earliest layout). */
static gmlp_status preprocessing(reader *r, const json_t *o)
{
    static const struct {
        const char *name;
        gmlp_preproc_key k;
    } strings[] = {
        {"interpolation", GMLP_PK_INTERPOLATION},
        {"crop_mode", GMLP_PK_CROP_MODE},
    };
    const json_t *v;
    char key[48];
    if ((v = json_object_get(o, "input_size")))
        GMLP_TRY(input_size(r, v));
    for (size_t i = 0; i < sizeof strings / sizeof *strings; i++)
        if ((v = json_object_get(o, strings[i].name)) && !json_is_null(v))
            GMLP_TRY(string_value(r, strings[i].k, strings[i].name, v));
    if ((v = json_object_get(o, "mean"))) {
        snprintf(key, sizeof key, "%smean", r->prefix);
        GMLP_TRY(numbers(r, GMLP_PK_MEAN, key, v, 0, GMLP_MAX_NORM_VALUES));
    }
    if ((v = json_object_get(o, "std"))) {
        snprintf(key, sizeof key, "%sstd", r->prefix);
        GMLP_TRY(numbers(r, GMLP_PK_STD, key, v, 0, GMLP_MAX_NORM_VALUES));
    }
    /* timm: crop_pct None means its default (0.875), as absent does */
    if ((v = json_object_get(o, "crop_pct")) && !json_is_null(v)) {
        char num[40];
        snprintf(key, sizeof key, "%scrop_pct", r->prefix);
        if (!json_is_number(v))
            return bad_type(r, key, "a number", v);
        number_text(v, num, sizeof num);
        GMLP_TRY(set_value(r, GMLP_PK_CROP_PCT, key, num, strlen(num)));
    }
    if ((v = json_object_get(o, "num_classes"))) {
        snprintf(key, sizeof key, "%snum_classes", r->prefix);
        GMLP_TRY(add_size(r, key, GMLP_HF_CLASSES, v));
    }
    static const char *const label_keys[] = {"labels", "label_names"}; /* the later one wins */
    for (size_t i = 0; i < 2; i++)
        if ((v = json_object_get(o, label_keys[i]))) {
            snprintf(key, sizeof key, "%s%s", r->prefix, label_keys[i]);
            GMLP_TRY(labels(r, key, v));
        }
    return GMLP_OK;
}

/* gmlp-cl computes timm's 'avg' pooling alone: '' gives per-token outputs. */
static gmlp_status global_pool(reader *r, const char *key, const json_t *v)
{
    if (!json_is_string(v))
        return bad_type(r, key, "a string", v);
    const char *s = json_string_value(v);
    if (!strcmp(s, "avg"))
        return GMLP_OK;
    return gmlp_fail(r->err, GMLP_ERR_UNSUPPORTED, "config.json %s '%.40s' is not supported: gmlp-cl computes 'avg' "
                     "pooling only%s", key, s, *s ? "" : " ('' gives timm's per-token outputs)");
}

/* model_args.img_size: config.json's image size where input_size gives none,
 * else the same one. */
static gmlp_status args_img_size(reader *r, const json_t *v)
{
    const char *key = "model_args.img_size";
    long long hw[2];
    char text[48];
    GMLP_TRY(pair(r, key, v, hw));
    snprintf(text, sizeof text, "%lld,%lld", hw[0], hw[1]);
    const char *given = r->c->value[GMLP_PK_IMG_SIZE];
    if (!given)
        return set_value(r, GMLP_PK_IMG_SIZE, key, text, strlen(text));
    if (strcmp(given, text))
        return gmlp_fail(r->err, GMLP_ERR_FORMAT, "config.json %s %lldx%lld contradicts %s '%s'", key, hw[0], hw[1],
                         r->c->key[GMLP_PK_IMG_SIZE], given);
    return GMLP_OK;
}

/* mlp_ratio: a number, or (timm's to_2tuple) [tokens, channels]. */
static gmlp_status mlp_ratio(reader *r, const json_t *v)
{
    const char *key = "model_args.mlp_ratio";
    const json_t *ab[2];
    to_2tuple(v, ab);
    const json_t *t = ab[0], *c = ab[1];
    if (!json_is_number(t) || !json_is_number(c))
        return bad_type(r, key, "a number or [tokens, channels]", v);
    gmlp_hf_size *s = new_size(r, key, GMLP_HF_MLP_RATIO);
    s->ratio[0] = json_number_value(t);
    s->ratio[1] = json_number_value(c);
    return GMLP_OK;
}

/* The arguments timm's MlpMixer was built with: each must be what the weights are. */
static gmlp_status model_args(reader *r, const json_t *args)
{
    static const struct {
        const char *name;
        gmlp_hf_kind kind;
    } ints[] = {{"in_chans", GMLP_HF_CHANNELS},
                {"num_classes", GMLP_HF_CLASSES},
                {"embed_dim", GMLP_HF_DIM},
                {"num_blocks", GMLP_HF_DEPTH}};
    const json_t *v;
    char key[48];
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
        if ((v = json_object_get(args, ints[i].name))) {
            snprintf(key, sizeof key, "model_args.%s", ints[i].name);
            GMLP_TRY(add_size(r, key, ints[i].kind, v));
        }
    if ((v = json_object_get(args, "patch_size")))
        GMLP_TRY(pair(r, "model_args.patch_size", v, new_size(r, "model_args.patch_size", GMLP_HF_PATCH)->value));
    if ((v = json_object_get(args, "stem_norm"))) {
        if (!json_is_boolean(v))
            return bad_type(r, "model_args.stem_norm", "true or false", v);
        new_size(r, "model_args.stem_norm", GMLP_HF_STEM_NORM)->value[0] = json_is_true(v);
    }
    if ((v = json_object_get(args, "mlp_ratio")))
        GMLP_TRY(mlp_ratio(r, v));
    if ((v = json_object_get(args, "global_pool")))
        GMLP_TRY(global_pool(r, "model_args.global_pool", v));
    if ((v = json_object_get(args, "img_size")))
        GMLP_TRY(args_img_size(r, v));
    return GMLP_OK;
}

static gmlp_status read_root(reader *r, const json_t *root)
{
    gmlp_hf_config *c = r->c;
    const json_t *v, *pcfg = json_object_get(root, "pretrained_cfg");
    if ((v = json_object_get(root, "architecture"))) {
        if (!json_is_string(v))
            return bad_type(r, "architecture", "a string", v);
        size_t n = json_string_length(v) + 1;
        if (!(c->architecture = gmlp_malloc(n)))
            return gmlp_fail(r->err, GMLP_ERR_HOST_MEMORY, "out of host memory reading config.json");
        memcpy(c->architecture, json_string_value(v), n);
    }
    if (pcfg && !json_is_object(pcfg))
        return bad_type(r, "pretrained_cfg", "an object", pcfg);
    r->prefix = pcfg ? "pretrained_cfg." : "";
    GMLP_TRY(preprocessing(r, pcfg ? pcfg : root));
    if (!pcfg)
        return GMLP_OK; /* the earliest layout: one object, already read */
    r->prefix = "";
    if ((v = json_object_get(root, "num_classes")))
        GMLP_TRY(add_size(r, "num_classes", GMLP_HF_CLASSES, v));
    if ((v = json_object_get(root, "num_features")))
        GMLP_TRY(add_size(r, "num_features", GMLP_HF_DIM, v));
    if ((v = json_object_get(root, "global_pool")))
        GMLP_TRY(global_pool(r, "global_pool", v));
    if ((v = json_object_get(root, "label_names")))
        GMLP_TRY(labels(r, "label_names", v));
    const json_t *args = json_object_get(root, "model_args");
    if (args && !json_is_object(args))
        return bad_type(r, "model_args", "an object", args);
    return args ? model_args(r, args) : GMLP_OK;
}

gmlp_status gmlp_hf_config_parse(const void *data, size_t size, gmlp_hf_config *out, gmlp_error *err)
{
    memset(out, 0, sizeof *out);
    if (size > GMLP_HF_CONFIG_MAX_BYTES)
        return gmlp_fail(err, GMLP_ERR_FORMAT, "config.json is %zu bytes (at most %zu)", size,
                         GMLP_HF_CONFIG_MAX_BYTES);
    if (!gmlp_json_nesting_ok(data, size, MAX_DEPTH))
        return gmlp_fail(err, GMLP_ERR_FORMAT, "config.json nests deeper than %d levels", MAX_DEPTH);
    json_error_t jerr;
    memset(&jerr, 0, sizeof jerr);
    json_t *root = gmlp_json_loadb(data, size, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return jerr.text[0] ? gmlp_fail(err, GMLP_ERR_FORMAT, "config.json is not valid JSON: %s at line %d, column %d",
                                        jerr.text, jerr.line, jerr.column)
                            : gmlp_fail(err, GMLP_ERR_HOST_MEMORY, "out of host memory parsing config.json");
    reader r = {out, err, ""};
    gmlp_status st = json_is_object(root) ? read_root(&r, root) : bad_type(&r, "(the whole file)", "an object", root);
    json_decref(root);
    if (st != GMLP_OK)
        gmlp_hf_config_free(out);
    return st;
}

void gmlp_hf_config_free(gmlp_hf_config *c)
{
    if (!c)
        return;
    for (int k = 0; k < GMLP_PK_COUNT; k++)
        free(c->value[k]);
    free(c->architecture);
    memset(c, 0, sizeof *c);
}

int gmlp_hf_config_has_preproc(const gmlp_hf_config *c)
{
    for (int k = 0; c && k < GMLP_PK_COUNT; k++)
        if (c->value[k])
            return 1;
    return 0;
}
