/* Bias add with an optional exact (erf) GELU, in place on a rows x cols
 * matrix.  The bias index is (row % rperiod) * rstride + col * cstride:
 * per-column bias (fc layers: 1, 0, 1) or per-row bias (Mixer token MLP,
 * which runs on transposed activations: T, 1, 0). */
#define GMLP_ACT_NONE 0
#define GMLP_ACT_GELU 1

__kernel void gmlp_bias_act(__global float *x, __global const float *bias, int cols,
                            int rperiod, int rstride, int cstride, int act)
{
    const int c = get_global_id(0);
    const size_t r = get_global_id(1);
    const size_t i = r * (size_t)cols + c;
    float v = x[i] + bias[(int)(r % (size_t)rperiod) * rstride + c * cstride];
    if (act == GMLP_ACT_GELU)
        v = 0.5f * v * (1.0f + erf(v * 0.70710678118654752f));
    x[i] = v;
}
