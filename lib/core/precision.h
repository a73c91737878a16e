/* The precision modes' operand rounding on the host: the twin of
 * cl_kernels/precision.cl, for the tests' references and host-side checks. */
#ifndef GMLP_PRECISION_H
#define GMLP_PRECISION_H

/* x rounded to the format of prec (GMLP_GEMM_PREC_*, kernel_abi.h), round
 * to nearest even, as a float: FP32 unchanged; TF32 10 mantissa bits, BF16 7,
 * both with fp32's range (past the largest: infinity); FP16 10 mantissa bits,
 * saturated at +-65504 (infinities too), multiples of 2^-24 below 2^-14.
 * NaN stays NaN. */
float gmlp_round_operand(float x, int prec);

#endif
