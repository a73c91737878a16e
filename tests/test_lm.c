/* Language models against references computed by the real g-mlp-pytorch in
 * float64 (tools/make_lm_fixtures.py): every NAME.ref.safetensors in the
 * folder given holds the tokens, the expected logits and, as metadata, the
 * expected config of NAME.safetensors.  Also: cached decoding equals the full
 * pass at every position (and past seq_len, the window recompute), greedy
 * and seeded generation, and the LM errors.  Then the precision modes TF32,
 * FP16 and BF16 (fixture.h's fixture_modes) against the same references and,
 * tightly, against float64 references that round every product's operands
 * the same way (../precision/NAME.prec.safetensors). */
#include <math.h>
#include <string.h>

#include "fixture.h"

#define TOL_CACHE 1e-5 /* cached vs full pass: the same fp32 arithmetic, other GEMM shapes */

/* Max |a - b| / max |b| over n floats. */
static double rel_diff(const float *a, const float *b, size_t n)
{
    double *bd = malloc(n * sizeof *bd);
    for (size_t i = 0; i < n; i++)
        bd[i] = b[i];
    double e = rel_error(a, bd, n, 1e-6);
    free(bd);
    return e;
}

static void check_config(const char *name, const gmlp_config *c, const gmlp_st_file *ref)
{
    struct {
        const char *key;
        int got;
    } fields[] = {
        {"vocab_size", c->vocab_size}, {"seq_len", c->seq_len},           {"dim", c->dim},
        {"depth", c->depth},           {"ffn_dim", c->ffn_dim},           {"heads", c->heads},
        {"attn_dim", c->attn_dim},     {"shift_tokens", c->shift_tokens},
    };
    CHECK(c->arch == GMLP_ARCH_LM, "%s: arch %d", name, c->arch);
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        const char *want = gmlp_st_meta(ref, fields[i].key);
        CHECK(!want || atoi(want) == fields[i].got, "%s: config %s = %d, reference says %s", name, fields[i].key,
              fields[i].got, want);
    }
    const char *causal = gmlp_st_meta(ref, "causal"), *circ = gmlp_st_meta(ref, "circulant");
    CHECK(!causal || c->causal == !strcmp(causal, "true"), "%s: causal %d", name, c->causal);
    CHECK(!circ || c->circulant == !strcmp(circ, "true"), "%s: circulant %d", name, c->circulant);
    const char *act = gmlp_st_meta(ref, "act");
    CHECK(!act || c->gate_act == gmlp_act_named(act), "%s: gate act %d, reference %s", name, c->gate_act, act);
}

/* Feeding the tokens through a decoding state (a first chunk, then one token
 * at a time) gives, at each position, the full pass's logits (within tol). */
static void check_cached(const char *name, gmlp_model *model, const gmlp_config *c, const int32_t *tokens,
                         size_t batch, size_t n, const float *full, double tol)
{
    gmlp_lm_state *s;
    gmlp_status st = gmlp_lm_state_create(model, batch, &s);
    CHECK(st == GMLP_OK, "%s: state: %s", name, gmlp_status_string(st));
    if (st != GMLP_OK)
        return;
    size_t V = (size_t)c->vocab_size, first = n > 2 ? 2 : 1;
    float *step = malloc(batch * V * sizeof *step);
    int32_t *col = malloc(batch * n * sizeof *col);
    double worst = 0;
    for (size_t p = 0; p < n;) {
        size_t k = p == 0 ? first : 1;
        for (size_t b = 0; b < batch; b++)
            memcpy(col + b * k, tokens + b * n + p, k * sizeof *col);
        st = gmlp_lm_feed(s, col, k, step);
        CHECK(st == GMLP_OK, "%s: feed at %zu: %s", name, p, gmlp_status_string(st));
        p += k;
        for (size_t b = 0; st == GMLP_OK && b < batch; b++) {
            double e = rel_diff(step + b * V, full + (b * n + p - 1) * V, V);
            worst = e > worst ? e : worst;
        }
    }
    printf("%-24s cached   max rel diff %.2e\n", name, worst);
    CHECK(worst <= tol, "%s: cached logits differ from the full pass by %.3g", name, worst);
    CHECK(gmlp_lm_state_tokens(s) == n, "%s: state counts %zu tokens", name, gmlp_lm_state_tokens(s));
    free(step);
    free(col);
    gmlp_lm_state_free(s);
}

