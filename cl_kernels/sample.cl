/* Token sampling on the device (lib/ops/sample.c), the draw shared with the
 * host's sampler (sample_draw.h): the same token and generator state bit
 * for bit.  A program of its own: it needs cl_khr_fp64. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF
#define GMLP_SAMPLE_SPACE __local
#include "sample_draw.h"

/* A work-group per row b of logits (V each): the k best candidates by
 * logit (descending, ties to the lower id; k <= min(V, GMLP_SAMPLE_MAX)),
 * each placed by its rank, counted over the row up to k (k = 1: a
 * reduction); then one
 * work-item takes the best (greedy) or draws among the k under t and top_p
 * with rng[b].  The token goes to the step's token slot step[1 + b] and to
 * tokens[b * seq_len + step[0]]; the last group to finish advances the
 * position step[0] (flags[0] counts them).  A non-finite logit sets
 * flags[1] to 1 + its index in the whole batch (the token is then 0) and,
 * the first time, flags[2] to the position. */
__kernel void gmlp_sample(__global const float *logits, int V, int k, int greedy, float t, float top_p,
                          __global ulong *rng, __global int *step, int seq_len, __global int *tokens,
                          __global int *flags)
{
    __local float cl[GMLP_SAMPLE_MAX];
    __local int cid[GMLP_SAMPLE_MAX];
    __local int bad;
    const int lid = get_local_id(0), wg = get_local_size(0), b = get_group_id(0);
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
    if (lid != 0)
        return;
    const int pos = step[0]; /* read by the one work-item that writes it, after the others are done */
    if (bad == V && k == 1) /* descending, ties to the lower id; work-item 0 holds id 0's */
        for (int j = 1; j < wg; j++)
            if (cid[j] >= 0 && (cl[j] > cl[0] || (cl[j] == cl[0] && cid[j] < cid[0])))
                cl[0] = cl[j], cid[0] = cid[j];
    int token = 0;
    if (bad < V) {
        if (atomic_cmpxchg(&flags[1], 0, 1 + b * V + bad) == 0)
            flags[2] = pos; /* the first such step: the tokens before it stand */
    } else if (greedy) {
        token = cid[0];
    } else {
        gmlp_u64 r = rng[b];
        token = gmlp_sample_pick(cl, cid, k, t, top_p, &r);
        rng[b] = r;
    }
    step[1 + b] = token;
    tokens[(size_t)b * seq_len + pos] = token;
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    if (atomic_inc(&flags[0]) == (int)get_num_groups(0) - 1) { /* every group has read the position */
        step[0] = pos + 1;
        flags[0] = 0;
    }
}
