/* Global average pool over tokens: out[b, c] = mean_t x[b, t, c]. */
__kernel void gmlp_mean_tokens(__global const float *x, __global float *out, ulong out_off, int ntok, int dim)
{
    out += out_off;
    const int c = get_global_id(0);
    const size_t b = get_global_id(1);
    __global const float *xb = x + b * (size_t)ntok * dim + c;
    float s = 0.0f;
    for (int t = 0; t < ntok; t++)
        s += xb[(size_t)t * dim];
    out[b * dim + c] = s / (float)ntok;
}
