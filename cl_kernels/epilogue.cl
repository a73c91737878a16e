/* A GEMM's epilogue alone, in place on C = m x n (batch in dimension 2), for
 * products computed elsewhere (CLBlast): gmlp_epilogue (common.cl). */
__kernel void gmlp_epilogue_only(int m, int n, __global float *c, ulong c_off, ulong ldc, ulong c_stride,
                                 GMLP_EPI_PARAMS)
{
    const int j = get_global_id(0), i = get_global_id(1);
    const size_t p = get_global_id(2), at = c_off + p * c_stride + (size_t)i * ldc + j;
    const gmlp_epi e = GMLP_EPI_OF(p);
    if (i < m && j < n)
        c[at] = gmlp_epilogue(c[at], i, j, &e);
}
