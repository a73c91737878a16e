/* Public inference entry points: argument checks, locking, then the forward. */
#include "model/model.h"

static gmlp_status check_args(gmlp_model *m, const float *images, size_t batch, const float *out, const char *fn)
{
    if (!m)
        return gmlp_errf(gmlp_thread_error(), GMLP_ERRMSG_SIZE, GMLP_ERR_INVALID_ARGUMENT, "%s: model is NULL", fn);
    if (!images || !out)
        return gmlp_ctx_fail(m->ctx, GMLP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, images ? "output" : "images");
    if (batch == 0)
        return gmlp_ctx_fail(m->ctx, GMLP_ERR_INVALID_ARGUMENT, "%s: batch is 0", fn);
    if (m->cfg.arch == GMLP_ARCH_LM)
        return gmlp_ctx_fail(m->ctx, GMLP_ERR_WRONG_MODEL, "%s: the model is a language model (use gmlp_lm_logits)",
                             fn);
    return GMLP_OK;
}

static gmlp_status run(gmlp_model *m, const float *images, size_t batch, float *features, float *logits)
{
    pthread_mutex_lock(&m->ctx->lock);
    gmlp_status st = gmlp_forward(m, images, batch, features, logits);
    pthread_mutex_unlock(&m->ctx->lock);
    return st;
}

gmlp_status gmlp_classify(gmlp_model *m, const float *images, size_t batch, float *logits)
{
    GMLP_TRY(check_args(m, images, batch, logits, "gmlp_classify"));
    if (m->cfg.num_classes == 0)
        return gmlp_ctx_fail(m->ctx, GMLP_ERR_WRONG_MODEL,
                             "gmlp_classify: the model has no head (a feature extractor); use gmlp_features");
    return run(m, images, batch, NULL, logits);
}

gmlp_status gmlp_features(gmlp_model *m, const float *images, size_t batch, float *features)
{
    GMLP_TRY(check_args(m, images, batch, features, "gmlp_features"));
    return run(m, images, batch, features, NULL);
}
