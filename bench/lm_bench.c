/* gmlp-bench's language-model part: random-weight g-mlp-pytorch LMs (the
 * enwik8 configuration of its train.py at seq 768, and seq 256), timed as a
 * full pass over batch x seq_len tokens and as generation of seq_len tokens
 * from a one-token prompt, cached and uncached. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct lm_cfg {
    const char *name;
    int vocab, dim, depth, ffn, seq_len;
} lm_cfg;

static const lm_cfg standard[] = {
    {"gmlp_lm_seq256", 256, 512, 8, 2048, 256},
    {"gmlp_lm_seq768", 256, 512, 8, 2048, 768}, /* g-mlp-pytorch train.py (enwik8) */
};
static const lm_cfg tiny[] = {{"gmlp_lm_tiny", 256, 32, 2, 128, 24}};

static void row(json_t *rows, FILE *csv, const char *dev, const char *name, size_t batch, const char *mode,
                double secs, double tokens)
{
    printf("%-28.28s %-16s %6zu %-9s %12.1f %12.3f\n", dev, name, batch, mode, tokens / secs, secs * 1e3);
    json_array_append_new(rows, json_pack("{s:s, s:s, s:I, s:s, s:f, s:f}", "device", dev, "model", name, "batch",
                                          (json_int_t)batch, "mode", mode, "tokens_per_s", tokens / secs, "seconds",
                                          secs));
    if (csv)
        fprintf(csv, "%s,%s %s,,,%zu,%.6f,,,,,,,,,%.2f\n", dev, name, mode, batch, secs, tokens / secs);
}

/* Generates len tokens from token 0: with a state (cached) or by a full pass
 * over the prefix for each one (uncached).  Returns the seconds taken. */
static double generate(gmlp_model *m, const gmlp_config *c, int cached, size_t len, gmlp_status *st)
{
    size_t V = (size_t)c->vocab_size;
    int32_t *seq = calloc(len + 1, sizeof *seq);
    float *logits = malloc(len * V * sizeof *logits);
    gmlp_lm_state *s = NULL;
    *st = seq && logits ? GMLP_OK : GMLP_ERR_HOST_MEMORY;
    if (*st == GMLP_OK && cached)
        *st = gmlp_lm_state_create(m, 1, &s);
    double t = bench_now();
    for (size_t i = 0; *st == GMLP_OK && i < len; i++) {
        *st = cached ? gmlp_lm_step(s, seq + i, logits) : gmlp_lm_logits(m, seq, 1, i + 1, logits);
        const float *last = logits + (cached ? 0 : i * V);
        int32_t best = 0;
        for (size_t v = 1; v < V; v++)
            best = last[v] > last[best] ? (int32_t)v : best;
        seq[i + 1] = best;
    }
    t = bench_now() - t;
    gmlp_lm_state_free(s);
    free(seq);
    free(logits);
    return t;
}

void bench_lm(const char *dev_spec, int tiny_set, int runs, json_t *rows, FILE *csv)
{
    const lm_cfg *set = tiny_set ? tiny : standard;
    size_t n = tiny_set ? sizeof tiny / sizeof *tiny : sizeof standard / sizeof *standard;
    printf("\n%-28s %-16s %6s %-9s %12s %12s\n", "device", "language model", "batch", "mode", "tokens/s", "ms");
    for (size_t i = 0; i < n; i++) {
        gmlp_config c = {.arch = GMLP_ARCH_LM, .vocab_size = set[i].vocab, .dim = set[i].dim, .depth = set[i].depth,
                         .ffn_dim = set[i].ffn, .seq_len = set[i].seq_len, .heads = 1, .causal = 1};
        size_t size, S = (size_t)c.seq_len, V = (size_t)c.vocab_size;
        unsigned char *file = bench_random_model(&c, &size);
        gmlp_context *ctx = NULL;
        gmlp_model *m = NULL;
        if (!file || gmlp_context_create(dev_spec, &ctx) != GMLP_OK ||
            gmlp_model_load_memory(ctx, file, size, &m) != GMLP_OK) {
            fprintf(stderr, "gmlp-bench: %s: %s\n", set[i].name, gmlp_last_error(ctx));
            gmlp_context_destroy(ctx);
            free(file);
            continue;
        }
        const char *dev = gmlp_context_device_name(ctx);
        static const size_t batches[] = {1, 8};
        for (size_t b = 0; b < 2; b++) {
            size_t B = batches[b];
            int32_t *tok = calloc(B * S, sizeof *tok);
            float *logits = malloc(B * S * V * sizeof *logits);
            double *times = malloc((size_t)(runs + 1) * sizeof *times);
            gmlp_status st = tok && logits && times ? gmlp_lm_logits(m, tok, B, S, logits) : GMLP_ERR_HOST_MEMORY;
            for (int r = 0; r < runs && st == GMLP_OK; r++) {
                double t = bench_now();
                st = gmlp_lm_logits(m, tok, B, S, logits);
                times[r] = bench_now() - t;
            }
            if (st == GMLP_OK) {
                row(rows, csv, dev, set[i].name, B, "full", bench_median(times, runs, NULL), (double)(B * S));
            } else {
                fprintf(stderr, "gmlp-bench: %s batch %zu: %s\n", set[i].name, B, gmlp_last_error(ctx));
            }
            free(tok), free(logits), free(times);
        }
        gmlp_status st;
        generate(m, &c, 1, 4, &st); /* warm-up: workspace and state buffers */
        for (int cached = 1; cached >= 0 && st == GMLP_OK; cached--) {
            double t = generate(m, &c, cached, S, &st);
            if (st == GMLP_OK)
                row(rows, csv, dev, set[i].name, 1, cached ? "cached" : "uncached", t, (double)S);
        }
        if (st != GMLP_OK)
            fprintf(stderr, "gmlp-bench: %s generation: %s\n", set[i].name, gmlp_last_error(ctx));
        gmlp_model_free(m);
        gmlp_context_destroy(ctx);
        free(file);
    }
}
