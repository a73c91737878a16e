/* The host's operand rounding (lib/core/precision.c, the twin of
 * cl_kernels/precision.cl) on hand-checked values: ties to even in each
 * format, carries into the exponent, overflow (TF32 and BF16 to infinity,
 * FP16 saturated at 65504), half's subnormals, NaN, signed zero. */
#include <string.h>

#include "check.h"
#include "core/precision.h"
#include "kernel_abi.h"

static int same(float a, float b)
{
    return isnan(a) ? isnan(b) : a == b && signbit(a) == signbit(b);
}

static void expect_round(float x, int prec, float want)
{
    static const char *const names[] = {"FP32", "TF32", "FP16", "BF16"};
    float got = gmlp_round_operand(x, prec);
    CHECK(same(got, want), "%s(%.9g = %a) = %a, want %a", names[prec], (double)x, (double)x, (double)got,
          (double)want);
}

int main(void)
{
    const float ulp10 = 0x1p-10f, ulp7 = 0x1p-7f;
    /* FP32: unchanged */
    expect_round(1.0f + 0x1p-23f, GMLP_GEMM_PREC_FP32, 1.0f + 0x1p-23f);
    expect_round(INFINITY, GMLP_GEMM_PREC_FP32, INFINITY);
    for (int prec = GMLP_GEMM_PREC_TF32; prec <= GMLP_GEMM_PREC_BF16; prec++) {
        const float u = prec == GMLP_GEMM_PREC_BF16 ? ulp7 : ulp10;
        expect_round(1.0f + u / 2, prec, 1.0f);                           /* tie, to the even 1 */
        expect_round(1.0f + 1.5f * u, prec, 1.0f + 2 * u);                /* tie, to the even 1 + 2 ulp */
        expect_round(-(1.0f + 1.5f * u), prec, -(1.0f + 2 * u));          /* the same, negative */
        expect_round(1.0f + u / 2 + 0x1p-23f, prec, 1.0f + u);            /* just above the tie */
        expect_round(1.0f + u / 2 - 0x1p-23f, prec, 1.0f);                /* just below */
        expect_round(2.0f - u / 4, prec, 2.0f);                           /* carry into the exponent */
        expect_round(3.0f, prec, 3.0f);                                   /* exact */
        expect_round(0.0f, prec, 0.0f);
        expect_round(-0.0f, prec, -0.0f);
        expect_round(NAN, prec, NAN);
        expect_round(-NAN, prec, -NAN);
    }
    /* TF32 and BF16 keep fp32's range: tiny values keep their exponent, the largest rounds to infinity */
    expect_round(0x1p-130f + 0x1p-137f + 0x1p-149f, GMLP_GEMM_PREC_TF32, 0x1p-130f + 0x1p-136f); /* a float subnormal */
    expect_round(0x1p-130f + 0x1p-137f, GMLP_GEMM_PREC_TF32, 0x1p-130f);                         /* its tie: even */
    expect_round(0x1p-133f, GMLP_GEMM_PREC_BF16, 0x1p-133f); /* float subnormals: bf16 keeps their top 7 bits */
    expect_round(0x1p-140f, GMLP_GEMM_PREC_BF16, 0.0f);
    expect_round(0x1.fffffep127f, GMLP_GEMM_PREC_TF32, INFINITY);
    expect_round(-0x1.fffffep127f, GMLP_GEMM_PREC_BF16, -INFINITY);
    expect_round(INFINITY, GMLP_GEMM_PREC_BF16, INFINITY);
    expect_round(65520.0f, GMLP_GEMM_PREC_TF32, 65536.0f);
    expect_round(1.00390625f, GMLP_GEMM_PREC_BF16, 1.0f);            /* 1 + 2^-8: a tie in BF16 */
    expect_round(1.01171875f, GMLP_GEMM_PREC_BF16, 1.015625f);       /* 1 + 3 2^-8: to even */
    /* FP16: saturation, not infinity */
    expect_round(65504.0f, GMLP_GEMM_PREC_FP16, 65504.0f);
    expect_round(65519.0f, GMLP_GEMM_PREC_FP16, 65504.0f);
    expect_round(65520.0f, GMLP_GEMM_PREC_FP16, 65504.0f); /* round-to-nearest would give 65536, infinity in half */
    expect_round(1e10f, GMLP_GEMM_PREC_FP16, 65504.0f);
    expect_round(-1e10f, GMLP_GEMM_PREC_FP16, -65504.0f);
    expect_round(INFINITY, GMLP_GEMM_PREC_FP16, 65504.0f);
    expect_round(-INFINITY, GMLP_GEMM_PREC_FP16, -65504.0f);
    expect_round(65503.0f, GMLP_GEMM_PREC_FP16, 65504.0f);  /* half's spacing is 32 there */
    expect_round(65487.0f, GMLP_GEMM_PREC_FP16, 65472.0f);
    expect_round(65488.0f, GMLP_GEMM_PREC_FP16, 65472.0f);  /* a tie: 65472's mantissa 0x3fe is even, 65504's odd */
    /* FP16 subnormals: multiples of 2^-24, ties to even */
    expect_round(0x1p-14f, GMLP_GEMM_PREC_FP16, 0x1p-14f);             /* the smallest normal */
    expect_round(1023.5f * 0x1p-24f, GMLP_GEMM_PREC_FP16, 0x1p-14f);   /* tie: 1024 is even */
    expect_round(1022.5f * 0x1p-24f, GMLP_GEMM_PREC_FP16, 1022.0f * 0x1p-24f);
    expect_round(0x1p-24f, GMLP_GEMM_PREC_FP16, 0x1p-24f);             /* the smallest subnormal */
    expect_round(0x1p-25f, GMLP_GEMM_PREC_FP16, 0.0f);                 /* tie with 0: to 0 */
    expect_round(-0x1p-25f, GMLP_GEMM_PREC_FP16, -0.0f);
    expect_round(0x1.000002p-25f, GMLP_GEMM_PREC_FP16, 0x1p-24f);      /* just above the tie */
    expect_round(1.5f * 0x1p-24f, GMLP_GEMM_PREC_FP16, 2.0f * 0x1p-24f);
    expect_round(2.5f * 0x1p-24f, GMLP_GEMM_PREC_FP16, 2.0f * 0x1p-24f);
    expect_round(3.3f * 0x1p-24f, GMLP_GEMM_PREC_FP16, 3.0f * 0x1p-24f);
    expect_round(0x1p-30f, GMLP_GEMM_PREC_FP16, 0.0f);
    expect_round(1.0f + 0x1p-11f, GMLP_GEMM_PREC_FP16, 1.0f);
    return check_summary("test_precision_round");
}
