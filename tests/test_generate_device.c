/* gmlp_lm_generate sampling on the device (steps run ahead) against the
 * host's sampler (GMLP_SAMPLE_DEVICE=0) on the bundled LM: the same tokens
 * for seeds and options (greedy, top-k, top-p), stop tokens, a callback
 * stopping early, and more tokens than the window holds; and where a token
 * makes the logits non-finite, the tokens before it and the host's error. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { MAX = 400 };

typedef struct seen {
    int32_t tok[MAX];
    size_t n, stop_after; /* the callback stops after stop_after tokens (0: never) */
} seen;

static int on_token(void *user, int32_t t)
{
    seen *s = user;
    s->tok[s->n++] = t;
    return s->stop_after && s->n == s->stop_after;
}

static gmlp_model *load(const char *path, int device_sampling, gmlp_context **ctx_out)
{
    if (device_sampling)
        unsetenv("GMLP_SAMPLE_DEVICE");
    else
        setenv("GMLP_SAMPLE_DEVICE", "0", 1);
    gmlp_context *ctx = *ctx_out = check_context();
    gmlp_model *m;
    if (gmlp_model_load(ctx, path, &m) != GMLP_OK) {
        printf("FAIL: %s\n", gmlp_last_error(ctx));
        exit(1);
    }
    return m;
}

/* Generates with o on m, the tokens into s (the callback's checked against out). */
static size_t generate(gmlp_model *m, gmlp_generate_options o, seen *s, int32_t *out)
{
    static const int32_t prompt[] = {'T', 'h', 'e', ' '};
    s->n = 0;
    o.on_token = on_token;
    o.user = s;
    size_t n = 0;
    CHECK(gmlp_lm_generate(m, prompt, 4, &o, out, &n) == GMLP_OK, "generate: %s", gmlp_last_error(NULL));
    CHECK(n == s->n && !memcmp(out, s->tok, n * sizeof *out), "the callback saw other tokens than out");
    return n;
}

/* A token whose embedding row is huge (3e38: LayerNorm's sums overflow, so
 * the logits of the step that feeds it are NaN), generated greedily: both
 * paths give the tokens up to and including it, then the host's error
 * (a device round that met it keeps the tokens before, the host samples
 * the failing step). */
