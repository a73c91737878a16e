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

/* An array of 1 to 3 numbers after `first` others (input_size's channels) as "a,b,c". */
static gmlp_status numbers(reader *r, gmlp_preproc_key k, const char *key, const json_t *v, size_t first)
{
    if (!json_is_array(v))
        return bad_type(r, key, "an array of numbers", v);
    if (json_array_size(v) <= first || json_array_size(v) > first + 3)
        return gmlp_fail(r->err, GMLP_ERR_FORMAT, "config.json %s has %zu entries (expected %zu to %zu)", key,
                         json_array_size(v), first + 1, first + 3);
    char text[128] = "";
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

static gmlp_status add_size(reader *r, const char *key, int classes, const json_t *v)
{
    if (!json_is_integer(v))
        return bad_type(r, key, "an integer", v);
    gmlp_hf_size *s = &r->c->sizes[r->c->n_sizes++]; /* at most GMLP_HF_MAX_SIZES calls */
    snprintf(s->key, sizeof s->key, "%s", key);
    s->classes = classes;
    s->value = json_integer_value(v);
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
    GMLP_TRY(numbers(r, GMLP_PK_IMG_SIZE, key, v, 1));
    return add_size(r, key, 0, json_array_get(v, 0));
}

static gmlp_status string_value(reader *r, gmlp_preproc_key k, const char *name, const json_t *v)
{
    char key[48];
    snprintf(key, sizeof key, "%s%s", r->prefix, name);
    if (!json_is_string(v))
        return bad_type(r, key, "a string", v);
    return set_value(r, k, key, json_string_value(v), json_string_length(v));
}

/* label_names: one non-empty string per class, joined by newlines. */
static gmlp_status labels(reader *r, const char *key, const json_t *v)
{
    if (!json_is_array(v))
        return bad_type(r, key, "an array of strings", v);
    sbuf b = {0};
    for (size_t i = 0; i < json_array_size(v); i++) {
        const json_t *e = json_array_get(v, i);
        if (!json_is_string(e) || !json_string_length(e) || memchr(json_string_value(e), '\n', json_string_length(e))) {
            free(b.s);
            return json_is_string(e) ? gmlp_fail(r->err, GMLP_ERR_FORMAT, "config.json %s[%zu] is empty or holds a "
                                                 "newline", key, i)
                                     : gmlp_fail(r->err, GMLP_ERR_FORMAT, "config.json %s[%zu] must be a string (it "
                                                 "is %s)", key, i, gmlp_json_kind(e));
        }
        if (!sb_add(&b, "\n", i > 0) || !sb_add(&b, json_string_value(e), json_string_length(e))) {
            free(b.s);
            return gmlp_fail(r->err, GMLP_ERR_HOST_MEMORY, "out of host memory reading config.json %s", key);
        }
    }
    if (!b.s)
        return gmlp_fail(r->err, GMLP_ERR_FORMAT, "config.json %s is empty", key);
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
        GMLP_TRY(numbers(r, GMLP_PK_MEAN, key, v, 0));
    }
    if ((v = json_object_get(o, "std"))) {
        snprintf(key, sizeof key, "%sstd", r->prefix);
        GMLP_TRY(numbers(r, GMLP_PK_STD, key, v, 0));
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
        GMLP_TRY(add_size(r, key, 1, v));
    }
    static const char *const label_keys[] = {"labels", "label_names"}; /* the later one wins */
    for (size_t i = 0; i < 2; i++)
        if ((v = json_object_get(o, label_keys[i]))) {
            snprintf(key, sizeof key, "%s%s", r->prefix, label_keys[i]);
            GMLP_TRY(labels(r, key, v));
        }
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
        GMLP_TRY(add_size(r, "num_classes", 1, v));
    if ((v = json_object_get(root, "label_names")))
        GMLP_TRY(labels(r, "label_names", v));
    const json_t *args = json_object_get(root, "model_args");
    if (args && !json_is_object(args))
        return bad_type(r, "model_args", "an object", args);
    if (args && (v = json_object_get(args, "in_chans")))
        GMLP_TRY(add_size(r, "model_args.in_chans", 0, v));
    if (args && (v = json_object_get(args, "num_classes")))
        GMLP_TRY(add_size(r, "model_args.num_classes", 1, v));
    return GMLP_OK;
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
