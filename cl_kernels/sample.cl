/* Token sampling on the device (lib/ops/sample.c), the draw shared with the
 * host's sampler (sample_draw.h): the same token and generator state bit
 * for bit.  A program of its own: it needs cl_khr_fp64. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF
#define GMLP_SAMPLE_SPACE __local
#include "sample_draw.h"

/* One work-group, the rows of logits (V each) in turn: the k best
 * candidates by logit (descending, ties to the lower id; k <= min(V,
 * GMLP_SAMPLE_MAX)), each placed by its rank, counted over the row up to k
 * (k = 1: a reduction); then one work-item takes the best (greedy) or
 * draws among the k under t and top_p with rng[b].  The token goes to the
 * step's token slot step[1 + b] and to tokens[b * seq_len + step[0]]; then
 * the position step[0] advances.  One group, so that no other reads the
 * position it writes.  A non-finite logit sets flags[0], the first time,
 * to 1 + its index in the whole batch and flags[1] to the position (the
 * token is then 0). */
__kernel void gmlp_sample(__global const float *logits, int V, int rows, int k, int greedy, float t, float top_p,
                          __global ulong *rng, __global int *step, int seq_len, __global int *tokens,
                          __global int *flags)
{
    __local float cl[GMLP_SAMPLE_MAX];
    __local int cid[GMLP_SAMPLE_MAX];
    __local int bad;
    const int lid = get_local_id(0), wg = get_local_size(0);
    for (int b = 0; b < rows; b++) {
        __global const float *row = logits + (size_t)b * V;
        if (lid == 0)
            bad = V;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int i = lid; i < V; i += wg)
            if (!isfinite(row[i]))
                atomic_min(&bad, i);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (bad == V && k == 1) { /* the best alone: each work-item's, merged below, O(V) not O(V^2) */
            int bi = -1;
            for (int i = lid; i < V; i += wg)
                if (bi < 0 || row[i] > row[bi])
                    bi = i;
            cl[lid] = bi < 0 ? 0.0f : row[bi];
            cid[lid] = bi;
        } else if (bad == V) {
            for (int i = lid; i < V; i += wg) {
                const float x = row[i];
                int r = 0;
                for (int j = 0; j < V && r < k; j++)
                    r += row[j] > x || (row[j] == x && j < i);
                if (r < k) {
                    cl[r] = x;
                    cid[r] = i;
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0) { /* the one work-item that reads and writes the step buffer, the log and the flags */
            const int pos = step[0];
            if (bad == V && k == 1) /* descending, ties to the lower id; work-item 0 holds id 0's */
                for (int j = 1; j < wg; j++)
                    if (cid[j] >= 0 && (cl[j] > cl[0] || (cl[j] == cl[0] && cid[j] < cid[0])))
                        cl[0] = cl[j], cid[0] = cid[j];
            int token = 0;
            if (bad < V) {
                if (!flags[0]) /* the first such step: the tokens before it stand */
                    flags[0] = 1 + b * V + bad, flags[1] = pos;
            } else if (greedy) {
                token = cid[0];
            } else {
                gmlp_u64 r = rng[b];
                token = gmlp_sample_pick(cl, cid, k, t, top_p, &r);
                rng[b] = r;
            }
            step[1 + b] = token;
            tokens[(size_t)b * seq_len + pos] = token;
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* cl, cid and bad are the next row's */
    }
    if (lid == 0)
        step[0] += 1;
}
