/* The windows of an evaluation and their scores (lm_eval.h). */
#include "lm_eval.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Floats of logits one call may return: full windows go to the library
 * together (fewer launches) up to this much host memory (64 MiB). */
#define BATCH_FLOATS ((size_t)16 << 20)

size_t app_lm_windows(size_t n, size_t seq_len, size_t stride, app_lm_window *out)
{
    size_t count = 0, last = 0; /* the last target scored so far */
    for (size_t begin = 0; last < n - 1; begin += stride, count++) {
        /* begin <= last < n - 1: stride <= seq_len reaches no further than the previous window's end */
        size_t len = n - 1 - begin < seq_len ? n - 1 - begin : seq_len;
        if (out)
            out[count] = (app_lm_window){.begin = begin, .len = len, .scored = begin + len - last};
        last = begin + len;
    }
    return count;
}

/* -ln softmax(l)[target], in double. */
static double nll(const float *l, size_t V, int32_t target)
{
    double mx = l[0], s = 0;
    for (size_t v = 1; v < V; v++)
        mx = l[v] > mx ? l[v] : mx;
    for (size_t v = 0; v < V; v++)
        s += exp((double)l[v] - mx);
    return log(s) + mx - l[target];
}

gmlp_status app_lm_eval(gmlp_model *model, const gmlp_config *c, const int32_t *tok, size_t n, size_t stride,
                        app_lm_progress progress, void *user, app_lm_score *out)
{
    const size_t L = (size_t)c->seq_len, V = (size_t)c->vocab_size;
    const size_t count = app_lm_windows(n, L, stride, NULL);
    size_t batch = BATCH_FLOATS / (L * V);
    batch = batch < 1 ? 1 : batch > count ? count : batch;
    app_lm_window *w = malloc(count * sizeof *w);
    int32_t *in = malloc(batch * L * sizeof *in);
    float *logits = malloc(batch * L * V * sizeof *logits);
    gmlp_status st = w && in && logits ? GMLP_OK : GMLP_ERR_HOST_MEMORY;
    *out = (app_lm_score){0};
    if (st == GMLP_OK)
        app_lm_windows(n, L, stride, w);
    for (size_t i = 0; st == GMLP_OK && i < count;) {
        /* windows of one length together: every one but (perhaps) the last is seq_len long */
        size_t b = 1;
        while (b < batch && i + b < count && w[i + b].len == w[i].len)
            b++;
        const size_t len = w[i].len;
        for (size_t j = 0; j < b; j++)
            memcpy(in + j * len, tok + w[i + j].begin, len * sizeof *in);
        if ((st = gmlp_lm_logits(model, in, b, len, logits)) != GMLP_OK)
            break;
        for (size_t j = 0; j < b; j++) {
            const app_lm_window *x = &w[i + j];
            for (size_t p = len - x->scored; p < len; p++) /* output p predicts token begin + p + 1 */
                out->nll += nll(logits + (j * len + p) * V, V, tok[x->begin + p + 1]);
            out->scored += x->scored;
        }
        out->windows += b;
        i += b;
        if (progress && progress(user, out, count))
            break;
    }
    free(w);
    free(in);
    free(logits);
    return st;
}
