/* Host calls per steady-state forward (issue #36), counted by the
 * interposer (clshim.c): gmlp_ti16_224's forward, recorded once per
 * workspace and replayed, sets at most 10 kernel arguments, queries no
 * buffer and launches at most 5 times where command buffers run (else at
 * most once per kernel: 155; 95 with the blocks' LayerNorms fused into
 * the products that read them, GMLP_FUSE=1, 3 a block, its logits within
 * 1e-5 of the unfused ones; each image family's launches a block, fused and
 * not); the bundled LM's decoding step (argv[1]) at
 * most depth + 3 launches per token where command buffers run, else
 * 3 x depth + 3; its generation sampling on the device reads a few ints
 * back per token, no logits, within the same launches (the sampler's one
 * more without command buffers).  The recorded forward's logits are those of the plain
 * enqueues bit for bit (command buffers off; and profiling, which records
 * nothing).  It measures the library's GEMM kernel, not CLBlast.  And a
 * model's load builds every program its forwards use: none after it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "clshim.h"
#include "gmlp_diag.h"

typedef struct counts {
    unsigned long launches, set_arg, mem_info;
} counts;

static counts since_reset(void)
{
    return (counts){clshim_launches(), clshim_count(CLSHIM_SET_KERNEL_ARG), clshim_count(CLSHIM_GET_MEM_INFO)};
}

/* Whether contexts made now replay recordings as command buffers (the device report says). */
static int command_buffers_run(void)
{
    return check_report_says("recorded forwards: command buffers");
}

static gmlp_context *context(int profiling)
{
    gmlp_context_options o;
    gmlp_context_options_default(&o);
    o.gemm = GMLP_GEMM_KERNEL; /* the library's kernel: CLBlast enqueues its own */
    o.profiling = profiling;
    return check_context_ex(&o);
}

/* The logits of gmlp_ti16_224 (random weights) on one image in a new
 * context; *steady: the host calls of its third forward. */
static float *vision(const void *data, size_t size, const float *image, int profiling, counts *steady)
{
    gmlp_context *ctx = context(profiling);
    gmlp_model *m = NULL;
    CHECK(gmlp_model_load_memory(ctx, data, size, &m) == GMLP_OK, "load: %s", gmlp_last_error(ctx));
    float *logits = calloc(1000, sizeof *logits);
    for (int i = 0; m && i < 3; i++) {
        if (i == 2)
            clshim_reset();
        CHECK(gmlp_classify(m, image, 1, logits) == GMLP_OK, "classify: %s", gmlp_last_error(ctx));
    }
    *steady = since_reset();
    gmlp_model_free(m);
    gmlp_context_destroy(ctx);
    return logits;
}

