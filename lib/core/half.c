#include "half.h"

#include <math.h>
#include <string.h>

#include "kernel_abi.h"
#include "precision.h"

/* a float's bits and back (memcpy: no aliasing) */
static float from_bits(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint32_t to_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return x;
}

float gmlp_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | man << 13; /* inf, nan (payload kept) */
    } else if (exp) {
        bits = sign | (exp + 112) << 23 | man << 13;
    } else if (man) {
        /* subnormal half: every one is a normal float once the mantissa is normalised */
        int e = -1;
        do {
            e++;
            man <<= 1;
        } while (!(man & 0x400));
        bits = sign | (uint32_t)(112 - e) << 23 | (man & 0x3ff) << 13;
    } else {
        bits = sign;
    }
    return from_bits(bits);
}

uint16_t gmlp_float_to_half(float f)
{
    const uint32_t x = to_bits(f);
    uint16_t sign = (uint16_t)(x >> 16 & 0x8000);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) /* NaN: quiet, with the payload's top bits */
        return (uint16_t)(sign | 0x7e00 | (ax >> 13 & 0x3ff));
    if (ax >= 0x477ff000u) /* 65520, halfway from 65504 to 2^16, rounds (to even) up */
        return (uint16_t)(sign | 0x7c00);
    if (ax >= 0x38800000u) { /* 2^-14 and up: a normal half */
        uint32_t r = ax - 0x38000000u; /* rebias the exponent from 127 to 15 */
        r += 0xfff + (r >> 13 & 1);    /* ties to even; a carry bumps the exponent, as it should */
        return (uint16_t)(sign | r >> 13);
    }
    if (ax < 0x33000000u) /* below 2^-25, half the smallest subnormal: zero (2^-25 itself ties to 0) */
        return sign;
    /* subnormal half: the value in units of 2^-24 is the float's mantissa
     * (with its implicit bit) shifted right by 14..24 */
    uint32_t e = ax >> 23, man = (ax & 0x7fffffu) | 0x800000u, shift = 126 - e;
    uint32_t q = man >> shift, rem = man & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    q += rem > halfway || (rem == halfway && (q & 1));
    return (uint16_t)(sign | q);
}

float gmlp_bf16_to_float(uint16_t b)
{
    return from_bits((uint32_t)b << 16);
}

uint16_t gmlp_float_to_bf16(float f)
{
    /* the BF16 mode's rounding; a NaN made quiet, its payload possibly all in the low bits */
    return (uint16_t)((to_bits(gmlp_round_operand(f, GMLP_GEMM_PREC_BF16)) | (isnan(f) ? 0x400000u : 0u)) >> 16);
}

const char *gmlp_elem_name(gmlp_elem e)
{
    static const char *const names[GMLP_ELEMS] = {"float", "half", "bf16"};
    return (unsigned)e < GMLP_ELEMS ? names[e] : "?";
}

size_t gmlp_elem_size(gmlp_elem e)
{
    return e == GMLP_ELEM_F32 ? sizeof(float) : sizeof(uint16_t);
}

void gmlp_elem_pack(gmlp_elem e, const float *src, size_t n, void *dst)
{
    if (e == GMLP_ELEM_F32) {
        memcpy(dst, src, n * sizeof *src);
        return;
    }
    uint16_t *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = e == GMLP_ELEM_F16 ? gmlp_float_to_half(src[i]) : gmlp_float_to_bf16(src[i]);
}

float gmlp_elem_value(gmlp_elem e, uint16_t bits)
{
    return e == GMLP_ELEM_F16 ? gmlp_half_to_float(bits) : gmlp_bf16_to_float(bits);
}
