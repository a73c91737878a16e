/* A causal language model's loss over a text: bits per byte and perplexity,
 * in windows of at most seq_len tokens every `stride` tokens (gmlp-generate
 * --eval).  Each window's inputs are tokens [begin, begin + len), which
 * predict tokens begin + 1 .. begin + len; a window scores the targets past
 * the previous window's last one, so that every token but the first is
 * scored exactly once, and with the context of up to seq_len - stride tokens
 * before it where the window has them (Hugging Face's "perplexity of
 * fixed-length models" with a stride).  Stride seq_len: disjoint windows, as
 * tools/train_lm.py's held-out figure. */
#ifndef APP_LM_EVAL_H
#define APP_LM_EVAL_H

#include <gmlp.h>
#include <stddef.h>

typedef struct app_lm_window {
    size_t begin, len; /* inputs: tokens [begin, begin + len) */
    size_t scored;     /* the window's last `scored` predictions count */
} app_lm_window;

/* The windows over n tokens (n >= 2) for context seq_len and stride (1 ..
 * seq_len), written to out when not NULL; returns how many there are. */
size_t app_lm_windows(size_t n, size_t seq_len, size_t stride, app_lm_window *out);

typedef struct app_lm_score {
    size_t windows, scored; /* scored = n - 1 once done */
    double nll;             /* the scored targets' summed -ln p, in float64 */
} app_lm_score;

/* Called after each forward with the score so far and the windows in all;
 * nonzero stops the evaluation. */
typedef int (*app_lm_progress)(void *user, const app_lm_score *so_far, size_t windows);

/* Scores tok[0..n) with model (causal, config c).  Returns the library's
 * status (its message in gmlp_last_error(ctx)) or GMLP_ERR_HOST_MEMORY; a
 * stop by progress leaves *out partial and returns GMLP_OK. */
gmlp_status app_lm_eval(gmlp_model *model, const gmlp_config *c, const int32_t *tok, size_t n, size_t stride,
                        app_lm_progress progress, void *user, app_lm_score *out);

#endif