static void test_vision(void)
{
    const gmlp_config cfg = {.arch = GMLP_ARCH_GMLP, .in_chans = 3, .img_h = 224, .img_w = 224, .patch_h = 16,
                             .patch_w = 16, .dim = 128, .depth = 30, .ffn_dim = 768, .num_classes = 1000,
                             .heads = 1, .norm_eps = 1e-6f, .sgu_eps = 1e-5f};
    void *data;
    size_t size;
    CHECK(gmlp_diag_random_model(&cfg, 36, &data, &size) == GMLP_OK, "random model: %s", gmlp_last_error(NULL));
    float *image = malloc(3 * 224 * 224 * sizeof *image);
    uint64_t s = 36;
    for (size_t i = 0; i < 3 * 224 * 224; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        image[i] = (float)((s >> 40) & 0xffff) / 32768.0f - 1.0f;
    }
    counts cb, plain, unrecorded, other;
    unsetenv("GMLP_COMMAND_BUFFERS");
    /* the tables fuse both of a block's LayerNorms, or neither (the CPUs' and GPUs' rows alike today) */
    const int have_cb = command_buffers_run(), fused = check_report_says("LayerNorms: fused");
    CHECK(!fused || (check_report_says("into fc1") && check_report_says("into the token-axis")),
          "the device's tables fuse one of a block's LayerNorms: this test wants both or none");
    /* stem 2, 30 blocks of 5 (3 with both LayerNorms fused: fc1, the spatial GEMM, fc2), final norm, mean, head */
    const unsigned long plain_max = fused ? 95 : 155;
    float *a = vision(data, size, image, 0, &cb);
    setenv("GMLP_COMMAND_BUFFERS", "0", 1);
    float *b = vision(data, size, image, 0, &plain);
    setenv("GMLP_FUSE", fused ? "0" : "1", 1); /* e: the other path's logits; d: the unfused ones */
    float *e = vision(data, size, image, 0, &other), *d = fused ? e : b;
    unsetenv("GMLP_FUSE");
    unsetenv("GMLP_COMMAND_BUFFERS");
    float *c = vision(data, size, image, 1, &unrecorded);
    printf("gmlp_ti16_224 forward, steady state: %s: %lu launches, %lu clSetKernelArg, %lu clGetMemObjectInfo; "
           "plain replay: %lu, %lu, %lu; not recorded (profiling): %lu, %lu, %lu\n",
           have_cb ? "command buffers" : "no command buffers", cb.launches, cb.set_arg, cb.mem_info, plain.launches,
           plain.set_arg, plain.mem_info, unrecorded.launches, unrecorded.set_arg, unrecorded.mem_info);
    CHECK(!memcmp(a, b, 1000 * sizeof *a), "command buffers and plain replays: the same logits bit for bit");
    CHECK(!memcmp(a, c, 1000 * sizeof *a), "recorded and unrecorded forwards: the same logits bit for bit");
    CHECK(cb.set_arg <= 10 && plain.set_arg <= 10, "clSetKernelArg %lu and %lu, want <= 10", cb.set_arg,
          plain.set_arg);
    CHECK(cb.mem_info == 0 && plain.mem_info == 0, "clGetMemObjectInfo %lu and %lu, want 0", cb.mem_info,
          plain.mem_info);
    CHECK(cb.launches <= (have_cb ? 5u : plain_max), "%lu launches, want <= %lu", cb.launches,
          have_cb ? 5u : plain_max);
    CHECK(plain.launches <= plain_max, "%lu launches of the plain replay, want <= %lu (LayerNorms %s)", plain.launches,
          plain_max, fused ? "fused" : "unfused");
    const unsigned long other_max = fused ? 155 : 95;
    CHECK(other.launches <= other_max, "%lu launches with GMLP_FUSE=%d, want <= %lu", other.launches, !fused,
          other_max);
    const float *f = fused ? b : e; /* the fused logits */
    double diff = 0, top = 1e-3;
    for (int i = 0; i < 1000; i++)
        diff = fmax(diff, fabs((double)f[i] - d[i])), top = fmax(top, fabs((double)d[i]));
    CHECK(diff / top <= 1e-5, "fused and unfused LayerNorms: logits %.3g apart (relative), want <= 1e-5", diff / top);
    printf("LayerNorms %s by the tables: %lu launches of the plain replay; GMLP_FUSE=%d: %lu; fused and unfused "
           "logits %.2g apart (relative)\n", fused ? "fused" : "unfused", plain.launches, !fused, other.launches,
           diff / top);
    CHECK(unrecorded.set_arg > 155, "the count sees the unrecorded forward's arguments (%lu)", unrecorded.set_arg);
    free(a), free(b), free(c), free(e), free(image), free(data);
}

/* Launches per block, unfused (GMLP_FUSE=0) and fused (GMLP_FUSE=1), of
 * each image family: the blocks' LayerNorms fused into the products that
 * read them (fc1's A; the spatial GEMM's and the Mixer's token fc1's B).
 * ResMLP's first Affine stays a kernel (its token product's C is x, which
 * the prologue would read) and adds the token bias's rank-1 term to x. */
