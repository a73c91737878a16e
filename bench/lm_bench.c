/* gmlp-bench's language-model part: random-weight g-mlp-pytorch LMs (the
 * enwik8 configuration of its train.py at seq 768, and seq 256) or a given LM
 * file, per precision, timed as a full pass over batch x seq_len tokens, as generation of
 * seq_len tokens from a one-token prompt, cached and uncached (a step and the host's argmax each),
 * and through gmlp_lm_generate, greedy and sampled (temperature 0.8, top-k 40, top-p 0.95: on the
 * device where it samples there, seq_len - 1 tokens within the window): each after
 * --warmup untimed runs (the kernels' compilation, buffers), the median and
 * spread of --runs. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "common.h"

#define LM(name, vocab, d, dep, ffn, seq)                                                                         \
    { name, {.arch = GMLP_ARCH_LM, .vocab_size = vocab, .dim = d, .depth = dep, .ffn_dim = ffn, .seq_len = seq,  \
             .heads = 1, .causal = 1} }
static const bench_cfg standard[] = {
    LM("gmlp_lm_seq256", 256, 512, 8, 2048, 256),
    LM("gmlp_lm_seq768", 256, 512, 8, 2048, 768), /* g-mlp-pytorch train.py (enwik8) */
};
static const bench_cfg tiny[] = {LM("gmlp_lm_tiny", 256, 32, 2, 128, 24)};
#undef LM

static const size_t full_batches[] = {1, 8};

const bench_cfg *bench_lm_set(int tiny_set, size_t *n)
{
    *n = tiny_set ? sizeof tiny / sizeof *tiny : sizeof standard / sizeof *standard;
    return tiny_set ? tiny : standard;
}

double bench_lm_work(const gmlp_config *c, const bench_opts *o)
{
    double S = c->seq_len, h = c->ffn_dim / 2.0;
    double per_token = 2 * (c->depth * (c->dim * (double)c->ffn_dim + h * S + h * c->dim) + c->dim * (double)c->vocab_size);
    double tokens = (full_batches[0] + full_batches[1]) * S + 3 * S + S * (S + 1) / 2; /* full, cached x 3, uncached */
    return per_token * tokens * (o->warmup + o->runs);
}

void bench_lm_header(const bench_run *b)
{
    printf("\n%-28s %-*s %-4s %-17s %6s %-9s %12s %10s %9s\n", "device", b->name_w, "language model", "prec", "engine",
           "batch", "mode", "tokens/s", "median ms", "spread ms");
}

/* What the rows of one model are of: the device, the model, its precision and engine. */
typedef struct lm_rows {
    const char *dev, *name, *precision;
    char engine[64];
} lm_rows;

static void row(bench_run *b, const lm_rows *l, size_t batch, const char *mode, double *times, double tokens)
{
    double spread, secs = bench_median(times, b->o.runs, &spread);
    printf("%-28.28s %-*.*s %-4s %-17.17s %6zu %-9s %12.1f %10.3f %9.3f\n", l->dev, b->name_w, b->name_w,
           bench_base_name(l->name), l->precision, l->engine, batch, mode, tokens / secs, secs * 1e3, spread * 1e3);
    json_array_append_new(b->rows, json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:f, s:f, s:f}", "device", l->dev,
                                             "model", l->name, "precision", l->precision, "engine", l->engine, "batch",
                                             (json_int_t)batch, "mode", mode, "tokens_per_s", tokens / secs,
                                             "seconds", secs, "spread_s", spread));
    if (b->csv)
        fprintf(b->csv, "%s,%s %s,,,%s,%s,%zu,%.6f,%.6f,,,,,,,,,%.2f\n", l->dev, l->name, mode, l->precision,
                l->engine, batch, secs, spread, tokens / secs);
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

/* gmlp_lm_generate of seq_len - 1 tokens after token 0, greedy or sampled
 * (no stop token: the text's length is fixed).  Returns the seconds taken. */
