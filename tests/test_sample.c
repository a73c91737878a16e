/* Choosing from logits (device-free).  Token sampling: greedy, determinism,
 * top-k and top-p support, and drawn frequencies against the tempered
 * softmax.  The top k classes: against a plain double-precision softmax and
 * a stable sort on awkward rows (ties, one logit, infinities), and the
 * refusals. */
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

/* The reference for gmlp_softmax_topk: ids by descending logit, ties in id
 * order (insertion sort: stable); softmax in double, where a +inf logit
 * shares all the mass with the other +inf ones and -inf everywhere is uniform. */
static void topk_reference(const float *logits, int n, int *order, double *p)
{
    double mx = -INFINITY, sum = 0;
    for (int i = 0; i < n; i++)
        mx = fmax(mx, logits[i]);
    for (int i = 0; i < n; i++) {
        p[i] = isinf(mx) ? logits[i] == mx : exp((double)logits[i] - mx);
        sum += p[i];
        order[i] = i;
        for (int j = i; j > 0 && logits[order[j]] > logits[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    }
    for (int i = 0; i < n; i++)
        p[i] /= sum;
}

/* Every k of one row against the reference, and prob NULL giving the same ids. */
static void check_topk(const float *logits, int n, const char *what)
{
    int *order = malloc((size_t)n * sizeof *order);
    double *p = malloc((size_t)n * sizeof *p);
    int32_t *idx = malloc((size_t)n * sizeof *idx), *idx_only = malloc((size_t)n * sizeof *idx_only);
    float *prob = malloc((size_t)n * sizeof *prob);
    if (!order || !p || !idx || !idx_only || !prob) {
        CHECK(0, "%s: out of memory", what);
        n = 0;
    } else {
        topk_reference(logits, n, order, p);
    }
    int bad = 0;
    double worst = 0;
    for (int k = 1; k <= n; k++) {
        if (gmlp_softmax_topk(logits, n, k, idx, prob) != GMLP_OK ||
            gmlp_softmax_topk(logits, n, k, idx_only, NULL) != GMLP_OK) {
            CHECK(0, "%s k %d: %s", what, k, gmlp_last_error(NULL));
            continue;
        }
        for (int r = 0; r < k; r++) {
            double want = p[order[r]], err = fabs(prob[r] - want);
            bad += idx[r] != order[r] || idx_only[r] != order[r];
            worst = fmax(worst, err);
            if (!(err <= 1e-6 * want + 1e-37))
                bad++;
        }
    }
    printf("%-28s n %4d: %d wrong ids or probabilities, max |prob - p| %.3g\n", what, n, bad, worst);
    CHECK(n > 0 && bad == 0, "%s: %d wrong ids or probabilities (max |prob - p| %.3g)", what, bad, worst);
    free(order);
    free(p);
    free(idx);
    free(idx_only);
    free(prob);
}

static void test_topk(void)
{
    const float one[] = {-3.5f};
    check_topk(one, 1, "one logit");
    const float ties[] = {1.5f, -2.0f, 3.25f, 1.5f, 88.0f, -88.0f, 3.25f, 0.0f, 1.5f};
    check_topk(ties, 9, "ties and +-88");
    const float equal[] = {0.25f, 0.25f, 0.25f, 0.25f, 0.25f};
    check_topk(equal, 5, "all equal");
    const float huge[] = {-3e38f, 3e38f, 0.0f, 3e38f, -1e-38f};
    check_topk(huge, 5, "near FLT_MAX");
    const float neg_inf[] = {-INFINITY, 0.5f, -INFINITY, 2.0f, 0.5f};
    check_topk(neg_inf, 5, "some -inf");
    const float all_neg_inf[] = {-INFINITY, -INFINITY, -INFINITY};
    check_topk(all_neg_inf, 3, "all -inf");
    const float pos_inf[] = {1.0f, INFINITY, -INFINITY, INFINITY, 7.0f, INFINITY};
    check_topk(pos_inf, 6, "+inf three times");

    /* 1000 (ImageNet's width, and not a power of two) quantised to quarters: many ties */
    enum { WIDE = 1000 };
    static float wide[WIDE];
    unsigned seed = 12345;
    for (int i = 0; i < WIDE; i++)
        wide[i] = roundf(check_rand(&seed) * 40.0f) / 4.0f;
    check_topk(wide, WIDE, "1000 quantised");

    int32_t idx[9];
    float prob[9];
    CHECK(gmlp_softmax_topk(ties, 9, 0, idx, prob) == GMLP_ERR_INVALID_ARGUMENT, "k 0 accepted");
    CHECK(gmlp_softmax_topk(ties, 9, 10, idx, prob) == GMLP_ERR_INVALID_ARGUMENT, "k > n accepted");
    CHECK(gmlp_softmax_topk(ties, 0, 1, idx, prob) == GMLP_ERR_INVALID_ARGUMENT, "n 0 accepted");
    CHECK(gmlp_softmax_topk(NULL, 9, 1, idx, prob) == GMLP_ERR_INVALID_ARGUMENT, "NULL logits accepted");
    CHECK(gmlp_softmax_topk(ties, 9, 1, NULL, prob) == GMLP_ERR_INVALID_ARGUMENT, "NULL index accepted");
    const float with_nan[] = {0.0f, 1.0f, NAN, INFINITY};
    CHECK(gmlp_softmax_topk(with_nan, 4, 1, idx, prob) == GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(NULL), "logit 2 is NaN"),
          "a NaN logit: %s", gmlp_last_error(NULL));
}

/* The sampler before the shared draw (libm's exp, candidates ordered by
 * weight): the reference that the draw of sample_draw.h must reproduce. */
typedef struct ref_cand {
    double v;
    int32_t id;
} ref_cand;

static int ref_descending(const void *a, const void *b)
{
    const ref_cand *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? 1 : -1;
    return (x->id > y->id) - (x->id < y->id);
}

static int32_t ref_sample(const float *logits, int vocab, float temperature, int top_k, float top_p, uint64_t *rng)
{
    int32_t best = 0;
    for (int i = 1; i < vocab; i++)
        if (logits[i] > logits[best])
            best = i;
    if (temperature <= 0 || top_k == 1)
        return best;
    ref_cand c[512];
    for (int i = 0; i < vocab; i++)
        c[i] = (ref_cand){exp(((double)logits[i] - logits[best]) / temperature), i};
    qsort(c, (size_t)vocab, sizeof *c, ref_descending);
    int keep = top_k > 0 && top_k < vocab ? top_k : vocab;
    double kept = 0;
    for (int i = 0; i < keep; i++)
        kept += c[i].v;
    if (top_p < 1) {
        double cum = 0;
        int i = 0;
        while (i < keep && cum < top_p * kept)
            cum += c[i++].v;
        keep = i > 0 ? i : 1;
        kept = cum > 0 ? cum : c[0].v;
    }
    uint64_t z = (*rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    double u = (double)(z >> 11) * 0x1.0p-53 * kept, cum = 0;
    int i = 0;
    while (i < keep - 1 && (cum += c[i].v) <= u)
        i++;
    return c[i].id;
}

/* Random 31-bit numbers (a 64-bit LCG's high bits). */
static uint64_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* gmlp_sample against the reference over many draws on random rows (ties
 * from coarse logits, wide and narrow spreads, every kind of option): the
 * same generator state always; tokens differ only where the two exps'
 * last bits move a draw across a boundary, which must stay rare. */
static void test_shared_draw(void)
{
    enum { DRAWS = 100000 };
    uint64_t seed = 12345;
    static const float temps[] = {0, 0.05f, 0.8f, 1, 3};
    static const int ks[] = {0, 1, 2, 5, 40, 300};
    static const float ps[] = {1, 0.95f, 0.5f, 0.01f};
    int diff = 0, rng_diff = 0, fails = 0;
    float logits[512];
    for (int d = 0; d < DRAWS; d++) {
        int vocab = 1 + (int)(rnd(&seed) % 400);
        float spread = (float)(rnd(&seed) % 4 == 0 ? 200 : 8), step = rnd(&seed) % 3 ? 0 : 0.5f;
        for (int i = 0; i < vocab; i++) {
            float x = ((float)(rnd(&seed) % 1000000) / 1e6f - 0.5f) * spread;
            logits[i] = step > 0 ? roundf(x / step) * step : x;
        }
        gmlp_generate_options o = opts(temps[rnd(&seed) % 5], ks[rnd(&seed) % 6],
                                       ps[rnd(&seed) % 4]);
        uint64_t r1 = rnd(&seed), r2 = r1;
        int32_t t = -1;
        fails += gmlp_sample(logits, vocab, &o, &r1, &t) != GMLP_OK;
        diff += t != ref_sample(logits, vocab, o.temperature, o.top_k, o.top_p, &r2);
        rng_diff += r1 != r2;
    }
    printf("shared draw vs libm's: %d of %d tokens differ\n", diff, DRAWS);
    CHECK(fails == 0 && rng_diff == 0, "%d failures, %d generator states differ", fails, rng_diff);
    CHECK(diff * 10000 <= DRAWS, "%d of %d tokens differ from the libm sampler's", diff, DRAWS);
}

int main(void)
{
    test_topk();
    test_shared_draw();

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
