/* Token sampling on the host: temperature, top-k, then top-p (nucleus) over
 * what top-k kept, as Hugging Face's generate orders them.  Deterministic:
 * a splitmix64 stream, double arithmetic, ties broken by the lower id. */
#include <math.h>
#include <stdlib.h>

#include "sample/sample.h"

typedef struct cand {
    double p;
    int32_t id;
} cand;

static int by_prob(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->p != y->p)
        return x->p < y->p ? 1 : -1;
    return (x->id > y->id) - (x->id < y->id);
}

/* splitmix64: a full-period 64-bit stream from any seed. */
static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int32_t argmax(const float *logits, int vocab)
{
    int32_t best = 0;
    for (int i = 1; i < vocab; i++)
        if (logits[i] > logits[best])
            best = i;
    return best;
}

gmlp_status gmlp_sample_token(const float *logits, int vocab, const gmlp_generate_options *o, uint64_t *rng,
                              int32_t *token, gmlp_error *err)
{
    if (!logits || !o || !rng || !token || vocab < 1)
        return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT,
                         "gmlp_sample: NULL argument or vocab %d < 1", vocab);
    if (!(o->top_p > 0 && o->top_p <= 1) || o->top_k < 0 || isnan(o->temperature))
        return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT,
                         "gmlp_sample: top_p %g must be in (0, 1], top_k %d >= 0, temperature a number",
                         (double)o->top_p, o->top_k);
    for (int i = 0; i < vocab; i++)
        if (!isfinite(logits[i]))
            return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT, "gmlp_sample: logit %d is %g", i,
                             (double)logits[i]);
    if (o->temperature <= 0 || o->top_k == 1) {
        *token = argmax(logits, vocab);
        return GMLP_OK;
    }
    cand *c = malloc((size_t)vocab * sizeof *c);
    if (!c)
        return gmlp_fail(err, GMLP_ERR_HOST_MEMORY, "gmlp_sample: out of host memory");
    double mx = logits[argmax(logits, vocab)];
    for (int i = 0; i < vocab; i++) {
        c[i].p = exp(((double)logits[i] - mx) / o->temperature);
        c[i].id = i;
    }
    qsort(c, (size_t)vocab, sizeof *c, by_prob);
    int keep = o->top_k > 0 && o->top_k < vocab ? o->top_k : vocab;
    double kept = 0;
    for (int i = 0; i < keep; i++)
        kept += c[i].p;
    if (o->top_p < 1) {
        double cum = 0;
        int i = 0;
        while (i < keep && cum < o->top_p * kept)
            cum += c[i++].p;
        keep = i > 0 ? i : 1;
        kept = cum > 0 ? cum : c[0].p;
    }
    /* 53 random bits: u uniform in [0, kept) */
    double u = (double)(next(rng) >> 11) * 0x1.0p-53 * kept, cum = 0;
    int i = 0;
    while (i < keep - 1 && (cum += c[i].p) <= u)
        i++;
    *token = c[i].id;
    free(c);
    return GMLP_OK;
}

