/* Weights on the device: matrices as float, half or bfloat16 (the model's
 * cfg.weights), everything else as float, and the GEMM operand that reads a
 * matrix back with the right element type. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "core/half.h"
#include "core/precision.h"
#include "model/model.h"
#include "ops/gemm_variant.h"

/* numel values as 16-bit elements of e: half refuses a finite value past
 * its range, but in an FP16 model, whose products saturate their operands
 * at +-65504 anyway, takes them so; bfloat16 has float's. */
static gmlp_status upload_16(gmlp_model *m, gmlp_elem e, const float *host, size_t numel, const char *name,
                             cl_mem *dst)
{
    uint16_t *h = gmlp_malloc(numel ? numel * sizeof *h : sizeof *h);
    if (!h)
        return gmlp_fail(&m->ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory converting '%s' to %s", name,
                         gmlp_elem_name(e));
    const bool saturate = e == GMLP_ELEM_F16 && m->precision == GMLP_GEMM_FP16;
    if (saturate) /* the mode's rounding, then exact as half */
        for (size_t i = 0; i < numel; i++)
            h[i] = gmlp_float_to_half(gmlp_round_operand(host[i], GMLP_GEMM_FP16));
    else
        gmlp_elem_pack(e, host, numel, h);
    for (size_t i = 0; e == GMLP_ELEM_F16 && !saturate && i < numel; i++)
        if ((h[i] & 0x7fff) == 0x7c00 && isfinite(host[i])) {
            free(h);
            return gmlp_fail(&m->ctx->err, GMLP_ERR_UNSUPPORTED,
                             "'%s' holds %g, beyond the range of half (65504): load it with GMLP_WEIGHTS_F32", name,
                             (double)host[i]);
        }
    gmlp_status st = gmlp_buffer_create(m->ctx, numel * sizeof *h, h, name, dst);
    free(h);
    return st;
}

gmlp_elem gmlp_weight_elem(const gmlp_model *m)
{
    return (gmlp_elem)m->cfg.weights;
}

gmlp_status gmlp_model_upload(gmlp_model *m, const float *host, size_t numel, int matrix, const char *name,
                              cl_mem *dst)
{
    const gmlp_elem e = matrix ? gmlp_weight_elem(m) : GMLP_ELEM_F32;
    GMLP_TRY(e != GMLP_ELEM_F32 ? upload_16(m, e, host, numel, name, dst)
                                : gmlp_buffer_create(m->ctx, numel * sizeof *host, host, name, dst));
    m->cfg.weight_bytes += numel * gmlp_elem_size(e);
    return GMLP_OK;
}

gmlp_elem gmlp_gemm_input_elem(const gmlp_model *m)
{
    return gmlp_gemm_precision_inputs(m->precision);
}

gmlp_view gmlp_weight(const gmlp_model *m, cl_mem buf, size_t off, size_t ld)
{
    return (gmlp_view){.buf = buf, .off = off, .ld = ld, .elem = gmlp_weight_elem(m)};
}

gmlp_view gmlp_linear_outputs(gmlp_view w, size_t from)
{
    w.off += w.trans ? from * w.ld : w.pairs ? 2 * from : from; /* out x in: rows; in x out: columns */
    return w;
}

gmlp_view gmlp_linear_weight(const gmlp_model *m, cl_mem buf, size_t out_features, size_t in_features)
{
    const size_t ld[] = {[GMLP_LINEAR_FILE] = in_features, [GMLP_LINEAR_KN] = out_features,
                         [GMLP_LINEAR_PAIRS] = 2 * out_features};
    gmlp_view w = gmlp_weight(m, buf, 0, ld[m->linear]);
    w.trans = m->linear == GMLP_LINEAR_FILE;
    w.pairs = m->linear == GMLP_LINEAR_PAIRS;
    return w;
}