static double generate_api(gmlp_model *m, const gmlp_config *c, int sampled, gmlp_status *st)
{
    const size_t n = (size_t)c->seq_len - 1;
    int32_t *out = malloc((n ? n : 1) * sizeof *out), prompt = 0;
    gmlp_generate_options g;
    gmlp_generate_options_default(&g);
    g.temperature = sampled ? 0.8f : 0;
    g.top_k = 40, g.top_p = 0.95f, g.seed = 1, g.max_tokens = n;
    size_t got;
    double t = bench_now();
    *st = out ? gmlp_lm_generate(m, &prompt, 1, &g, out, &got) : GMLP_ERR_HOST_MEMORY;
    t = bench_now() - t;
    free(out);
    return t;
}

int bench_lm_one(bench_run *b, const char *dev_spec, const char *name, gmlp_precision precision,
                 const unsigned char *file, size_t size)
{
    const bench_opts *o = &b->o;
    gmlp_context *ctx = NULL;
    gmlp_model *m = NULL;
    gmlp_load_options lo;
    gmlp_load_options_default(&lo);
    lo.precision = precision;
    lm_rows l = {.name = name};
    if (gmlp_context_create(dev_spec, &ctx) != GMLP_OK ||
        gmlp_model_load_memory_ex(ctx, file, size, &lo, &m) != GMLP_OK ||
        !app_model_precision(m, &l.precision, l.engine, sizeof l.engine)) {
        fprintf(stderr, "gmlp-bench: %s: %s\n", name, gmlp_last_error(ctx));
        gmlp_model_free(m);
        gmlp_context_destroy(ctx);
        return 0;
    }
    gmlp_config c = {.size = sizeof c};
    gmlp_model_config(m, &c);
    l.dev = gmlp_context_device_name(ctx);
    size_t S = (size_t)c.seq_len, V = (size_t)c.vocab_size;
    double *times = malloc((size_t)o->runs * sizeof *times);
    gmlp_status st = times ? GMLP_OK : GMLP_ERR_HOST_MEMORY;
    for (size_t bi = 0; bi < 2 && st == GMLP_OK; bi++) {
        size_t B = full_batches[bi];
        int32_t *tok = calloc(B * S, sizeof *tok);
        float *logits = malloc(B * S * V * sizeof *logits);
        st = tok && logits ? GMLP_OK : GMLP_ERR_HOST_MEMORY;
        for (int r = 0; r < o->warmup && st == GMLP_OK; r++)
            st = gmlp_lm_logits(m, tok, B, S, logits);
        for (int r = 0; r < o->runs && st == GMLP_OK; r++) {
            double t = bench_now();
            st = gmlp_lm_logits(m, tok, B, S, logits);
            times[r] = bench_now() - t;
        }
        if (st == GMLP_OK)
            row(b, &l, B, "full", times, (double)(B * S));
        else
            fprintf(stderr, "gmlp-bench: %s batch %zu: %s\n", name, B, gmlp_last_error(ctx));
        free(tok), free(logits);
    }
    if (st == GMLP_OK && c.causal) {
        for (int cached = 1; cached >= 0 && st == GMLP_OK; cached--) {
            for (int r = 0; r < o->warmup && st == GMLP_OK; r++)
                generate(m, &c, cached, S, &st);
            for (int r = 0; r < o->runs && st == GMLP_OK; r++)
                times[r] = generate(m, &c, cached, S, &st);
            if (st == GMLP_OK)
                row(b, &l, 1, cached ? "cached" : "uncached", times, (double)S);
        }
        for (int sampled = 0; sampled < 2 && st == GMLP_OK && S > 1; sampled++) {
            for (int r = 0; r < o->warmup && st == GMLP_OK; r++)
                generate_api(m, &c, sampled, &st);
            for (int r = 0; r < o->runs && st == GMLP_OK; r++)
                times[r] = generate_api(m, &c, sampled, &st);
            if (st == GMLP_OK)
                row(b, &l, 1, sampled ? "sampled" : "generate", times, (double)(S - 1));
        }
        if (st != GMLP_OK)
            fprintf(stderr, "gmlp-bench: %s generation: %s\n", name, gmlp_last_error(ctx));
    }
    free(times);
    gmlp_model_free(m);
    gmlp_context_destroy(ctx);
    return st == GMLP_OK;
}
