/* Choosing from logits on the host: a token (gmlp_sample), the top k classes
 * (gmlp_softmax_topk). */
#ifndef GMLP_SAMPLE_H
#define GMLP_SAMPLE_H

#include "core/error.h"

/* Whether these options take the most likely token (greedy never draws). */
static inline int gmlp_sample_greedy(float temperature, int top_k)
{
    return temperature <= 0 || top_k == 1;
}

/* o's temperature, top_k and top_p in range, else an argument error from
 * fn: what gmlp_sample and gmlp_lm_generate accept. */
gmlp_status gmlp_sample_check(const gmlp_generate_options *o, const char *fn, gmlp_error *err);

/* One token from logits under o's temperature, top_k and top_p, advancing
 * *rng by one draw (argument checks included). */
gmlp_status gmlp_sample_token(const float *logits, int vocab, const gmlp_generate_options *o, uint64_t *rng,
                              int32_t *token, gmlp_error *err);

/* The generator state rng after draws more draws (each advances it by a
 * constant: splitmix64). */
uint64_t gmlp_sample_skip(uint64_t rng, size_t draws);

/* gmlp_softmax_topk: the k most probable of n logits, descending (ties: the
 * lower index first), with their softmax probabilities (prob may be NULL). */
gmlp_status gmlp_sample_topk(const float *logits, int n, int k, int32_t *index, float *prob, gmlp_error *err);

#endif