static void run_case(gmlp_context *ctx, const char *dir, const char *name, int storage)
{
    gmlp_st_file ref;
    unsigned char *buf = fixture_ref(dir, name, &ref);
    if (!buf)
        return;
    const gmlp_st_tensor *tok = gmlp_st_find(&ref, "tokens"), *want = gmlp_st_find(&ref, "logits");
    CHECK(tok && want && tok->dtype == GMLP_DT_I32 && want->dtype == GMLP_DT_F64 && tok->ndim == 2,
          "%s: reference needs tokens I32 (B, n) and logits F64", name);
    gmlp_model *model = fixture_load(ctx, dir, name, storage);
    if (model && tok && want && tok->ndim == 2) {
        gmlp_config c = {.size = sizeof c};
        gmlp_model_config(model, &c);
        check_config(name, &c, &ref);
        size_t batch = (size_t)tok->shape[0], n = (size_t)tok->shape[1], V = (size_t)c.vocab_size;
        CHECK(want->numel == batch * n * V, "%s: reference logits size", name);
        int32_t *tokens = malloc(batch * n * sizeof *tokens);
        memcpy(tokens, tok->data, batch * n * sizeof *tokens);
        float *out = malloc(batch * n * V * sizeof *out);
        gmlp_status st = gmlp_lm_logits(model, tokens, batch, n, out);
        CHECK(st == GMLP_OK, "%s: logits: %s", name, gmlp_last_error(ctx));
        if (st == GMLP_OK && want->numel == batch * n * V) {
            char detail[64];
            snprintf(detail, sizeof detail, " (batch %zu, n %zu of %d)", batch, n, c.seq_len);
            fixture_compare(name, storage, "logits", out, want, detail);
            if (c.causal)
                check_cached(name, model, &c, tokens, batch, n, out, TOL_CACHE);
        }
        free(tokens);
        free(out);
    }
    gmlp_model_free(model);
    gmlp_st_free(&ref);
    free(buf);
}

/* The precision modes (fixture_modes): each one's logits against the plain
 * float64 reference and against the mode's own (every product's operands
 * rounded, ../precision/NAME.prec.safetensors); causal models' cached
 * decoding in the mode against its full pass (other GEMM shapes: an operand
 * may round the other way, within the tight bound).  The quick tier: with
 * the weights as stored alone (fixture_mode_storage_runs). */
static void run_modes(gmlp_context *ctx, const char *dir, const char *name, int storage)
{
    gmlp_st_file ref, prec;
    unsigned char *buf = fixture_ref(dir, name, &ref), *pbuf = buf ? fixture_prec(dir, name, &prec) : NULL;
    const gmlp_st_tensor *tok = buf ? gmlp_st_find(&ref, "tokens") : NULL, *want = buf ? gmlp_st_find(&ref, "logits") : NULL;
    for (int m = 0; pbuf && tok && want && tok->ndim == 2 && fixture_mode_storage_runs(storage) && m < FIXTURE_MODES;
         m++) {
        const gmlp_st_tensor *tight = fixture_prec_find(&prec, name, m, storage, "logits");
        gmlp_model *model = tight ? fixture_load_mode(ctx, dir, name, storage, fixture_modes[m].mode, 0) : NULL;
        if (!model)
            continue;
        gmlp_config c = {.size = sizeof c};
        gmlp_model_config(model, &c);
        size_t batch = (size_t)tok->shape[0], n = (size_t)tok->shape[1], V = (size_t)c.vocab_size;
        int32_t *tokens = malloc(batch * n * sizeof *tokens);
        memcpy(tokens, tok->data, batch * n * sizeof *tokens);
        float *out = malloc(batch * n * V * sizeof *out);
        gmlp_status st = gmlp_lm_logits(model, tokens, batch, n, out);
        CHECK(st == GMLP_OK, "%s %s: logits: %s", name, fixture_modes[m].name, gmlp_last_error(ctx));
        if (st == GMLP_OK && want->numel == batch * n * V) {
            fixture_compare_mode(name, storage, m, "logits", out, want, tight, "");
            if (c.causal)
                check_cached(name, model, &c, tokens, batch, n, out, fixture_modes[m].tight);
        }
        free(tokens), free(out);
        gmlp_model_free(model);
    }
    if (pbuf)
        gmlp_st_free(&prec);
    if (buf)
        gmlp_st_free(&ref);
    free(pbuf), free(buf);
}

/* The model at path and its config; NULL, with a failure recorded for what,
 * when it does not load. */
