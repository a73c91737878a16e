/* Models: loading (argument checks, locking, the file named in front of a
 * failure), freeing, and what can be read or changed afterwards. */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "model/model.h"

void gmlp_load_options_default(gmlp_load_options *opts)
{
    if (opts)
        *opts = (gmlp_load_options){.size = sizeof *opts, .weights = GMLP_WEIGHTS_F32};
}

/* How to load, from the options over the context's settings, into *setup;
 * fn names the call in a failure. */
static gmlp_status load_options(gmlp_context *ctx, const char *fn, const gmlp_load_options *opts,
                                gmlp_model_setup *setup)
{
    gmlp_load_options o;
    gmlp_load_options_default(&o);
    if (opts && !gmlp_options_in(&o, sizeof o, opts))
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT,
                             "%s: gmlp_load_options.size is %zu: fill the options with gmlp_load_options_default", fn,
                             opts->size);
    if (o.weights != GMLP_WEIGHTS_F32 && o.weights != GMLP_WEIGHTS_F16 && o.weights != GMLP_WEIGHTS_BF16)
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT,
                             "%s: unknown weight type %d (GMLP_WEIGHTS_F32, _F16 or _BF16)", fn, (int)o.weights);
    if (!gmlp_precision_name(o.precision))
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT,
                             "%s: unknown precision %d (GMLP_PRECISION_AUTO, _FP32, _TF32, _FP16 or _BF16)", fn,
                             (int)o.precision);
    /* AUTO: $GMLP_PRECISION (the context's settings), else FP32 */
    gmlp_precision mode = o.precision ? o.precision : ctx->set.precision ? (gmlp_precision)ctx->set.precision
                                                                           : GMLP_PRECISION_FP32;
    if (mode != GMLP_PRECISION_FP32 && ctx->set.gemm == GMLP_GEMM_CLBLAST)
        return gmlp_ctx_fail(ctx, GMLP_ERR_UNSUPPORTED,
                             "%s: precision %s with GMLP_GEMM=clblast: CLBlast runs fp32 only (use the library's kernel)",
                             fn, gmlp_precision_name(mode));
    setup->weights = o.weights;
    setup->precision = (gmlp_gemm_precision)(mode - GMLP_PRECISION_FP32);
    return GMLP_OK;
}

gmlp_status gmlp_model_load_memory_ex(gmlp_context *ctx, const void *data, size_t size, const gmlp_load_options *opts,
                                      gmlp_model **out)
{
    if (out)
        *out = NULL;
    if (!ctx)
        return gmlp_fail(gmlp_api_error(), GMLP_ERR_INVALID_ARGUMENT, "gmlp_model_load_memory: ctx is NULL");
    if (!out || (!data && size))
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT, "gmlp_model_load_memory: %s is NULL",
                         out ? "data" : "out");
    gmlp_model_setup o;
    GMLP_TRY(load_options(ctx, "gmlp_model_load_memory", opts, &o));
    pthread_mutex_lock(&ctx->lock);
    gmlp_status st = gmlp_model_create(ctx, data ? data : "", size, NULL, &o, out);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

gmlp_status gmlp_model_load_memory(gmlp_context *ctx, const void *data, size_t size, gmlp_model **out)
{
    return gmlp_model_load_memory_ex(ctx, data, size, NULL, out);
}

gmlp_status gmlp_model_load_ex(gmlp_context *ctx, const char *path, const gmlp_load_options *opts, gmlp_model **out)
{
    if (out)
        *out = NULL;
    if (!ctx)
        return gmlp_fail(gmlp_api_error(), GMLP_ERR_INVALID_ARGUMENT, "gmlp_model_load: ctx is NULL");
    if (!path || !out)
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT, "gmlp_model_load: %s is NULL", path ? "out" : "path");
    gmlp_model_setup o;
    GMLP_TRY(load_options(ctx, "gmlp_model_load", opts, &o));
    pthread_mutex_lock(&ctx->lock);
    gmlp_status st = gmlp_model_open(ctx, path, &o, out);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

gmlp_status gmlp_model_load(gmlp_context *ctx, const char *path, gmlp_model **out)
{
    return gmlp_model_load_ex(ctx, path, NULL, out);
}

void gmlp_model_free(gmlp_model *m)
{
    if (!m)
        return;
    gmlp_context *ctx = m->ctx;
    pthread_mutex_lock(&ctx->lock);
    gmlp_model_destroy(m);
    pthread_mutex_unlock(&ctx->lock);
}

gmlp_status gmlp_model_config(const gmlp_model *m, gmlp_config *out)
{
    if (!m || !out)
        return gmlp_fail(gmlp_api_error(), GMLP_ERR_INVALID_ARGUMENT, "gmlp_model_config: %s is NULL",
                         m ? "out" : "model");
    const size_t given = out->size;
    if (!gmlp_size_ok(given, GMLP_CONFIG_MIN_SIZE))
        return gmlp_ctx_fail(m->ctx, GMLP_ERR_INVALID_ARGUMENT,
                             "gmlp_model_config: out->size is %zu: set it to sizeof(gmlp_config) "
                             "(gmlp_config_default does)", given);
    pthread_mutex_lock(&m->ctx->lock); /* gmlp_model_override may be changing it */
    memcpy(out, &m->cfg, given < sizeof m->cfg ? given : sizeof m->cfg); /* a newer caller's fields past ours stay */
    pthread_mutex_unlock(&m->ctx->lock);
    out->size = given;
    return GMLP_OK;
}

const char *gmlp_model_metadata(const gmlp_model *m, const char *key)
{
    return m && key ? gmlp_model_meta(m, key) : NULL;
}

const char *gmlp_model_metadata_key(const gmlp_model *m, size_t i)
{
    return m && i < m->n_meta ? m->meta_keys[i] : NULL;
}

const char *gmlp_model_label(const gmlp_model *m, int i)
{
    return m && m->labels && i >= 0 && i < m->cfg.num_classes ? m->labels[i] : NULL;
}

gmlp_source gmlp_model_config_source(const gmlp_model *m, const char *key)
{
    for (int k = 0; m && key && k < GMLP_PK_COUNT; k++)
        if (!strcmp(key, gmlp_preproc_keys[k]))
            return m->sources[k];
    return GMLP_SOURCE_UNKNOWN;
}

const char *gmlp_model_config_conflict(const gmlp_model *m, const char *key)
{
    for (int k = 0; m && key && k < GMLP_PK_COUNT; k++)
        if (!strcmp(key, gmlp_preproc_keys[k]))
            return m->conflicts[k];
    return NULL;
}

gmlp_status gmlp_model_override(gmlp_model *m, const char *key, const char *value)
{
    if (!m)
        return gmlp_fail(gmlp_api_error(), GMLP_ERR_INVALID_ARGUMENT, "gmlp_model_override: model is NULL");
    if (!key || !value)
        return gmlp_ctx_fail(m->ctx, GMLP_ERR_INVALID_ARGUMENT, "gmlp_model_override: %s is NULL",
                         key ? "value" : "key");
    pthread_mutex_lock(&m->ctx->lock);
    gmlp_status st = gmlp_model_set_preproc(m, key, value);
    pthread_mutex_unlock(&m->ctx->lock);
    return st;
}