static void poisoned(const char *path, gmlp_model *dev, gmlp_context *cd, gmlp_context *ch)
{
    static const int32_t prompt[] = {'T', 'h', 'e', ' '};
    gmlp_generate_options o;
    gmlp_generate_options_default(&o);
    o.temperature = 0, o.max_tokens = 60;
    int32_t clean[60], got[2][60];
    size_t n = 0, j = 10, size = 0, at = 0;
    CHECK(gmlp_lm_generate(dev, prompt, 4, &o, clean, &n) == GMLP_OK && n == 60, "clean generation");
    /* the first token from the tenth on not seen before it: fed only after it is sampled */
    for (int seen_before = 1; seen_before && j < n; seen_before ? j++ : 0) {
        seen_before = memchr("The ", clean[j], 4) != NULL;
        for (size_t i = 0; i < j && !seen_before; i++)
            seen_before = clean[i] == clean[j];
    }
    unsigned char *file = check_read_file(path, &size);
    const char *hdr = file ? strstr((const char *)file + 8, "\"to_embed.weight\"") : NULL;
    const char *offs = hdr ? strstr(hdr, "data_offsets") : NULL;
    gmlp_config c = {.size = sizeof c};
    gmlp_model_config(dev, &c);
    if (!(j < n && offs && sscanf(strchr(offs, '[') + 1, "%zu", &at) == 1)) {
        CHECK(0, "no token to poison (%zu of %zu) or no to_embed.weight in %s", j, n, path);
        free(file);
        return;
    }
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = hlen << 8 | file[i];
    float *row = (float *)(void *)(file + 8 + hlen + at) + (size_t)clean[j] * (size_t)c.dim;
    for (int i = 0; i < c.dim; i++)
        row[i] = 3e38f;
    gmlp_context *ctx[2] = {cd, ch};
    for (int p = 0; p < 2; p++) {
        gmlp_model *m = NULL;
        size_t k = 0;
        CHECK(gmlp_model_load_memory(ctx[p], file, size, &m) == GMLP_OK, "poisoned load: %s", gmlp_last_error(ctx[p]));
        gmlp_status st = m ? gmlp_lm_generate(m, prompt, 4, &o, got[p], &k) : GMLP_OK;
        const char *msg = gmlp_last_error(ctx[p]);
        CHECK(st == GMLP_ERR_INVALID_ARGUMENT && strstr(msg, "logit") && k == j + 1 && !memcmp(got[p], clean, k * sizeof *clean),
              "%s sampling, token %ld poisoned (the %zuth): status %d, %zu tokens, '%s'", p ? "host" : "device",
              (long)clean[j], j + 1, (int)st, k, msg);
        if (p == 0)
            printf("a non-finite logit after %zu tokens: %s\n", k, msg);
        gmlp_model_free(m);
    }
    free(file);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_generate_device MODEL\n");
        return 2;
    }
    unsetenv("GMLP_SAMPLE_DEVICE");
    if (!check_report_says("LM sampling: on the device")) { /* no cl_khr_fp64: both would sample on the host */
        printf("SKIP: the device samples on the host (its report's LM sampling line)\n");
        return 77;
    }
    gmlp_context *cd, *ch;
    gmlp_model *dev = load(argv[1], 1, &cd), *host = load(argv[1], 0, &ch);
    static const struct {
        float t;
        int k;
        float p;
        size_t max, stop_after;
        int32_t stop;
    } cases[] = {
        {0.8f, 40, 0.95f, 100, 0, -1}, {1, 0, 1, 120, 0, -1}, {0, 0, 1, 90, 0, -1}, {5, 1, 1, 60, 0, -1},
        {1.5f, 0, 0.5f, 110, 0, -1},   {0.8f, 40, 0.95f, 300, 0, -1}, /* past the window */
        {1, 0, 1, 200, 37, -1},        {0.8f, 40, 0.95f, 200, 5, -1}, /* the callback stops */
        {1, 0, 1, 200, 0, 'e'},        {0, 0, 1, 200, 0, ' '},        /* stop tokens */
        {0.3f, 3, 0.9f, 1, 0, -1},     {1, 0, 1, 0, 0, -1},
    };
    int32_t a[MAX], b[MAX];
    seen sa = {0}, sb = {0};
    int differ = 0, runs = 0;
    size_t total = 0;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (uint64_t seed = 0; seed < 4; seed++) {
            gmlp_generate_options o;
            gmlp_generate_options_default(&o);
            o.temperature = cases[c].t, o.top_k = cases[c].k, o.top_p = cases[c].p, o.seed = seed * 1000003;
            o.max_tokens = cases[c].max;
            o.stop_tokens = cases[c].stop >= 0 ? &cases[c].stop : NULL;
            o.n_stop_tokens = cases[c].stop >= 0;
            sa.stop_after = sb.stop_after = cases[c].stop_after;
            const size_t na = generate(dev, o, &sa, a), nb = generate(host, o, &sb, b);
            const size_t want = cases[c].stop_after ? cases[c].stop_after : cases[c].max;
            CHECK(na <= want && (cases[c].stop >= 0 || na == want), "case %zu: %zu tokens of %zu", c, na, want);
            CHECK(cases[c].stop < 0 || na == want || a[na - 1] == cases[c].stop, "case %zu: ended before the stop", c);
            differ += na != nb || memcmp(a, b, na * sizeof *a);
            runs++, total += na;
        }
    printf("device vs host sampling: %d of %d generations differ (%zu tokens)\n", differ, runs, total);
    CHECK(differ == 0, "%d of %d generations differ between the device's and the host's sampling", differ, runs);
    poisoned(argv[1], dev, cd, ch);
    gmlp_model_free(dev), gmlp_model_free(host);
    gmlp_context_destroy(cd), gmlp_context_destroy(ch);
    return check_summary("test_generate_device");
}