static gmlp_model *load_lm(gmlp_context *ctx, const char *path, const char *what, gmlp_config *c)
{
    gmlp_model *model;
    if (gmlp_model_load(ctx, path, &model) != GMLP_OK) {
        CHECK(0, "%s: load %s: %s", what, path, gmlp_last_error(ctx));
        return NULL;
    }
    gmlp_model_config(model, c);
    return model;
}

/* Past seq_len the state slides a window over the last seq_len tokens: each
 * step's logits equal a full pass over that window. */
static void check_window(gmlp_context *ctx, const char *path)
{
    gmlp_config c = {.size = sizeof c};
    gmlp_model *model = load_lm(ctx, path, "window", &c);
    if (!model)
        return;
    size_t S = (size_t)c.seq_len, V = (size_t)c.vocab_size, total = S + 4;
    int32_t *tokens = malloc(total * sizeof *tokens);
    for (size_t i = 0; i < total; i++)
        tokens[i] = (int32_t)((i * 7 + 3) % V);
    float *step = malloc(V * sizeof *step), *full = malloc(S * V * sizeof *full);
    gmlp_lm_state *s;
    CHECK(gmlp_lm_state_create(model, 1, &s) == GMLP_OK, "window: state: %s", gmlp_last_error(ctx));
    double worst = 0;
    for (size_t p = 0; p < total; p++) {
        CHECK(gmlp_lm_step(s, tokens + p, step) == GMLP_OK, "window: step %zu: %s", p, gmlp_last_error(ctx));
        size_t len = p + 1 < S ? p + 1 : S, from = p + 1 - len;
        CHECK(gmlp_lm_logits(model, tokens + from, 1, len, full) == GMLP_OK, "window: full: %s",
              gmlp_last_error(ctx));
        double e = rel_diff(step, full + (len - 1) * V, V);
        worst = e > worst ? e : worst;
    }
    printf("window past seq_len %zu: max rel diff %.2e over %zu steps\n", S, worst, total);
    CHECK(worst <= TOL_CACHE, "window: step logits differ from the full window by %.3g", worst);
    /* a multi-token feed that crosses seq_len, after a reset */
    gmlp_lm_state_reset(s);
    CHECK(gmlp_lm_feed(s, tokens, S - 1, NULL) == GMLP_OK, "window: feed: %s", gmlp_last_error(ctx));
    CHECK(gmlp_lm_feed(s, tokens + S - 1, 3, step) == GMLP_OK, "window: feed across: %s", gmlp_last_error(ctx));
    gmlp_lm_logits(model, tokens + 2, 1, S, full);
    double e = rel_diff(step, full + (S - 1) * V, V);
    CHECK(e <= TOL_CACHE, "window: feed across seq_len differs by %.3g", e);
    CHECK(gmlp_lm_state_tokens(s) == S + 2, "window: %zu tokens counted", gmlp_lm_state_tokens(s));
    gmlp_lm_state_free(s);
    free(tokens);
    free(step);
    free(full);
    gmlp_model_free(model);
}

typedef struct seen {
    int32_t tokens[64];
    size_t n, stop_after;
} seen;

static int on_token(void *user, int32_t t)
{
    seen *s = user;
    s->tokens[s->n++] = t;
    return s->n == s->stop_after;
}

/* Greedy generation is the argmax chain of full passes; sampling with a seed
 * repeats; the callback streams every token and can stop; stop tokens end it. */
