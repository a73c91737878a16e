/* g-mlp-pytorch PreShiftTokens over m consecutive positions p0 .. p0+m-1 of
 * each sequence, read from a "history" buffer holding positions 0 ..
 * hist_rows-1 of each sequence (of which 0 .. p0+m-1 are valid): channel
 * segment s < segments (each seg_w wide) of position i takes position
 * i - (first + s), zero outside the valid positions; the remaining channels
 * pass through. */
__kernel void gmlp_shift_tokens(__global const float *hist, int hist_rows, int p0, int m, __global float *out,
                                int dim, int segments, int seg_w, int first)
{
    const int c = get_global_id(0);
    const size_t r = get_global_id(1);
    const size_t b = r / (size_t)m;
    const int i = p0 + (int)(r % (size_t)m), s = c / seg_w;
    const int src = s < segments ? i - (first + s) : i;
    out[r * dim + c] = src >= 0 && src < p0 + m ? hist[(b * hist_rows + src) * dim + c] : 0.0f;
}
