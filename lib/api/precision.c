/* The precision modes' names, and what runs a model's mode. */
#include <stdio.h>
#include <strings.h>

#include "api/api.h"
#include "model/model.h"

static const char *const names[] = {"auto", "fp32", "tf32", "fp16", "bf16"};

const char *gmlp_precision_name(gmlp_precision mode)
{
    return (unsigned)mode < sizeof names / sizeof *names ? names[mode] : NULL;
}

gmlp_status gmlp_precision_parse(const char *name, gmlp_precision *mode)
{
    for (size_t i = 0; name && mode && i < sizeof names / sizeof *names; i++)
        if (!strcasecmp(name, names[i])) {
            *mode = (gmlp_precision)i;
            return GMLP_OK;
        }
    return gmlp_fail(gmlp_api_error(), GMLP_ERR_INVALID_ARGUMENT,
                     "precision '%s': expected fp32, tf32, fp16 or bf16", name ? name : "(null)");
}

gmlp_status gmlp_model_precision(const gmlp_model *m, gmlp_precision *mode, char *engine, size_t size)
{
    if (!m || !mode)
        return gmlp_fail(gmlp_api_error(), GMLP_ERR_INVALID_ARGUMENT, "gmlp_model_precision: %s is NULL",
                         m ? "mode" : "model");
    *mode = (gmlp_precision)(m->precision + GMLP_PRECISION_FP32);
    if (!engine || !size)
        return GMLP_OK;
    gmlp_context *ctx = m->ctx;
    const char *what;
    pthread_mutex_lock(&ctx->lock); /* the plan may build the variant */
    gmlp_status st = gmlp_gemm_engine(ctx, gmlp_weight_elem(m), m->precision, m->linear, &what);
    pthread_mutex_unlock(&ctx->lock);
    if (st == GMLP_OK)
        snprintf(engine, size, "%s", what);
    return st;
}
