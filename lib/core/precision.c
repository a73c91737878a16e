#include "precision.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernel_abi.h"

/* x rounded to 23 - drop mantissa bits: add half an ulp of the result less
 * one, plus the kept part's lowest bit (ties to even), clear the dropped
 * bits; a carry into the exponent is the next binade, or infinity. */
static float rne(float x, int drop)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    u = (u + ((1u << (drop - 1)) - 1u) + ((u >> drop) & 1u)) & ~((1u << drop) - 1u);
    float r;
    memcpy(&r, &u, sizeof r);
    return r;
}

float gmlp_round_operand(float x, int prec)
{
    if (isnan(x) || prec == GMLP_GEMM_PREC_FP32)
        return x;
    if (prec == GMLP_GEMM_PREC_TF32)
        return rne(x, 13);
    if (prec == GMLP_GEMM_PREC_BF16)
        return rne(x, 16);
    const float c = fminf(fmaxf(x, -65504.0f), 65504.0f);
    /* half's subnormals: exact scalings around rintf, which rounds ties to even */
    return fabsf(c) < 0x1p-14f ? rintf(c * 0x1p24f) * 0x1p-24f : rne(c, 13);
}
