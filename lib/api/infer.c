/* Public inference entry points: argument checks, locking, then the forward. */
#include "api/api.h"
#include "cl/clerr.h"
#include "gmlp_cl.h"
#include "model/arch.h"
#include "model/model.h"

/* images and out: host arrays or cl_mem handles (gmlp_classify_cl). */
static gmlp_status check_args(gmlp_model *m, const void *images, size_t batch, const void *out, const char *fn)
{
    if (!m)
        return gmlp_fail(gmlp_api_error(), GMLP_ERR_INVALID_ARGUMENT, "%s: model is NULL", fn);
    if (!images || !out)
        return gmlp_ctx_fail(m->ctx, GMLP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, images ? "output" : "images");
    if (batch == 0)
        return gmlp_ctx_fail(m->ctx, GMLP_ERR_INVALID_ARGUMENT, "%s: batch is 0", fn);
    if (gmlp_arch_of(&m->cfg)->lm)
        return gmlp_ctx_fail(m->ctx, GMLP_ERR_WRONG_MODEL,
                         "%s: the model is a language model (use gmlp_lm_logits or gmlp_lm_generate)", fn);
    return GMLP_OK;
}

static gmlp_status run(gmlp_model *m, const float *images, size_t batch, float *logits, float *features)
{
    pthread_mutex_lock(&m->ctx->lock);
    gmlp_status st = gmlp_vision_forward(m, images, batch, logits, features);
    pthread_mutex_unlock(&m->ctx->lock);
    return st;
}

static gmlp_status check_head(gmlp_model *m, const char *fn, const char *instead)
{
    if (m->cfg.num_classes == 0)
        return gmlp_ctx_fail(m->ctx, GMLP_ERR_WRONG_MODEL, "%s: the model has no head (a feature extractor)%s", fn,
                             instead);
    return GMLP_OK;
}

gmlp_status gmlp_classify(gmlp_model *m, const float *images, size_t batch, float *logits)
{
    GMLP_TRY(check_args(m, images, batch, logits, "gmlp_classify"));
    GMLP_TRY(check_head(m, "gmlp_classify", "; use gmlp_features"));
    return run(m, images, batch, logits, NULL);
}

gmlp_status gmlp_features(gmlp_model *m, const float *images, size_t batch, float *features)
{
    GMLP_TRY(check_args(m, images, batch, features, "gmlp_features"));
    return run(m, images, batch, NULL, features);
}

gmlp_status gmlp_classify_features(gmlp_model *m, const float *images, size_t batch, float *logits, float *features)
{
    GMLP_TRY(check_args(m, images, batch, logits ? (const void *)logits : features, "gmlp_classify_features"));
    if (logits)
        GMLP_TRY(check_head(m, "gmlp_classify_features", "; pass logits NULL for its features alone"));
    return run(m, images, batch, logits, features);
}

/* A caller's buffer of the context's cl_context, holding at least floats floats. */
static gmlp_status check_buffer(gmlp_context *ctx, cl_mem buf, size_t floats, const char *what)
{
    cl_context owner;
    size_t bytes;
    if (clGetMemObjectInfo(buf, CL_MEM_CONTEXT, sizeof owner, &owner, NULL) != CL_SUCCESS ||
        clGetMemObjectInfo(buf, CL_MEM_SIZE, sizeof bytes, &bytes, NULL) != CL_SUCCESS)
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT, "gmlp_classify_cl: %s is not a valid cl_mem", what);
    if (owner != ctx->cl)
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT,
                             "gmlp_classify_cl: %s belongs to another cl_context than the gmlp context's", what);
    if (bytes / sizeof(float) < floats)
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT,
                             "gmlp_classify_cl: %s holds %zu bytes, the batch needs %zu", what, bytes,
                             floats * sizeof(float));
    return GMLP_OK;
}

gmlp_status gmlp_classify_cl(gmlp_model *m, cl_mem images, size_t batch, cl_mem logits, cl_uint n_wait,
                             const cl_event *wait, cl_event *done)
{
    if (done)
        *done = NULL;
    GMLP_TRY(check_args(m, images, batch, logits, "gmlp_classify_cl"));
    gmlp_context *ctx = m->ctx;
    const gmlp_config *c = &m->cfg;
    GMLP_TRY(check_head(m, "gmlp_classify_cl", ""));
    if (n_wait && !wait)
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT, "gmlp_classify_cl: %u events to wait for, but wait is NULL",
                             n_wait);
    if (images == logits)
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT,
                             "gmlp_classify_cl: images and logits are the same buffer (a chunk's logits would "
                             "overwrite later images)");
    size_t per_image = (size_t)c->in_chans * (size_t)c->img_h * (size_t)c->img_w;
    GMLP_TRY(check_buffer(ctx, images, batch * per_image, "images"));
    GMLP_TRY(check_buffer(ctx, logits, batch * (size_t)c->num_classes, "logits"));
    pthread_mutex_lock(&ctx->lock);
    gmlp_status st = GMLP_OK;
    cl_int e = n_wait ? clEnqueueBarrierWithWaitList(ctx->queue, n_wait, wait, NULL) : CL_SUCCESS;
    if (e != CL_SUCCESS)
        st = gmlp_fail_cl(&ctx->err, "clEnqueueBarrierWithWaitList", e);
    if (st == GMLP_OK)
        st = gmlp_forward_cl(m, images, batch, logits);
    if (st == GMLP_OK && done && (e = clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, done)) != CL_SUCCESS) {
        *done = NULL;
        st = gmlp_fail_cl(&ctx->err, "clEnqueueMarkerWithWaitList", e);
    }
    pthread_mutex_unlock(&ctx->lock);
    return st;
}
