/* timm ResMLP's Affine "norm": y[row, c] = x[row, c] * alpha[c] + beta[c],
 * no statistics, so one work-item per element; x and y stored as xs and ys
 * (GMLP_STORE_*: gmlp_elem_get / _put, common.cl). */
__kernel void gmlp_affine(__global const void *x, ulong x_off, ulong ldx, int xs, __global void *y, ulong y_off,
                          ulong ldy, int ys, __global const float *alpha, __global const float *beta)
{
    const int c = get_global_id(0);
    const size_t row = get_global_id(1);
    gmlp_elem_put(ys, y, y_off + row * ldy + c, mad(gmlp_elem_get(xs, x, x_off + row * ldx + c), alpha[c], beta[c]));
}
