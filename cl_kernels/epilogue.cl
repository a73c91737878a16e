/* A GEMM's epilogue alone, in place on C = m x n (batch in dimension 2), for
 * products computed elsewhere (CLBlast): the bias per column or per row of
 * each matrix, then the exact GELU (gmlp_epilogue, common.cl). */
__kernel void gmlp_epilogue_only(int m, int n, __global float *c, ulong c_off, ulong ldc, ulong c_stride,
                                 __global const float *bias, int bias_mode, int gelu)
{
    const int j = get_global_id(0), i = get_global_id(1);
    const size_t at = c_off + get_global_id(2) * c_stride + (size_t)i * ldc + j;
    if (i < m && j < n)
        c[at] = gmlp_epilogue(c[at], i, j, bias, bias_mode, gelu);
}
