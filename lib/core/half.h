/* 16-bit float formats on the host: IEEE 754 binary16 ("half") and bfloat16
 * conversions, for reading F16 tensors and storing weights and GEMM operands
 * on the device (gmlp_elem). */
#ifndef GMLP_HALF_H
#define GMLP_HALF_H

#include <stddef.h>
#include <stdint.h>

float gmlp_half_to_float(uint16_t h);

/* Round to nearest, ties to even (what vstore_half_rte does on a device);
 * finite values of magnitude >= 65520 become infinity, NaN stays NaN. */
uint16_t gmlp_float_to_half(float f);

/* bfloat16: a float's upper 16 bits.  Round to nearest, ties to even (as
 * precision.cl's BF16 rounding; a finite value past bfloat16's largest
 * becomes infinity), NaN made quiet. */
float gmlp_bf16_to_float(uint16_t b);
uint16_t gmlp_float_to_bf16(float f);

/* How a device buffer stores a GEMM operand's elements; the values are
 * gmlp_weight_type's (gmlp.h). */
typedef enum gmlp_elem {
    GMLP_ELEM_F32 = 0,
    GMLP_ELEM_F16 = 1,
    GMLP_ELEM_BF16 = 2,
    GMLP_ELEMS
} gmlp_elem;
/* "float", "half", "bf16" */
const char *gmlp_elem_name(gmlp_elem e);
/* bytes per element: 4 or 2 */
size_t gmlp_elem_size(gmlp_elem e);
/* n floats from src as elements of e into dst (gmlp_elem_size(e) * n bytes) */
void gmlp_elem_pack(gmlp_elem e, const float *src, size_t n, void *dst);
/* the value of a 16-bit element's bits (e: F16 or BF16) */
float gmlp_elem_value(gmlp_elem e, uint16_t bits);

#endif