static const struct {
    gmlp_config cfg;
    const char *name;
    unsigned long unfused, fused;
} families[] = {
    {{.arch = GMLP_ARCH_GMLP, .in_chans = 3, .img_h = 20, .img_w = 28, .patch_h = 4, .patch_w = 4, .dim = 40,
      .ffn_dim = 200, .num_classes = 7, .heads = 1, .norm_eps = 1e-6f, .sgu_eps = 1e-5f},
     "gMLP", 5, 3},
    {{.arch = GMLP_ARCH_MIXER, .in_chans = 3, .img_h = 20, .img_w = 28, .patch_h = 4, .patch_w = 4, .dim = 40,
      .ffn_dim = 40, .token_dim = 12, .num_classes = 7, .norm_eps = 1e-6f},
     "Mixer", 6, 4},
    {{.arch = GMLP_ARCH_GMIXER, .in_chans = 3, .img_h = 20, .img_w = 28, .patch_h = 4, .patch_w = 4, .dim = 40,
      .ffn_dim = 40, .token_dim = 12, .num_classes = 7, .norm_eps = 1e-6f},
     "gmixer (GluMlp)", 8, 6},
    {{.arch = GMLP_ARCH_RESMLP, .in_chans = 3, .img_h = 20, .img_w = 28, .patch_h = 4, .patch_w = 4, .dim = 40,
      .ffn_dim = 40, .num_classes = 7},
     "ResMLP", 5, 4},
};

/* The plain replay's launches of cfg at depth, fused or not; its pooled features into out (40: a random
 * model's head may be zeros, as timm's). */
static unsigned long family_launches(gmlp_config cfg, int depth, int fuse, const float *image, float *out)
{
    cfg.depth = depth;
    void *data;
    size_t size;
    counts steady = {0};
    CHECK(gmlp_diag_random_model(&cfg, 37, &data, &size) == GMLP_OK, "random model: %s", gmlp_last_error(NULL));
    setenv("GMLP_FUSE", fuse ? "1" : "0", 1);
    setenv("GMLP_COMMAND_BUFFERS", "0", 1);
    gmlp_context *ctx = context(0);
    gmlp_model *m = NULL;
    CHECK(gmlp_model_load_memory(ctx, data, size, &m) == GMLP_OK, "load: %s", gmlp_last_error(ctx));
    for (int i = 0; m && i < 3; i++) {
        if (i == 2)
            clshim_reset();
        CHECK(gmlp_features(m, image, 1, out) == GMLP_OK, "features: %s", gmlp_last_error(ctx));
    }
    steady = since_reset();
    gmlp_model_free(m);
    gmlp_context_destroy(ctx);
    unsetenv("GMLP_FUSE");
    unsetenv("GMLP_COMMAND_BUFFERS");
    free(data);
    return steady.launches;
}

