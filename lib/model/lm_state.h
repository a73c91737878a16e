/* The decoding state behind gmlp_lm_state (lock held by the caller). */
#ifndef GMLP_LM_STATE_H
#define GMLP_LM_STATE_H

#include "model/model.h"

struct gmlp_lm_state {
    gmlp_model *model;
    size_t batch;
    size_t pos;        /* positions held in the caches (<= seq_len) */
    size_t fed;        /* tokens fed in all */
    int stale;         /* the caches disagree with window: recompute before extending */
    int32_t *window;   /* batch x seq_len: the tokens at cached positions */
    int32_t *scratch;  /* batch x seq_len: a recompute's input */
    gmlp_lm_cache cache;
    /* the fused step (model/lm_step.c): the position and the tokens on the
     * device (1 + batch ints), their staging on the host, the recorded step
     * and the workspace generation it was recorded on */
    cl_mem step;
    int32_t *step_host;
    gmlp_recording *step_rec;
    size_t step_generation;
};

gmlp_status gmlp_lm_state_make(gmlp_model *m, size_t batch, gmlp_lm_state **out);
void gmlp_lm_state_destroy(gmlp_lm_state *s);
/* tokens: batch x n; logits: batch x vocab for the last, or NULL. */
gmlp_status gmlp_lm_state_feed(gmlp_lm_state *s, const int32_t *tokens, size_t n, float *logits);

/* Whether m decodes one token through the fused step: causal, no tiny
 * attention, float weights in FP32, rows within GMLP_LM_STEP_MAX, and not
 * turned off (GMLP_LM_STEP=0). */
int gmlp_lm_step_supported(const gmlp_model *m);
/* One token per sequence (tokens: batch) at position s->pos < seq_len
 * through the fused step; logits: batch x vocab, or NULL.  Leaves s->pos to
 * the caller. */
gmlp_status gmlp_lm_step_run(gmlp_lm_state *s, const int32_t *tokens, float *logits);

#endif
