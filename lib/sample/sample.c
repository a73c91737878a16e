/* Choosing from logits on the host.  Token sampling: temperature, top-k,
 * then top-p (nucleus) over what top-k kept, as Hugging Face's generate
 * orders them; deterministic: a splitmix64 stream, double arithmetic, the
 * draw shared with the device's sampler (cl_kernels/sample_draw.h).  The
 * top k classes with their softmax probabilities.  Ties: the lower id first. */
#include <math.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "sample/sample.h"
#include "sample_draw.h"

/* A value (a probability or a logit) of an id. */
typedef struct cand {
    double v;
    int32_t id;
} cand;

/* Descending value, ties to the lower id. */
static int descending(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? 1 : -1;
    return (x->id > y->id) - (x->id < y->id);
}

uint64_t gmlp_sample_skip(uint64_t rng, size_t draws)
{
    return rng + GMLP_SAMPLE_GOLDEN * (uint64_t)draws;
}

static int32_t argmax(const float *logits, int vocab)
{
    int32_t best = 0;
    for (int i = 1; i < vocab; i++)
        if (logits[i] > logits[best])
            best = i;
    return best;
}

gmlp_status gmlp_sample_check(const gmlp_generate_options *o, const char *fn, gmlp_error *err)
{
    /* the front ends' bound (GMLP_TEMPERATURE_MAX); NaN fails the comparison; <= 0 is greedy */
    if (!(o->temperature <= GMLP_TEMPERATURE_MAX))
        return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT, "%s: temperature %g must be at most %g (<= 0: greedy)", fn,
                         (double)o->temperature, GMLP_TEMPERATURE_MAX);
    if (!(o->top_p > 0 && o->top_p <= 1) || o->top_k < 0)
        return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT, "%s: top_p %g must be in (0, 1], top_k %d >= 0", fn,
                         (double)o->top_p, o->top_k);
    return GMLP_OK;
}

gmlp_status gmlp_sample_token(const float *logits, int vocab, const gmlp_generate_options *o, uint64_t *rng,
                              int32_t *token, gmlp_error *err)
{
    if (!logits || !o || !rng || !token || vocab < 1)
        return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT,
                         "gmlp_sample: NULL argument or vocab %d < 1", vocab);
    GMLP_TRY(gmlp_sample_check(o, "gmlp_sample", err));
    for (int i = 0; i < vocab; i++)
        if (!isfinite(logits[i]))
            return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT, "gmlp_sample: logit %d is %g", i,
                             (double)logits[i]);
    if (gmlp_sample_greedy(o->temperature, o->top_k)) {
        *token = argmax(logits, vocab);
        return GMLP_OK;
    }
    /* candidates by logit (sample_draw.h: the order of their weights) */
    cand *c = gmlp_malloc((size_t)vocab * sizeof *c);
    float *l = gmlp_malloc((size_t)vocab * sizeof *l);
    int *id = gmlp_malloc((size_t)vocab * sizeof *id);
    if (!c || !l || !id) {
        free(c), free(l), free(id);
        return gmlp_fail(err, GMLP_ERR_HOST_MEMORY, "gmlp_sample: out of host memory");
    }
    for (int i = 0; i < vocab; i++)
        c[i] = (cand){logits[i], i};
    qsort(c, (size_t)vocab, sizeof *c, descending);
    for (int i = 0; i < vocab; i++)
        l[i] = (float)c[i].v, id[i] = c[i].id;
    const int keep = o->top_k > 0 && o->top_k < vocab ? o->top_k : vocab;
    *token = gmlp_sample_pick(l, id, keep, o->temperature, o->top_p, rng);
    free(c), free(l), free(id);
    return GMLP_OK;
}

/* A logit's unnormalised softmax weight in double, shifted by the maximum mx:
 * exp never overflows.  An infinite maximum (+inf, or -inf everywhere) shares
 * all the mass between the logits equal to it. */
static double softmax_weight(double logit, double mx)
{
    return isinf(mx) ? logit == mx : exp(logit - mx);
}

gmlp_status gmlp_sample_topk(const float *logits, int n, int k, int32_t *index, float *prob, gmlp_error *err)
{
    if (!logits || !index || n < 1 || k < 1 || k > n)
        return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT,
                         "gmlp_softmax_topk: needs logits and index, and 1 <= k (%d) <= n (%d)", k, n);
    for (int i = 0; i < n; i++)
        if (isnan(logits[i]))
            return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT, "gmlp_softmax_topk: logit %d is NaN", i);
    cand *r = gmlp_malloc((size_t)n * sizeof *r);
    if (!r)
        return gmlp_fail(err, GMLP_ERR_HOST_MEMORY, "gmlp_softmax_topk: out of host memory");
    for (int i = 0; i < n; i++)
        r[i] = (cand){logits[i], i};
    qsort(r, (size_t)n, sizeof *r, descending);
    const double mx = r[0].v;
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += softmax_weight(r[i].v, mx);
    for (int i = 0; i < k; i++) {
        index[i] = r[i].id;
        if (prob)
            prob[i] = (float)(softmax_weight(r[i].v, mx) / sum);
    }
    free(r);
    return GMLP_OK;
}