static void test_families(void)
{
    float image[3 * 20 * 28], a[40], b[40], scratch[40];
    for (size_t i = 0; i < sizeof image / sizeof *image; i++)
        image[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    for (size_t f = 0; f < sizeof families / sizeof *families; f++) {
        unsigned long per[2], tail[2];
        for (int fuse = 0; fuse < 2; fuse++) {
            const unsigned long two = family_launches(families[f].cfg, 2, fuse, image, scratch);
            per[fuse] = family_launches(families[f].cfg, 3, fuse, image, fuse ? b : a) - two;
            tail[fuse] = two - 2 * per[fuse];
        }
        CHECK(per[0] == families[f].unfused && per[1] == families[f].fused,
              "%s: %lu launches a block unfused, %lu fused; want %lu and %lu", families[f].name, per[0], per[1],
              families[f].unfused, families[f].fused);
        /* the rest: the stem (patches, their GEMM), the final norm (fused: in the pooling), the pooling */
        CHECK(tail[0] == 4 && tail[1] == 3, "%s: %lu launches besides the blocks unfused, %lu fused; want 4 and 3",
              families[f].name, tail[0], tail[1]);
        double diff = 0, top = 1e-3;
        for (int i = 0; i < 40; i++)
            diff = fmax(diff, fabs((double)b[i] - a[i])), top = fmax(top, fabs((double)a[i]));
        CHECK(diff / top <= 1e-5, "%s: fused and unfused features %.3g apart (relative), want <= 1e-5",
              families[f].name, diff / top);
        printf("%s: %lu launches a block, %lu with the LayerNorms fused (GMLP_FUSE=1), %lu and %lu besides; "
               "features %.2g apart\n",
               families[f].name, per[0], per[1], tail[0], tail[1], diff / top);
    }
}

#define LM_TOKENS 12

/* The bundled LM decoding LM_TOKENS tokens after a prompt, in a new
 * context: their logits into out (LM_TOKENS x vocab); *per_token: the host
 * calls of the last 8 steps, per step. */
static void lm(const char *path, int profiling, float *out, int *vocab, int *depth, counts *per_token)
{
    gmlp_context *ctx = context(profiling);
    gmlp_model *m = NULL;
    gmlp_lm_state *s = NULL;
    gmlp_config c = {.size = sizeof c};
    CHECK(gmlp_model_load(ctx, path, &m) == GMLP_OK, "load %s: %s", path, gmlp_last_error(ctx));
    if (m)
        gmlp_model_config(m, &c);
    CHECK(m && gmlp_lm_state_create(m, 1, &s) == GMLP_OK, "state: %s", gmlp_last_error(ctx));
    *vocab = c.vocab_size, *depth = c.depth;
    const int32_t prompt[4] = {'T', 'h', 'e', ' '};
    int32_t token = ' ';
    if (s)
        CHECK(gmlp_lm_feed(s, prompt, 4, NULL) == GMLP_OK, "prompt: %s", gmlp_last_error(ctx));
    for (int i = 0; s && i < LM_TOKENS; i++) {
        if (i == LM_TOKENS - 8)
            clshim_reset();
        float *logits = out + (size_t)i * (size_t)c.vocab_size;
        CHECK(gmlp_lm_step(s, &token, logits) == GMLP_OK, "step %d: %s", i, gmlp_last_error(ctx));
        token = 0; /* greedy */
        for (int v = 1; v < c.vocab_size; v++)
            if (logits[v] > logits[token])
                token = v;
    }
    counts n = since_reset();
    *per_token = (counts){n.launches / 8, n.set_arg / 8, n.mem_info / 8};
    gmlp_lm_state_free(s);
    gmlp_model_free(m);
    gmlp_context_destroy(ctx);
}

static void test_lm(const char *path)
{
    static float a[LM_TOKENS * 256], b[LM_TOKENS * 256], c[LM_TOKENS * 256], d[LM_TOKENS * 256];
    static double want[LM_TOKENS * 256];
    int vocab, depth;
    counts cb, plain, unrecorded, unfused;
    unsetenv("GMLP_COMMAND_BUFFERS");
    const int have_cb = command_buffers_run();
    lm(path, 0, a, &vocab, &depth, &cb);
    CHECK(vocab == 256, "the bundled LM is byte-level (vocabulary %d)", vocab);
    if (vocab != 256)
        return;
    setenv("GMLP_COMMAND_BUFFERS", "0", 1);
    lm(path, 0, b, &vocab, &depth, &plain);
    unsetenv("GMLP_COMMAND_BUFFERS");
    lm(path, 1, c, &vocab, &depth, &unrecorded);
    printf("bundled LM (depth %d), per generated token: %s: %lu launches, %lu clSetKernelArg, %lu "
           "clGetMemObjectInfo; plain replay: %lu, %lu, %lu; not recorded (profiling): %lu, %lu, %lu\n",
           depth, have_cb ? "command buffers" : "no command buffers", cb.launches, cb.set_arg, cb.mem_info,
           plain.launches, plain.set_arg, plain.mem_info, unrecorded.launches, unrecorded.set_arg,
           unrecorded.mem_info);
    CHECK(!memcmp(a, b, sizeof a), "LM: command buffers and plain replays, the same logits bit for bit");
    CHECK(!memcmp(a, c, sizeof a), "LM: recorded and unrecorded steps, the same logits bit for bit");
    /* the per-op kernels' cached decoding (as before the fused step): the same logits within 1e-5 */
    setenv("GMLP_LM_STEP", "0", 1);
    lm(path, 0, d, &vocab, &depth, &unfused);
    unsetenv("GMLP_LM_STEP");
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        want[i] = d[i];
    const double e = rel_error(a, want, sizeof want / sizeof *want, 1e-3);
    printf("fused step against the per-op kernels (GMLP_LM_STEP=0: %lu launches, %lu clSetKernelArg a token): "
           "logits within %.2g relative\n", unfused.launches, unfused.set_arg, e);
    CHECK(e <= 1e-5, "LM: the fused step's logits %.3g from the per-op kernels', want <= 1e-5", e);
    const unsigned long bound = have_cb ? (unsigned long)depth + 3 : 3ul * (unsigned long)depth + 3;
    CHECK(cb.launches <= bound, "%lu launches per token, want <= %lu", cb.launches, bound);
    CHECK(plain.launches <= 3ul * (unsigned long)depth + 3, "%lu launches per token of the plain replay, want <= %d",
          plain.launches, 3 * depth + 3);
    CHECK(cb.set_arg == 0 && plain.set_arg == 0 && cb.mem_info == 0 && plain.mem_info == 0,
          "per token: clSetKernelArg %lu and %lu, clGetMemObjectInfo %lu and %lu, want none", cb.set_arg,
          plain.set_arg, cb.mem_info, plain.mem_info);
}

/* gmlp_lm_generate on the bundled LM (100 tokens after a 4-token prompt,
 * o's sampling), counted whole: *bytes read back and *launches per token. */
static void generation(const char *path, gmlp_generate_options o, double *bytes, double *launches, int *depth)
{
    enum { N = 100 };
    gmlp_context *ctx = context(0);
    gmlp_model *m = NULL;
    CHECK(gmlp_model_load(ctx, path, &m) == GMLP_OK, "load %s: %s", path, gmlp_last_error(ctx));
    gmlp_config c = {.size = sizeof c};
    if (m)
        gmlp_model_config(m, &c);
    *depth = c.depth;
    const int32_t prompt[4] = {'T', 'h', 'e', ' '};
    int32_t out[N];
    size_t n = 0;
    o.max_tokens = N;
    clshim_reset();
    CHECK(m && gmlp_lm_generate(m, prompt, 4, &o, out, &n) == GMLP_OK && n == N, "generate: %s",
          gmlp_last_error(ctx));
    *bytes = (double)clshim_count(CLSHIM_READ_BYTES) / N;
    *launches = (double)clshim_launches() / N;
    gmlp_model_free(m);
    gmlp_context_destroy(ctx);
}

static void test_generation(const char *path)
{
    int depth;
    gmlp_generate_options o;
    gmlp_generate_options_default(&o);
    o.temperature = 0.8f, o.top_k = 40, o.top_p = 0.95f, o.seed = 3;
    double bytes, launches, host_bytes, host_launches, greedy_bytes, greedy_launches;
    generation(path, o, &bytes, &launches, &depth);
    setenv("GMLP_SAMPLE_DEVICE", "0", 1);
    generation(path, o, &host_bytes, &host_launches, &depth);
    unsetenv("GMLP_SAMPLE_DEVICE");
    o.temperature = 0;
    generation(path, o, &greedy_bytes, &greedy_launches, &depth);
    printf("generation per token, sampled on the device: %.1f bytes read, %.2f launches; greedy: %.1f, %.2f; "
           "on the host (GMLP_SAMPLE_DEVICE=0): %.1f, %.2f\n", bytes, launches, greedy_bytes, greedy_launches,
           host_bytes, host_launches);
    const int have_cb = command_buffers_run();
    const double bound = have_cb ? depth + 3 : 3.0 * depth + 4;
    CHECK(host_bytes >= 256 * sizeof(float), "the host path reads %.1f bytes a token, not the logits", host_bytes);
    if (check_report_says("LM sampling: on the device")) /* where it has cl_khr_fp64 */
        CHECK(bytes <= 64 && greedy_bytes <= 64, "%.1f and %.1f bytes read a token, want <= 64 (no logits)", bytes,
              greedy_bytes);
    else
        printf("the device samples on the host (the device report): its logits are read back\n");
    CHECK(launches <= bound && greedy_launches <= bound, "%.2f and %.2f launches a token, want <= %.0f", launches,
          greedy_launches, bound);
}

/* After the load nothing compiles: classification at batch 1, 5 and 300
 * (each GEMM size class) builds no program (clBuildProgram, which a cached
 * binary takes too), in every storage and precision the load prepares for:
 * float, half and bfloat16 weights; BF16's and FP16's 16-bit activations
 * and outputs (the library's GEMM kernel: CLBlast builds its own programs
 * at their first use). */
static void test_no_builds_after_load(const char *path)
{
    static const struct {
        gmlp_weight_type weights;
        gmlp_precision precision;
    } cases[] = {{GMLP_WEIGHTS_F32, GMLP_PRECISION_FP32}, {GMLP_WEIGHTS_F16, GMLP_PRECISION_FP32},
                 {GMLP_WEIGHTS_BF16, GMLP_PRECISION_FP32}, {GMLP_WEIGHTS_F32, GMLP_PRECISION_BF16},
                 {GMLP_WEIGHTS_F32, GMLP_PRECISION_FP16}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gmlp_context *ctx = context(0);
        gmlp_load_options o;
        gmlp_load_options_default(&o);
        o.weights = cases[i].weights;
        o.precision = cases[i].precision;
        gmlp_model *m = NULL;
        CHECK(gmlp_model_load_ex(ctx, path, &o, &m) == GMLP_OK, "load: %s", gmlp_last_error(ctx));
        if (!m) {
            gmlp_context_destroy(ctx);
            continue;
        }
        gmlp_config cfg = {.size = sizeof cfg};
        gmlp_model_config(m, &cfg);
        const size_t per = (size_t)cfg.in_chans * cfg.img_h * cfg.img_w;
        float *x = calloc(300 * per, sizeof *x), *y = malloc(300 * (size_t)cfg.num_classes * sizeof *y);
        static const size_t batches[] = {1, 5, 300};
        clshim_reset();
        for (size_t b = 0; b < 3; b++)
            CHECK(gmlp_classify(m, x, batches[b], y) == GMLP_OK, "weights %d, %s, batch %zu after the load: %s",
                  (int)cases[i].weights, gmlp_precision_name(cases[i].precision), batches[b], gmlp_last_error(ctx));
        const unsigned long builds = clshim_count(CLSHIM_BUILD_PROGRAM);
        CHECK(builds == 0, "weights %d, %s: %lu programs built after the load", (int)cases[i].weights,
              gmlp_precision_name(cases[i].precision), builds);
        free(x), free(y);
        gmlp_model_free(m);
        gmlp_context_destroy(ctx);
    }
}

int main(int argc, char **argv)
{
    /* --families alone: small vision models, which every implementation counts (rusticl too) */
    if (argc == 2 && !strcmp(argv[1], "--families")) {
        test_families();
        return check_summary("test_host_calls --families");
    }
    if (argc < 3) {
        printf("usage: test_host_calls BUNDLED_LM.safetensors VISION_MODEL.safetensors | --families\n");
        return 2;
    }
    test_no_builds_after_load(argv[2]);
    test_vision();
    test_lm(argv[1]);
    test_generation(argv[1]);
    return check_summary("test_host_calls");
}
