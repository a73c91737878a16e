/* The tuned-choice store: per device, driver and library version, a JSON
 * file in the kernel cache directory naming the GEMM winner (a kernel tiling
 * or CLBlast) for each size class and operand form; its reading (everything
 * validated: an unusable file is ignored with one log line), writing and
 * lookup; and the recording of a model's GEMM shapes for gmlp_tune. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/program.h"
#include "core/alloc.h"
#include "core/portable.h"
#include "format/json.h"
#include "gmlp_version.h"
#include "ops/gemm_tune.h"
#include "ops/state.h"

/* 2: kernel winners name their tiling (gemm_tilings.c); 1 gave its numbers */
#define TUNE_FORMAT "gmlp-tune-2"
#define TUNE_FORMAT_FAMILY "gmlp-tune-"
#define TUNE_MAX_BYTES (1u << 20)

static const char *const class_names[GMLP_GEMM_CLASSES] = {"small", "large", "narrow", "deep"};

size_t gmlp_tune_slot(int cls, gmlp_elem a, gmlp_elem b, int ta, int tb, gmlp_gemm_precision precision)
{
    return (((((size_t)precision * GMLP_GEMM_CLASSES + (size_t)cls) * GMLP_ELEMS + a) * GMLP_ELEMS + b) * 2 +
            (ta != 0)) *
               2 +
           (tb != 0);
}

gmlp_tune_key gmlp_tune_slot_key(size_t slot)
{
    const size_t forms = slot / 4;
    return (gmlp_tune_key){.tb = slot & 1,
                           .ta = slot >> 1 & 1,
                           .b = (gmlp_elem)(forms % GMLP_ELEMS),
                           .a = (gmlp_elem)(forms / GMLP_ELEMS % GMLP_ELEMS),
                           .cls = (int)(forms / GMLP_ELEMS / GMLP_ELEMS % GMLP_GEMM_CLASSES),
                           .precision = (gmlp_gemm_precision)(forms / GMLP_ELEMS / GMLP_ELEMS / GMLP_GEMM_CLASSES)};
}

void gmlp_tune_slot_name(size_t slot, char *buf, size_t size)
{
    const gmlp_tune_key k = gmlp_tune_slot_key(slot);
    snprintf(buf, size, "%s %s%s %s x %s%s%s", class_names[k.cls], k.ta ? "T" : "N", k.tb ? "T" : "N",
             gmlp_elem_name(k.a), gmlp_elem_name(k.b), k.precision == GMLP_GEMM_FP32 ? "" : " ",
             k.precision == GMLP_GEMM_FP32 ? "" : gmlp_gemm_precision_name(k.precision));
}

const gmlp_tuned_choice *gmlp_gemm_tuned(const gmlp_context *ctx, int cls, const gmlp_gemm *g)
{
    const gmlp_tuned *t = ctx->ops->tuned;
    if (!t || cls < 0 || cls >= GMLP_GEMM_CLASSES)
        return NULL;
    size_t s = gmlp_tune_slot(cls, g->a.elem, g->b.elem, g->a.trans, g->b.trans, g->precision);
    return t->set[s] ? &t->choice[s] : NULL;
}

/* The device fields a file must repeat exactly, with their JSON keys. */
static void device_fields(const gmlp_devinfo *dev, const char *keys[6], const char *values[6])
{
    static const char *const k[6] = {"library", "platform", "device", "vendor", "device_version", "driver"};
    const char *v[6] = {GMLP_VERSION_STRING, dev->platform_name, dev->name, dev->vendor, dev->version, dev->driver};
    for (int i = 0; i < 6; i++) {
        keys[i] = k[i];
        values[i] = v[i];
    }
}

