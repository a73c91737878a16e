/* Row-wise softmax(scale * sim) over the first len columns of rows of ld
 * floats, in place (the tiny attention of the language models); with causal,
 * row r is position p0 + r % m and sees only columns up to itself, the rest
 * becoming 0 (g-mlp-pytorch fills them with -FLT_MAX).  One work-item per
 * row: the attention is tiny (len <= seq_len). */
__kernel void gmlp_softmax_rows(__global float *sim, ulong ld, int len, int p0, int m, int causal, float scale)
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
