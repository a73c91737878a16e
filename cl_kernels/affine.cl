/* timm ResMLP's Affine "norm": y[row, c] = x[row, c] * alpha[c] + beta[c],
 * no statistics, so one work-item per element. */
__kernel void gmlp_affine(__global const float *x, ulong x_off, ulong ldx,
                          __global float *y, ulong y_off, ulong ldy,
                          __global const float *alpha, __global const float *beta)
{
    const int c = get_global_id(0);
    const size_t row = get_global_id(1);
    y[y_off + row * ldy + c] = mad(x[x_off + row * ldx + c], alpha[c], beta[c]);
}
