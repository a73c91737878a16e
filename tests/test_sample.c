/* Token sampling (device-free): greedy, determinism, top-k and top-p
 * support, and drawn frequencies against the tempered softmax. */
#include <string.h>

#include "check.h"

static gmlp_generate_options opts(float t, int k, float p)
{
    gmlp_generate_options o;
    gmlp_generate_options_default(&o);
    o.temperature = t;
    o.top_k = k;
    o.top_p = p;
    return o;
}

/* Frequencies of draws vs softmax(logits / t) restricted to the first keep
 * ids (the logits are sorted descending), renormalised. */
static void check_freq(const float *logits, int vocab, gmlp_generate_options o, int keep, const char *what)
{
    enum { DRAWS = 200000 };
    double p[16] = {0}, sum = 0;
    for (int i = 0; i < keep; i++)
        sum += p[i] = exp(logits[i] / o.temperature);
    int count[16] = {0};
    uint64_t rng = 7;
    for (int d = 0; d < DRAWS; d++) {
        int32_t t = -1;
        gmlp_sample(logits, vocab, &o, &rng, &t);
        if (t >= 0 && t < vocab)
            count[t]++;
    }
    double worst = 0;
    for (int i = 0; i < vocab; i++) {
        double want = i < keep ? p[i] / sum : 0, got = (double)count[i] / DRAWS;
        worst = fmax(worst, fabs(got - want));
    }
    printf("%-28s max |freq - p| %.4f\n", what, worst);
    CHECK(worst < 0.005, "%s: frequencies off by %.4f", what, worst);
}

int main(void)
{
    const float logits[] = {2.0f, 1.5f, 0.8f, 0.1f, -0.5f, -3.0f}; /* descending */
    const int V = 6;
    uint64_t rng = 1;
    int32_t t = -1;
    gmlp_generate_options o = opts(0, 0, 1);
    const float shuffled[] = {0.1f, 2.0f, -1.0f, 2.0f};
    CHECK(gmlp_sample(shuffled, 4, &o, &rng, &t) == GMLP_OK && t == 1, "greedy: %d (first maximum expected)", t);
    o = opts(5, 1, 1);
    CHECK(gmlp_sample(shuffled, 4, &o, &rng, &t) == GMLP_OK && t == 1, "top_k 1 is greedy: %d", t);

    o = opts(1, 0, 1);
    int32_t a[64], b[64];
    uint64_t r1 = 99, r2 = 99, r3 = 100;
    int differ = 0;
    for (int i = 0; i < 64; i++) {
        gmlp_sample(logits, V, &o, &r1, &a[i]);
        gmlp_sample(logits, V, &o, &r2, &b[i]);
        int32_t c;
        gmlp_sample(logits, V, &o, &r3, &c);
        differ += c != a[i];
    }
    CHECK(!memcmp(a, b, sizeof a), "the same seed gives other tokens");
    CHECK(differ > 0, "another seed gives the same 64 tokens");

    check_freq(logits, V, opts(1, 0, 1), V, "temperature 1");
    check_freq(logits, V, opts(2.5f, 0, 1), V, "temperature 2.5");
    check_freq(logits, V, opts(0.7f, 3, 1), 3, "top_k 3");
    /* softmax(logits): 0.459 0.278 0.138 0.069 0.037 0.003; 0.459 + 0.278 >= 0.7 */
    check_freq(logits, V, opts(1, 0, 0.7f), 2, "top_p 0.7");
    check_freq(logits, V, opts(1, 4, 0.9f), 3, "top_k 4 then top_p 0.9");
    check_freq(logits, V, opts(1, 0, 1e-6f), 1, "top_p tiny keeps one");

    static const float bad_p[] = {0.0f, -0.1f, 1.5f};
    for (int i = 0; i < 3; i++) {
        o = opts(1, 0, bad_p[i]);
        CHECK(gmlp_sample(logits, V, &o, &rng, &t) == GMLP_ERR_INVALID_ARGUMENT, "top_p %g accepted", bad_p[i]);
    }
    o = opts(1, -1, 1);
    CHECK(gmlp_sample(logits, V, &o, &rng, &t) == GMLP_ERR_INVALID_ARGUMENT, "top_k -1 accepted");
    o = opts(NAN, 0, 1);
    CHECK(gmlp_sample(logits, V, &o, &rng, &t) == GMLP_ERR_INVALID_ARGUMENT, "temperature NaN accepted");
    o = opts(1, 0, 1);
    const float nan_logit[] = {0.0f, NAN};
    CHECK(gmlp_sample(nan_logit, 2, &o, &rng, &t) == GMLP_ERR_INVALID_ARGUMENT, "a NaN logit accepted");
    printf("NaN logit: %s\n", gmlp_last_error(NULL));
    CHECK(gmlp_sample(logits, 0, &o, &rng, &t) == GMLP_ERR_INVALID_ARGUMENT, "vocab 0 accepted");
    CHECK(gmlp_sample(NULL, V, &o, &rng, &t) == GMLP_ERR_INVALID_ARGUMENT, "NULL logits accepted");
    return check_summary("test_sample");
}