static int named(const char *s, const char *const *names, int n)
{
    for (int i = 0; s && i < n; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

/* One "winners" entry into *out; 0 with why set when anything is off. */
static int parse_winner(const gmlp_devinfo *dev, json_t *w, gmlp_tuned *out, char *why, size_t why_size)
{
    static const char *const types[GMLP_ELEMS] = {"float", "half", "bf16"}; /* gmlp_elem_name's */
    static const char *const backends[] = {"kernel", "clblast"};
    if (!json_is_object(w)) {
        snprintf(why, why_size, "a winner is %s, not an object", gmlp_json_kind(w));
        return 0;
    }
    int cls = named(json_string_value(json_object_get(w, "class")), class_names, GMLP_GEMM_CLASSES);
    int ah = named(json_string_value(json_object_get(w, "a")), types, GMLP_ELEMS);
    int bh = named(json_string_value(json_object_get(w, "b")), types, GMLP_ELEMS);
    int backend = named(json_string_value(json_object_get(w, "backend")), backends, 2);
    json_t *ta = json_object_get(w, "ta"), *tb = json_object_get(w, "tb"), *prec = json_object_get(w, "precision");
    int p = GMLP_GEMM_FP32; /* files from before the precision modes name none */
    if (prec) {
        p = -1;
        for (int i = 0; json_is_string(prec) && i < GMLP_GEMM_PRECISIONS; i++)
            if (!strcmp(json_string_value(prec), gmlp_gemm_precision_name((gmlp_gemm_precision)i)))
                p = i;
    }
    if (cls < 0 || ah < 0 || bh < 0 || backend < 0 || p < 0 || !json_is_boolean(ta) || !json_is_boolean(tb)) {
        snprintf(why, why_size, "a winner lacks a valid class, a, b, ta, tb, precision or backend");
        return 0;
    }
    size_t s = gmlp_tune_slot(cls, (gmlp_elem)ah, (gmlp_elem)bh, json_is_true(ta), json_is_true(tb), (gmlp_gemm_precision)p);
    if (out->set[s]) {
        snprintf(why, why_size, "two winners for one class and form");
        return 0;
    }
    if (backend == 1) {
        if (ah || bh || p != GMLP_GEMM_FP32) {
            snprintf(why, why_size, "CLBlast named for 16-bit operands or another precision than fp32");
            return 0;
        }
        out->choice[s] = (gmlp_tuned_choice){.clblast = 1};
        out->set[s] = 1;
        return 1;
    }
    const char *name = json_string_value(json_object_get(w, "tiling"));
    const gmlp_tiling *t = gmlp_gemm_tiling_named(name);
    if (!name) {
        snprintf(why, why_size, "a kernel winner names no tiling");
        return 0;
    }
    if (!t) {
        snprintf(why, why_size, "tiling '%.64s' is not one the library knows", name);
        return 0;
    }
    if (!gmlp_gemm_tiling_fits(dev, t) || !gmlp_gemm_tiling_runs(t, (gmlp_gemm_precision)p)) {
        snprintf(why, why_size, "tiling %s does not fit the device or run %s", t->name,
                 gmlp_gemm_precision_name((gmlp_gemm_precision)p));
        return 0;
    }
    out->choice[s] = (gmlp_tuned_choice){.tiling = t};
    out->set[s] = 1;
    return 1;
}

int gmlp_tune_parse(const gmlp_devinfo *dev, const void *data, size_t size, gmlp_tuned *out, char *why,
                    size_t why_size)
{
    memset(out, 0, sizeof *out);
    if (!gmlp_json_nesting_ok(data, size, 8)) {
        snprintf(why, why_size, "nested too deeply");
        return 0;
    }
    json_error_t jerr;
    json_t *root = gmlp_json_loadb(data, size, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        snprintf(why, why_size, "not JSON (%s, line %d)", jerr.text, jerr.line);
        return 0;
    }
    int ok = 0;
    const char *keys[6], *values[6];
    device_fields(dev, keys, values);
    json_t *winners = json_object_get(root, "winners");
    const char *format = json_string_value(json_object_get(root, "format"));
    if (format && strcmp(format, TUNE_FORMAT) && !strncmp(format, TUNE_FORMAT_FAMILY, strlen(TUNE_FORMAT_FAMILY))) {
        snprintf(why, why_size, "format %.32s, not this library's %s: tune again (gmlp-bench --tune)", format,
                 TUNE_FORMAT);
        goto done;
    }
    if (!format || strcmp(format, TUNE_FORMAT)) {
        snprintf(why, why_size, "not a %s file", TUNE_FORMAT);
        goto done;
    }
    for (int i = 0; i < 6; i++) {
        const char *v = json_string_value(json_object_get(root, keys[i]));
        if (!v || strcmp(v, values[i])) {
            snprintf(why, why_size, "made for %s '%s', not '%s'", keys[i], v ? v : "(missing)", values[i]);
            goto done;
        }
    }
    if (!json_is_array(winners)) {
        snprintf(why, why_size, "no winners array");
        goto done;
    }
    size_t i;
    json_t *w;
    json_array_foreach(winners, i, w) if (!parse_winner(dev, w, out, why, why_size)) goto done;
    ok = 1;
done:
    json_decref(root);
    if (!ok)
        memset(out, 0, sizeof *out);
    return ok;
}

void gmlp_gemm_tune_load(gmlp_context *ctx)
{
    char path[1100];
    if (!gmlp_cache_device_file(ctx, ".tune.json", path, sizeof path))
        return;
    FILE *f = fopen(path, "rb");
    if (!f)
        return; /* not tuned: the defaults */
    char *data = gmlp_malloc(TUNE_MAX_BYTES);
    size_t n = data ? fread(data, 1, TUNE_MAX_BYTES, f) : 0;
    int read_error = ferror(f) || n == TUNE_MAX_BYTES;
    fclose(f);
    gmlp_tuned *t = gmlp_malloc(sizeof *t);
    char why[200] = "out of host memory";
    if (data && t && !read_error && gmlp_tune_parse(&ctx->dev, data, n, t, why, sizeof why)) {
        free(ctx->ops->tuned);
        ctx->ops->tuned = t;
        gmlp_gemm_plan_clear(ctx);
        gmlp_log(&ctx->set.log, GMLP_LOG_INFO, "GEMM tuning file %s: used", path);
    } else {
        if (read_error)
            snprintf(why, sizeof why, "unreadable or over %u bytes", TUNE_MAX_BYTES);
        gmlp_log(&ctx->set.log, GMLP_LOG_ERROR, "GEMM tuning file %s ignored (%s): the default choices apply", path,
                 why);
        free(t);
    }
    free(data);
}

gmlp_status gmlp_tune_save(gmlp_context *ctx, const gmlp_tuned *t, const double *us)
{
    char path[1100], tmp[1200];
    if (!gmlp_cache_device_file(ctx, ".tune.json", path, sizeof path))
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "gmlp_tune: the context has no cache directory to "
                                                               "keep the results in");
    const char *keys[6], *values[6];
    device_fields(&ctx->dev, keys, values);
    json_t *root = json_pack("{ss}", "format", TUNE_FORMAT), *winners = json_array();
    for (int i = 0; root && i < 6; i++)
        json_object_set_new(root, keys[i], json_string(values[i]));
    for (size_t s = 0; root && winners && s < GMLP_TUNE_SLOTS; s++) {
        if (!t->set[s])
            continue;
        const gmlp_tuned_choice *c = &t->choice[s];
        const gmlp_tune_key k = gmlp_tune_slot_key(s);
        json_t *w = json_pack("{ss ss ss sb sb ss ss}", "class", class_names[k.cls], "a", gmlp_elem_name(k.a),
                              "b", gmlp_elem_name(k.b), "ta", k.ta, "tb", k.tb, "precision",
                              gmlp_gemm_precision_name(k.precision), "backend", c->clblast ? "clblast" : "kernel");
        if (w && !c->clblast)
            json_object_set_new(w, "tiling", json_string(c->tiling->name));
        if (w && us && us[s] > 0) /* for people reading the file; not read back */
            json_object_set_new(w, "us_per_run", json_real(us[s]));
        json_array_append_new(winners, w);
    }
    if (!root)
        json_decref(winners);
    int ok = root && winners && json_object_set_new(root, "winners", winners) == 0;
    FILE *f = NULL;
    if (ok && snprintf(tmp, sizeof tmp, "%s.tmp", path) < (int)sizeof tmp && (f = fopen(tmp, "w"))) {
        ok = json_dumpf(root, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER) == 0;
        ok = fclose(f) == 0 && ok;
        ok = ok && gmlp_rename(tmp, path) == 0; /* atomic: readers never see half a file */
        if (!ok)
            remove(tmp);
    } else {
        ok = 0;
    }
    json_decref(root);
    if (!ok)
        return gmlp_fail(&ctx->err, GMLP_ERR_IO, "gmlp_tune: could not write %s", path);
    gmlp_log(&ctx->set.log, GMLP_LOG_INFO, "GEMM tuning results written to %s", path);
    return GMLP_OK;
}

void gmlp_gemm_tune_free(gmlp_context *ctx)
{
    free(ctx->ops->tuned);
    ctx->ops->tuned = NULL;
    gmlp_gemm_plan_clear(ctx);
}

void gmlp_gemm_record_set(gmlp_context *ctx, gmlp_gemm_record *rec)
{
    ctx->ops->record = rec;
}

void gmlp_gemm_record_note(gmlp_context *ctx, const gmlp_gemm *g)
{
    gmlp_gemm_record *r = ctx->ops->record;
    if (!r)
        return;
    gmlp_gemm s = *g; /* the shape, without the buffers; a fused LayerNorm's halves tuned as the plain product */
    s.a.buf = s.b.buf = s.c.buf = NULL;
    s.norm = (gmlp_gemm_norm){0};
    s.stats = NULL;
    s.stats_col0 = 0;
    s.bias = g->bias ? (cl_mem)1 : NULL; /* whether there is one */
    s.bias_off = 0;
    s.gate = (gmlp_view){.buf = g->gate.buf ? (cl_mem)1 : NULL};
    s.beta = g->beta != 0.0f;
    s.batch = g->batch ? g->batch : 1;
    for (size_t i = 0; i < r->n; i++) {
        const gmlp_gemm *o = &r->g[i];
        if (o->m == s.m && o->n == s.n && o->k == s.k && o->batch == s.batch && o->a.elem == s.a.elem &&
            o->b.elem == s.b.elem && !o->a.trans == !s.a.trans && !o->b.trans == !s.b.trans && o->beta == s.beta &&
            o->bias == s.bias && o->bias_rows == s.bias_rows && o->act == s.act && o->gate.buf == s.gate.buf &&
            o->precision == s.precision)
            return;
    }
    if (r->n == r->cap) {
        gmlp_gemm *grown = gmlp_realloc(r->g, (r->cap ? 2 * r->cap : 16) * sizeof *grown);
        if (!grown) {
            r->lost = 1;
            return;
        }
        r->g = grown;
        r->cap = r->cap ? 2 * r->cap : 16;
    }
    r->g[r->n++] = s;
}
