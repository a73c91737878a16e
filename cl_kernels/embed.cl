/* Token embedding of the language models: x[r, :] = table[tokens[r], :];
 * the token ids were range-checked on the host. */
__kernel void gmlp_embed(__global const int *tokens, __global const float *table, __global float *x, int dim)
{
    const int c = get_global_id(0);
    const size_t r = get_global_id(1);
    x[r * dim + c] = table[(size_t)tokens[r] * dim + c];
}
