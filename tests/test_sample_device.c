/* The device's token sampler (ops/sample.c) against the host's (gmlp_sample)
 * on random rows of awkward widths, ties and every kind of option, several
 * rows a launch: the same tokens and generator states bit for bit, the
 * step buffer's position advanced once, the tokens logged, and a
 * non-finite logit flagged. */
#include <string.h>

#include "cl/device.h"
#include "ops_check.h"

/* Random 31-bit numbers (a 64-bit LCG's high bits). */
static uint32_t draw(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

static cl_mem ints(const void *host, size_t bytes)
{
    return up_bytes(host, bytes);
}

static void get(cl_mem m, void *host, size_t bytes)
{
    CHECK(clEnqueueReadBuffer(ctx->queue, m, CL_TRUE, 0, bytes, host, 0, NULL, NULL) == CL_SUCCESS, "read back");
}

/* One launch over rows x V logits; returns the token mismatches. */
static int one_case(int V, int rows, float t, int top_k, float top_p, uint64_t *s, int bad_at)
{
    enum { SEQ = 7 };
    const int pos = (int)(draw(s) % SEQ);
    float *l = malloc((size_t)V * rows * sizeof *l);
    const float step = draw(s) % 2 ? 0.25f : 0; /* coarse logits: many ties */
    for (int i = 0; i < V * rows; i++) {
        const float x = ((float)(draw(s) % 1000000) / 1e6f - 0.5f) * (draw(s) % 8 ? 10.0f : 300.0f);
        l[i] = step > 0 ? roundf(x / step) * step : x;
    }
    if (bad_at >= 0)
        l[bad_at] = bad_at % 2 ? INFINITY : NAN;
    uint64_t rng[8], want_rng[8];
    int32_t stepbuf[9] = {pos}, want[8], log[8 * SEQ], flags[2] = {0, 0};
    memset(log, 0xff, sizeof log);
    for (int b = 0; b < rows; b++)
        rng[b] = want_rng[b] = ((uint64_t)draw(s) << 32) | draw(s);
    gmlp_generate_options o;
    gmlp_generate_options_default(&o);
    o.temperature = t, o.top_k = top_k, o.top_p = top_p;
    for (int b = 0; b < rows; b++)
        if (gmlp_sample(l + (size_t)b * V, V, &o, &want_rng[b], &want[b]) != GMLP_OK)
            want[b] = 0; /* the device's token where a logit is not finite */
    cl_mem dl = up(l, (size_t)V * rows), dr = ints(rng, sizeof rng), ds = ints(stepbuf, sizeof stepbuf),
           dt = ints(log, sizeof log), df = ints(flags, sizeof flags);
    gmlp_status st = gmlp_op_sample(ctx, &(gmlp_sample_args){.logits = dl, .V = V, .rows = rows, .temperature = t,
                                                              .top_p = top_p, .top_k = top_k, .rng = dr, .step = ds,
                                                              .seq_len = SEQ, .tokens = dt, .flags = df});
    CHECK(st == GMLP_OK, "gmlp_op_sample: %s", gmlp_last_error(ctx));
    get(dr, rng, sizeof rng), get(ds, stepbuf, sizeof stepbuf), get(dt, log, sizeof log), get(df, flags, sizeof flags);
    int wrong = 0;
    for (int b = 0; b < rows; b++)
        wrong += stepbuf[1 + b] != want[b] || log[b * SEQ + pos] != want[b] || rng[b] != want_rng[b];
    CHECK(stepbuf[0] == pos + 1, "position %d -> %d", pos, stepbuf[0]);
    CHECK(flags[0] == (bad_at >= 0 ? 1 + bad_at : 0), "error flag %d, want %d", flags[0], bad_at + 1);
    CHECK(bad_at < 0 || flags[1] == pos, "the failing step's position %d, want %d", flags[1], pos);
    gmlp_buffer_release(ctx, &dl), gmlp_buffer_release(ctx, &dr), gmlp_buffer_release(ctx, &ds);
    gmlp_buffer_release(ctx, &dt), gmlp_buffer_release(ctx, &df);
    free(l);
    return wrong;
}

/*   test_sample_device [--oclgrind]   (the latter: 60 random cases, not 300; every width class and option
 *   still, and the fixed cases: Oclgrind's simulation took 8 minutes over 300 here; in the quick tier 20, the
 *   first wide row among them) */
int main(int argc, char **argv)
{
    const int n_cases = argc > 1 && !strcmp(argv[1], "--oclgrind") ? (check_quick_tier() ? 20 : 60) : 300;
    ctx = check_context();
    if (!gmlp_device_has_extension(ctx->dev.device, "cl_khr_fp64")) {
        printf("SKIP: the device has no cl_khr_fp64 (generation samples on the host)\n");
        return 77;
    }
    static const float temps[] = {0, 0.05f, 0.8f, 1, 2.5f};
    static const float ps[] = {1, 0.95f, 0.5f, 0.01f};
    uint64_t s = 2024;
    int cases = 0, wrong = 0;
    for (int c = 0; c < n_cases; c++) {
        const int V = c < 5 ? 1 + c : 1 + (int)(draw(&s) % (c % 10 ? 300 : 3000));
        const int rows = 1 + (int)(draw(&s) % 4), k_kind = (int)(draw(&s) % 4);
        /* top_k: 0 (the whole row where it fits), 1, within the row, past it */
        int top_k = k_kind == 0 ? 0 : k_kind == 1 ? 1 : k_kind == 2 ? 1 + (int)(draw(&s) % (unsigned)V) : V + 5;
        if (top_k > GMLP_SAMPLE_MAX)
            top_k = GMLP_SAMPLE_MAX;
        const float t = temps[draw(&s) % 5], p = ps[draw(&s) % 4];
        if (!gmlp_sample_device_covers(ctx, V, t, top_k))
            top_k = 1 + (int)(draw(&s) % GMLP_SAMPLE_MAX);
        wrong += one_case(V, rows, t, top_k, p, &s, -1);
        cases++;
    }
    for (int c = 0; c < 4; c++, cases++) /* greedy and top_k within GMLP_SAMPLE_MAX over rows wider than it */
        wrong += one_case(GMLP_SAMPLE_MAX + 1 + (int)(draw(&s) % 5000), 2, c < 2 ? 0 : 0.9f, c < 2 ? c : 50, 0.9f,
                          &s, -1);
    CHECK(wrong == 0, "%d of %d cases' rows give other tokens or generator states than gmlp_sample", wrong, cases);
    one_case(50, 3, 1, 0, 1, &s, 77); /* an infinity in row 1 */
    one_case(20, 1, 0, 0, 1, &s, 4);  /* a NaN, greedy */
    CHECK(!gmlp_sample_device_covers(ctx, GMLP_SAMPLE_MAX + 1, 1, 0), "a row too wide for all its candidates");
    CHECK(gmlp_sample_device_covers(ctx, GMLP_SAMPLE_MAX + 1, 0, 0), "greedy over a wide row");
    gmlp_context_destroy(ctx);
    return check_summary("test_sample_device");
}
