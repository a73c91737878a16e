/* Language-model kernels (g-mlp-pytorch gMLP): token embedding, token shift
 * and the tiny attention's masked softmax.  Activations hold m consecutive
 * positions p0 .. p0+m-1 of each sequence; "history" buffers hold positions
 * 0 .. hist_rows-1 of each sequence, of which 0 .. p0+m-1 are valid. */

/* x[r, :] = table[tokens[r], :]; token ids were range-checked on the host. */
__kernel void gmlp_embed(__global const int *tokens, __global const float *table, __global float *x, int dim)
{
    const int c = get_global_id(0);
    const size_t r = get_global_id(1);
    x[r * dim + c] = table[(size_t)tokens[r] * dim + c];
}

/* g-mlp-pytorch PreShiftTokens: channel segment s < segments (each seg_w
 * wide) of position i takes position i - (first + s), zero outside the valid
 * positions; the remaining channels pass through. */
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

/* Row-wise softmax(scale * sim) over the first len columns of rows of ld
 * floats, in place; with causal, position p0 + r % m sees only columns up to
 * itself and the rest become 0 (g-mlp-pytorch fills them with -FLT_MAX).
 * One work-item per row: the attention is tiny (len <= seq_len). */
__kernel void gmlp_softmax_rows(__global float *sim, int ld, int len, int p0, int m, int causal, float scale)
{
    const size_t r = get_global_id(0);
    __global float *row = sim + r * ld;
    const int last = causal ? p0 + (int)(r % (size_t)m) : len - 1;
    float mx = -MAXFLOAT;
    for (int j = 0; j <= last; j++)
        mx = fmax(mx, row[j] * scale);
    float sum = 0.0f;
    for (int j = 0; j <= last; j++) {
        float e = exp(row[j] * scale - mx);
        row[j] = e;
        sum += e;
    }
    const float inv = 1.0f / sum;
    for (int j = 0; j < len; j++)
        row[j] = j <= last ? row[j] * inv : 0.0f;
}
