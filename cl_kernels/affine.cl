/* timm ResMLP's Affine "norm": y[row, c] = x[row, c] * alpha[c] + beta[c],
 * no statistics, so one work-item per element; x and y stored as xs and ys
 * (GMLP_STORE_*: gmlp_elem_get / _put, common.cl).  Where add_rows is not
 * NULL, x[row, c] += add_rows[row % period] * add_cols[c] after it is read
 * (ResMLP's token-mixing bias times ls1, a rank-1 term of the residual: one
 * launch less than a GEMM of its own). */
__kernel void gmlp_affine(__global void *x, ulong x_off, ulong ldx, int xs, __global void *y, ulong y_off, ulong ldy,
                          int ys, __global const float *alpha, __global const float *beta,
                          __global const float *add_rows, __global const float *add_cols, ulong period)
{
    const int c = get_global_id(0);
    const size_t row = get_global_id(1), at = x_off + row * ldx + c;
    const float v = gmlp_elem_get(xs, x, at);
    gmlp_elem_put(ys, y, y_off + row * ldy + c, mad(v, alpha[c], beta[c]));
    if (add_rows)
        gmlp_elem_put(xs, x, at, mad(add_rows[row % period], add_cols[c], v));
}
