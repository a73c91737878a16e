/* Weights on the device: matrices as float or as half (the model's
 * gmlp_load_options), everything else as float, and the GEMM operand that
 * reads a matrix back with the right element type. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "core/half.h"
#include "model/model.h"

static gmlp_status upload_half(gmlp_model *m, const float *host, size_t numel, const char *name, cl_mem *dst)
{
    uint16_t *h = gmlp_malloc(numel ? numel * sizeof *h : sizeof *h);
    if (!h)
        return gmlp_fail(&m->ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory converting '%s' to half", name);
    for (size_t i = 0; i < numel; i++) {
        h[i] = gmlp_float_to_half(host[i]);
        if ((h[i] & 0x7fff) == 0x7c00 && isfinite(host[i])) {
            free(h);
            return gmlp_fail(&m->ctx->err, GMLP_ERR_UNSUPPORTED,
                                 "'%s' holds %g, beyond the range of half (65504): load it with GMLP_WEIGHTS_F32",
                                 name, (double)host[i]);
        }
    }
    gmlp_status st = gmlp_buffer_create(m->ctx, numel * sizeof *h, h, name, dst);
    free(h);
    return st;
}

gmlp_status gmlp_model_upload(gmlp_model *m, const float *host, size_t numel, int matrix, const char *name,
                              cl_mem *dst)
{
    int half = matrix && m->cfg.weights == GMLP_WEIGHTS_F16;
    GMLP_TRY(half ? upload_half(m, host, numel, name, dst)
                  : gmlp_buffer_create(m->ctx, numel * sizeof *host, host, name, dst));
    m->cfg.weight_bytes += numel * (half ? sizeof(uint16_t) : sizeof *host);
    return GMLP_OK;
}

gmlp_view gmlp_weight(const gmlp_model *m, cl_mem buf, size_t off, size_t ld)
{
    return (gmlp_view){.buf = buf, .off = off, .ld = ld, .half = m->cfg.weights == GMLP_WEIGHTS_F16};
}

gmlp_view gmlp_linear_weight(const gmlp_model *m, cl_mem buf, size_t in_features)
{
    gmlp_view w = gmlp_weight(m, buf, 0, in_features);
    w.trans = 1;
    return w;
}
