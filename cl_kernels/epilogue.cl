/* A GEMM's epilogue alone, in place on C = m x n (batch in dimension 2), for
 * products computed elsewhere (CLBlast): gmlp_epilogue (common.cl), the
 * gate stored as gate_store. */
__kernel void gmlp_epilogue_only(int m, int n, __global float *c, ulong c_off, ulong ldc, ulong c_stride,
                                 GMLP_EPI_PARAMS, int gate_store)
{
    const int j = get_global_id(0), i = get_global_id(1);
    const size_t p = get_global_id(2), at = c_off + p * c_stride + (size_t)i * ldc + j;
    const gmlp_epi e = GMLP_EPI_OF(p, gate_store);
    if (i < m && j < n)
        c[at] = gmlp_epilogue(c[at], i, j, &e);
}

/* Split-K's sum (lib/ops/gemm_split.c): C = epilogue(the partial products of
 * parts parts (parts x m x n floats) added in order + beta * C), as the GEMM
 * kernels store their accumulators; one matrix (split products are not
 * batched). */
__kernel void gmlp_gemm_split_sum(int m, int n, int parts, __global const float *partial, float beta,
                                  __global float *c, ulong c_off, ulong ldc, GMLP_EPI_PARAMS, int gate_store)
{
    const int j = get_global_id(0), i = get_global_id(1);
    if (i >= m || j >= n)
        return;
    const size_t mn = (size_t)m * n, at = (size_t)i * n + j;
    float v = partial[at];
    for (int q = 1; q < parts; q++)
        v += partial[q * mn + at];
    __global float *cv = c + c_off + (size_t)i * ldc + j;
    const gmlp_epi e = GMLP_EPI_OF(0, gate_store);
    *cv = gmlp_epilogue(beta == 0.0f ? v : v + beta * *cv, i, j, &e);
}
