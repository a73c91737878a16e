/* timm ResMLP's Affine "norm": y[row, c] = x[row, c] * alpha[c] + beta[c],
 * no statistics, so one work-item per element; y float, or bfloat16 or half
 * (a BF16 or FP16 model's, which only GEMMs read: gmlp_to_bf16,
 * gmlp_store_fp16, common.cl). */
#define GMLP_AFFINE_DEFINE(NAME, T, STORE)                                                                      \
    __kernel void NAME(__global const float *x, ulong x_off, ulong ldx, __global T *y, ulong y_off, ulong ldy,  \
                       __global const float *alpha, __global const float *beta)                                \
    {                                                                                                           \
        const int c = get_global_id(0);                                                                         \
        const size_t row = get_global_id(1);                                                                    \
        STORE(y, y_off + row * ldy + c, mad(x[x_off + row * ldx + c], alpha[c], beta[c]));                     \
    }
#define GMLP_AFFINE_STORE_float(y, at, v) ((y)[at] = (v))
#define GMLP_AFFINE_STORE_bf16(y, at, v) ((y)[at] = gmlp_to_bf16(v))
#define GMLP_AFFINE_STORE_half(y, at, v) gmlp_store_fp16((v), (at), (y))
GMLP_AFFINE_DEFINE(gmlp_affine, float, GMLP_AFFINE_STORE_float)
GMLP_AFFINE_DEFINE(gmlp_affine_bf16, ushort, GMLP_AFFINE_STORE_bf16)
GMLP_AFFINE_DEFINE(gmlp_affine_half, half, GMLP_AFFINE_STORE_half)