static void check_generate(gmlp_context *ctx, const char *path)
{
    gmlp_config c = {.size = sizeof c};
    gmlp_model *model = load_lm(ctx, path, "generate", &c);
    if (!model)
        return;
    size_t V = (size_t)c.vocab_size, want = (size_t)c.seq_len + 3; /* crosses the window too */
    int32_t seq[128] = {1, 2}, out[64], out2[64];
    gmlp_generate_options o;
    gmlp_generate_options_default(&o);
    o.temperature = 0;
    o.max_tokens = want;
    size_t n = 0;
    CHECK(gmlp_lm_generate(model, seq, 2, &o, out, &n) == GMLP_OK && n == want, "generate greedy: %s",
          gmlp_last_error(ctx));
    float *logits = malloc((size_t)c.seq_len * V * sizeof *logits);
    size_t len = 2, agree = 0;
    for (size_t i = 0; i < n; i++) {
        size_t w = len < (size_t)c.seq_len ? len : (size_t)c.seq_len;
        gmlp_lm_logits(model, seq + len - w, 1, w, logits);
        const float *last = logits + (w - 1) * V;
        int32_t best = 0;
        for (size_t v = 1; v < V; v++)
            if (last[v] > last[best])
                best = (int32_t)v;
        agree += best == out[i];
        seq[len++] = out[i];
    }
    CHECK(agree == n, "generate greedy: %zu of %zu tokens are the full pass's argmax", agree, n);
    o.temperature = 0.9f;
    o.top_k = 5;
    o.top_p = 0.9f;
    o.seed = 42;
    size_t n2 = 0;
    seen s = {.stop_after = 0};
    o.on_token = on_token;
    o.user = &s;
    CHECK(gmlp_lm_generate(model, seq, 2, &o, out, &n) == GMLP_OK, "generate sampled: %s", gmlp_last_error(ctx));
    CHECK(s.n == n && !memcmp(s.tokens, out, n * sizeof *out), "generate: callback saw %zu of %zu tokens", s.n, n);
    s.n = 0;
    CHECK(gmlp_lm_generate(model, seq, 2, &o, out2, &n2) == GMLP_OK && n2 == n && !memcmp(out, out2, n * sizeof *out),
          "generate: the same seed gives other tokens");
    s.n = 0;
    s.stop_after = 3;
    CHECK(gmlp_lm_generate(model, seq, 2, &o, out2, &n2) == GMLP_OK && n2 == 3, "generate: callback stop after %zu",
          n2);
    o.on_token = NULL;
    o.stop_tokens = &out[4];
    o.n_stop_tokens = 1;
    size_t first_stop = 0;
    while (out[first_stop] != out[4])
        first_stop++;
    CHECK(gmlp_lm_generate(model, seq, 2, &o, out2, &n2) == GMLP_OK && n2 == first_stop + 1,
          "generate: stop token: %zu tokens, expected %zu", n2, first_stop + 1);
    free(logits);
    gmlp_model_free(model);
}

