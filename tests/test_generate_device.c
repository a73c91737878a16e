/* gmlp_lm_generate sampling on the device (steps run ahead) against the
 * host's sampler (GMLP_SAMPLE_DEVICE=0) on the bundled LM: the same tokens
 * for seeds and options (greedy, top-k, top-p), stop tokens, a callback
 * stopping early, and more tokens than the window holds. */
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

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_generate_device MODEL\n");
        return 2;
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
    gmlp_model_free(dev), gmlp_model_free(host);
    gmlp_context_destroy(cd), gmlp_context_destroy(ch);
    return check_summary("test_generate_device");
}
