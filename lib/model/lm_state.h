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
    /* the step with sampling (model/lm_sample.c): the options recorded, a
     * generator state a sequence (ulong), a token log (batch x seq_len
     * ints), the kernel's error flag and failing position (2 ints), the host's
     * staging of the generator state, the recording and its generation */
    float samp_t, samp_p;
    int samp_k;
    cl_mem samp_rng, samp_log, samp_flags;
    uint64_t samp_rng_host;
    gmlp_recording *samp_rec;
    size_t samp_generation;
};

gmlp_status gmlp_lm_state_make(gmlp_model *m, size_t batch, gmlp_lm_state **out);
void gmlp_lm_state_destroy(gmlp_lm_state *s);
/* tokens: batch x n; logits: batch x vocab for the last, or NULL. */
gmlp_status gmlp_lm_state_feed(gmlp_lm_state *s, const int32_t *tokens, size_t n, float *logits);

/* Whether m decodes one token through the fused step: causal, no tiny
 * attention, float weights in FP32, rows within GMLP_LM_STEP_MAX, and not
 * turned off (GMLP_LM_STEP=0). */
int gmlp_lm_step_supported(const gmlp_model *m);
/* The step's commands (the layers and to_logits into ws.out, no sampling),
 * for gmlp_lm_step_replay; arg: the state. */
gmlp_status gmlp_lm_step_commands(gmlp_model *m, void *arg);
/* Checks tokens (batch), reserves the workspace for one token a sequence
 * and enqueues the step buffer's write: the position s->pos and tokens. */
gmlp_status gmlp_lm_step_load(gmlp_lm_state *s, const int32_t *tokens);
/* Enqueues commands(m, s): plainly where profiling (which names each
 * kernel's own event) or where they cannot be recorded, else by replaying
 * *rec, recorded first where missing or made on since replaced workspace
 * buffers (*generation). */
gmlp_status gmlp_lm_step_replay(gmlp_lm_state *s, gmlp_recording **rec, size_t *generation,
                                gmlp_status (*commands)(gmlp_model *, void *));

/* Whether gmlp_lm_sample_run covers generation by s under o: the fused
 * step, one sequence, device sampling on (GMLP_SAMPLE_DEVICE) and covering
 * the vocabulary and options (ops/ops.h). */
int gmlp_lm_sample_supported(const gmlp_lm_state *s, const gmlp_generate_options *o);
/* n steps run ahead on the device from token at s->pos (pos + n <= seq_len,
 * the caches fresh), each sampling the next token under o from generator
 * state rng (advanced once a draw), with one read back: out, *taken
 * tokens, n unless a step met a non-finite logit (it then stands first
 * after them, for the host's sampler to report).  Leaves s as if token and
 * out[0 .. *taken - 2] had been fed. */
gmlp_status gmlp_lm_sample_run(gmlp_lm_state *s, const gmlp_generate_options *o, int32_t token, uint64_t rng,
                               size_t n, int32_t *out, size_t *taken);

/* One token per sequence (tokens: batch) at position s->pos < seq_len
 * through the fused step; logits: batch x vocab, or NULL.  Leaves s->pos to
 * the caller. */
gmlp_status gmlp_lm_step_run(gmlp_lm_state *s, const int32_t *tokens, float *logits);

#endif