/* Wrong calls give a status and a message, and the model stays usable. */
static void check_errors(gmlp_context *ctx, const char *lm_causal, const char *lm_bidir, const char *vision)
{
    gmlp_model *lm, *bi, *img;
    if (gmlp_model_load(ctx, lm_causal, &lm) != GMLP_OK || gmlp_model_load(ctx, lm_bidir, &bi) != GMLP_OK ||
        gmlp_model_load(ctx, vision, &img) != GMLP_OK) {
        CHECK(0, "errors: load: %s", gmlp_last_error(ctx));
        return;
    }
    gmlp_config c = {.size = sizeof c}, cb = {.size = sizeof cb};
    gmlp_model_config(lm, &c);
    gmlp_model_config(bi, &cb);
    size_t S = (size_t)c.seq_len, V = (size_t)c.vocab_size;
    int32_t *tok = calloc(S + 1, sizeof *tok);
    float *out = malloc((S + 1) * (V > 1000 ? V : 1000) * sizeof *out);
    gmlp_lm_state *s = NULL;
    CHECK(gmlp_lm_logits(lm, tok, 1, S + 1, out) == GMLP_ERR_INVALID_ARGUMENT, "n > seq_len accepted");
    CHECK(gmlp_lm_logits(lm, tok, 1, 0, out) == GMLP_ERR_INVALID_ARGUMENT, "n = 0 accepted");
    CHECK(gmlp_lm_logits(bi, tok, 1, (size_t)cb.seq_len - 1, out) == GMLP_ERR_INVALID_ARGUMENT,
          "bidirectional model accepted n < seq_len");
    printf("bidirectional short: %s\n", gmlp_last_error(ctx));
    tok[1] = (int32_t)V;
    CHECK(gmlp_lm_logits(lm, tok, 1, 2, out) == GMLP_ERR_INVALID_ARGUMENT, "token id = vocab_size accepted");
    printf("bad token: %s\n", gmlp_last_error(ctx));
    tok[1] = -1;
    CHECK(gmlp_lm_logits(lm, tok, 1, 2, out) == GMLP_ERR_INVALID_ARGUMENT, "negative token accepted");
    tok[1] = 0;
    CHECK(gmlp_lm_state_create(bi, 1, &s) == GMLP_ERR_WRONG_MODEL && !s, "state on a bidirectional model");
    CHECK(gmlp_lm_state_create(lm, 0, &s) == GMLP_ERR_INVALID_ARGUMENT, "state with batch 0");
    CHECK(gmlp_lm_logits(img, tok, 1, 1, out) == GMLP_ERR_WRONG_MODEL, "lm_logits on a vision model");
    CHECK(gmlp_classify(lm, out, 1, out) == GMLP_ERR_WRONG_MODEL, "classify on a language model");
    CHECK(strstr(gmlp_last_error(ctx), "language model") != NULL, "classify on an LM: %s", gmlp_last_error(ctx));
    CHECK(gmlp_features(lm, out, 1, out) == GMLP_ERR_WRONG_MODEL, "features of a language model");
    CHECK(gmlp_lm_state_create(lm, 2, &s) == GMLP_OK, "state: %s", gmlp_last_error(ctx));
    int32_t bad[2] = {0, (int32_t)V + 5};
    CHECK(gmlp_lm_step(s, bad, out) == GMLP_ERR_INVALID_ARGUMENT, "step with a bad token accepted");
    CHECK(gmlp_lm_state_tokens(s) == 0, "a failed step counted");
    bad[1] = 1;
    CHECK(gmlp_lm_step(s, bad, out) == GMLP_OK, "step after an error: %s", gmlp_last_error(ctx));
    CHECK(gmlp_lm_feed(s, bad, 0, out) == GMLP_ERR_INVALID_ARGUMENT, "feed of 0 tokens accepted");
    gmlp_lm_state_free(s);
    gmlp_generate_options o;
    gmlp_generate_options_default(&o);
    size_t n = 7;
    CHECK(gmlp_lm_generate(lm, tok, 0, &o, (int32_t *)out, &n) == GMLP_ERR_INVALID_ARGUMENT && n == 0,
          "generate with an empty prompt");
    o.top_p = 0;
    CHECK(gmlp_lm_generate(lm, tok, 1, &o, (int32_t *)out, &n) == GMLP_ERR_INVALID_ARGUMENT, "top_p 0 accepted");
    printf("bad top_p: %s\n", gmlp_last_error(ctx));
    /* the library bounds the temperature as gmlp-generate does: a huge double is an infinite float */
    o.top_p = 1, o.max_tokens = 1;
    const float bad_t[] = {INFINITY, NAN, 2 * (float)GMLP_TEMPERATURE_MAX};
    for (int i = 0; i < 3; i++) {
        o.temperature = bad_t[i];
        CHECK(gmlp_lm_generate(lm, tok, 1, &o, (int32_t *)out, &n) == GMLP_ERR_INVALID_ARGUMENT &&
                  strstr(gmlp_last_error(ctx), "temperature"),
              "generate: temperature %g accepted", (double)bad_t[i]);
        uint64_t rng = 0;
        int32_t t;
        CHECK(gmlp_sample(out, (int)V, &o, &rng, &t) == GMLP_ERR_INVALID_ARGUMENT, "gmlp_sample: temperature %g accepted",
              (double)bad_t[i]);
    }
    printf("bad temperature: %s\n", gmlp_last_error(ctx));
    o.temperature = (float)GMLP_TEMPERATURE_MAX;
    CHECK(gmlp_lm_generate(lm, tok, 1, &o, (int32_t *)out, &n) == GMLP_OK && n == 1, "temperature 1e6: %s",
          gmlp_last_error(ctx));
    o.temperature = -1; /* gmlp.h: <= 0 is greedy */
    CHECK(gmlp_lm_generate(lm, tok, 1, &o, (int32_t *)out, &n) == GMLP_OK && n == 1, "temperature -1: %s",
          gmlp_last_error(ctx));
    gmlp_lm_state_free(NULL);
    free(tok);
    free(out);
    gmlp_model_free(lm);
    gmlp_model_free(bi);
    gmlp_model_free(img);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_lm LM_FIXTURE_DIR VISION_MODEL\n");
        return 2;
    }
    gmlp_context *ctx = check_context();
    int cases = fixture_each(ctx, argv[1], run_case);
    CHECK(cases >= 0, "cannot open %s", argv[1]);
    CHECK(cases > 0, "no fixtures in %s", argv[1]);
    if (cases > 0)
        fixture_each(ctx, argv[1], run_modes);
    fixture_modes_summary("test_lm");
    char causal[1024], bidir[1024];
    snprintf(causal, sizeof causal, "%s/kitchen_sink.safetensors", argv[1]);
    snprintf(bidir, sizeof bidir, "%s/bidir.safetensors", argv[1]);
    check_window(ctx, causal);
    check_generate(ctx, causal);
    check_errors(ctx, causal, bidir, argv[2]);
    gmlp_context_destroy(ctx);
    return check_summary("test_lm");
}
