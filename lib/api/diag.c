/* gmlp_diag.h: what benchmarks, profiles and the portability checks read of
 * the library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "cl/clerr.h"
#include "cl/program.h"
#include "gmlp_diag.h"
#include "core/alloc.h"
#include "model/arch.h"
#include "model/model.h"
#include "ops/gemm_tune.h"

gmlp_status gmlp_diag_memory(const gmlp_context *ctx, size_t *used, size_t *peak)
{
    if (!ctx || !used || !peak)
        return gmlp_fail(gmlp_api_error(), GMLP_ERR_INVALID_ARGUMENT, "gmlp_diag_memory: NULL argument");
    *used = ctx->mem_used;
    *peak = ctx->mem_peak;
    return GMLP_OK;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static gmlp_status time_gemm(gmlp_context *ctx, const gmlp_gemm *g, gmlp_gemm_backend backend, int runs,
                             double *seconds)
{
    GMLP_TRY(gmlp_op_gemm_on(ctx, backend, g)); /* untimed: a first call may compile */
    cl_int e = clFinish(ctx->queue);
    double t = now();
    for (int r = 0; r < runs && e == CL_SUCCESS; r++) {
        GMLP_TRY(gmlp_op_gemm_on(ctx, backend, g));
        if (ctx->dev.type & CL_DEVICE_TYPE_CPU)
            e = clFinish(ctx->queue); /* PoCL runs one command at a time anyway */
    }
    if (e == CL_SUCCESS)
        e = clFinish(ctx->queue);
    if (e != CL_SUCCESS)
        return gmlp_fail_cl(&ctx->err, "clFinish", e);
    *seconds = (now() - t) / runs;
    return GMLP_OK;
}

gmlp_status gmlp_diag_gemm_seconds(gmlp_context *ctx, gmlp_gemm_backend backend, size_t m, size_t n, size_t k,
                                   int runs, double *seconds)
{
    if (!ctx || !seconds)
        return gmlp_fail(gmlp_api_error(), GMLP_ERR_INVALID_ARGUMENT, "gmlp_diag_gemm_seconds: NULL argument");
    if (!m || !n || !k || runs < 1 || (backend != GMLP_GEMM_KERNEL && backend != GMLP_GEMM_CLBLAST))
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT,
                         "gmlp_diag_gemm_seconds: needs m, n, k and runs >= 1, and the kernel or CLBlast");
    pthread_mutex_lock(&ctx->lock);
    cl_mem a = NULL, b = NULL, c = NULL;
    const float zero = 0.0f;
    gmlp_status st = gmlp_buffer_create(ctx, m * k * 4, NULL, "the GEMM's A", &a);
    if (st == GMLP_OK)
        st = gmlp_buffer_create(ctx, k * n * 4, NULL, "the GEMM's B", &b);
    if (st == GMLP_OK)
        st = gmlp_buffer_create(ctx, m * n * 4, NULL, "the GEMM's C", &c);
    /* zeros: no denormals or NaNs to slow a CPU down */
    cl_mem bufs[3] = {a, b, c};
    size_t bytes[3] = {m * k * 4, k * n * 4, m * n * 4};
    for (int i = 0; i < 3 && st == GMLP_OK; i++) {
        cl_int e = clEnqueueFillBuffer(ctx->queue, bufs[i], &zero, sizeof zero, 0, bytes[i], 0, NULL, NULL);
        if (e != CL_SUCCESS)
            st = gmlp_fail_cl(&ctx->err, "clEnqueueFillBuffer", e);
    }
    if (st == GMLP_OK) {
        const gmlp_gemm g = {.m = m, .n = n, .k = k, .a = {.buf = a, .ld = k}, .b = {.buf = b, .ld = n},
                             .c = {.buf = c, .ld = n}};
        st = time_gemm(ctx, &g, backend, runs, seconds);
    }
    gmlp_buffer_release(ctx, &a);
    gmlp_buffer_release(ctx, &b);
    gmlp_buffer_release(ctx, &c);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

gmlp_status gmlp_diag_profile(gmlp_context *ctx, gmlp_diag_kernel_time *rows, size_t max, size_t *n)
{
    if (!ctx || !n || (max && !rows))
        return gmlp_fail(gmlp_api_error(), GMLP_ERR_INVALID_ARGUMENT, "gmlp_diag_profile: NULL argument");
    *n = 0;
    if (!ctx->set.profiling)
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT,
                         "gmlp_diag_profile: the context was made without gmlp_context_options.profiling");
    pthread_mutex_lock(&ctx->lock);
    gmlp_status st = GMLP_OK;
    cl_int e = clFinish(ctx->queue);
    if (e != CL_SUCCESS)
        st = gmlp_fail_cl(&ctx->err, "clFinish", e);
    /* one row per label, in order of first launch; labels are few */
    const char **seen = gmlp_calloc(ctx->n_profile ? ctx->n_profile : 1, sizeof *seen);
    if (st == GMLP_OK && !seen)
        st = gmlp_fail(&ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory reading a profile");
    for (size_t i = 0; st == GMLP_OK && i < ctx->n_profile; i++) {
        const gmlp_profile_entry *p = &ctx->profile[i];
        cl_ulong ns;
        if ((e = gmlp_profile_ns(p, &ns)) != CL_SUCCESS) {
            st = gmlp_fail_cl(&ctx->err, "clGetEventProfilingInfo", e);
            break;
        }
        size_t r = 0;
        while (r < *n && strcmp(seen[r], p->label))
            r++;
        int fresh = r == *n;
        if (fresh)
            seen[(*n)++] = p->label;
        if (r >= max) /* counted in *n, but no room for its row */
            continue;
        if (fresh) {
            rows[r] = (gmlp_diag_kernel_time){.launches = 0, .total_us = 0, .bytes = 0};
            snprintf(rows[r].name, sizeof rows[r].name, "%s", p->label);
        }
        rows[r].launches++;
        rows[r].total_us += (double)ns * 1e-3;
        rows[r].bytes += (double)p->bytes;
    }
    free(seen);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

void gmlp_diag_profile_reset(gmlp_context *ctx)
{
    if (!ctx)
        return;
    pthread_mutex_lock(&ctx->lock);
    clFinish(ctx->queue);
    gmlp_profile_clear(ctx);
    pthread_mutex_unlock(&ctx->lock);
}

gmlp_status gmlp_diag_random_model(const gmlp_config *cfg, uint64_t seed, void **data, size_t *size)
{
    gmlp_error *err = gmlp_api_error();
    if (!cfg || !data || !size)
        return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT, "gmlp_diag_random_model: NULL argument");
    gmlp_config c = *cfg;
    const gmlp_arch_desc *a = gmlp_arch_get(c.arch);
    if (!a)
        return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT, "gmlp_diag_random_model: arch %d is no GMLP_ARCH_*", c.arch);
    if (c.heads < 1)
        c.heads = 1;
    if (!a->lm && c.patch_h > 0 && c.patch_w > 0)
        c.seq_len = (c.img_h / c.patch_h) * (c.img_w / c.patch_w);
    /* a token MLP (Mixer) needs its width, which GluMlp (halves) splits in two like fc1's */
    const int token_ok = a->mix != GMLP_MIX_MLP || (c.token_dim > 0 && (!a->halves || c.token_dim % 2 == 0));
    const int image_ok = c.in_chans > 0 && c.in_chans <= 3 && c.patch_h > 0 && c.patch_w > 0 &&
                         c.img_h % c.patch_h == 0 && c.img_w % c.patch_w == 0 && c.num_classes >= 0 && token_ok;
    int ok = c.dim > 0 && c.depth > 0 && c.ffn_dim > 1 && c.seq_len > 0 &&
             (!a->halves || (c.ffn_dim % 2 == 0 && c.ffn_dim / 2 % c.heads == 0)) &&
             (a->lm ? c.vocab_size > 0 : image_ok);
    if (!ok)
        return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT, "gmlp_diag_random_model: inconsistent sizes");
    return gmlp_random_model(&c, seed, data, size, err);
}

size_t gmlp_diag_programs(char *buf, size_t size)
{
    size_t need = 0;
    if (buf && size)
        buf[0] = 0;
    for (int wg = GMLP_REDUCE_WG_MAX; wg >= 1; wg /= 2) {
        char line[64];
        int n = snprintf(line, sizeof line, "shared -DGMLP_WG=%d\n", wg);
        if (buf && need + (size_t)n < size)
            memcpy(buf + need, line, (size_t)n + 1);
        need += (size_t)n;
    }
    size_t room = buf && size > need ? size - need : 0;
    return need + gmlp_gemm_variants(room ? buf + need : NULL, room);
}

size_t gmlp_diag_program_source(const char *name, char *buf, size_t size)
{
    if (buf && size)
        buf[0] = 0;
    if (!name)
        return 0;
    char *src = gmlp_program_source(strcmp(name, "shared") ? name : NULL);
    size_t len = src ? strlen(src) : 0;
    if (buf && size && len) {
        size_t n = len < size - 1 ? len : size - 1;
        memcpy(buf, src, n);
        buf[n] = 0;
    }
    free(src);
    return len;
}

/* The model once at this batch, zeros in, so that its GEMMs note their shapes. */
static gmlp_status run_model(gmlp_model *model, const gmlp_config *c, size_t batch)
{
    int lm = gmlp_arch_of(c)->lm;
    size_t in = batch * (lm ? (size_t)c->seq_len : (size_t)c->in_chans * c->img_h * c->img_w);
    size_t outs = batch * (lm ? (size_t)c->seq_len * c->vocab_size : (size_t)(c->num_classes ? c->num_classes : c->dim));
    void *input = gmlp_calloc(in, lm ? sizeof(int32_t) : sizeof(float));
    float *out = gmlp_malloc(outs * sizeof *out);
    gmlp_status st = input && out ? GMLP_OK : gmlp_fail(gmlp_api_error(), GMLP_ERR_HOST_MEMORY, "gmlp_tune: out of host memory");
    if (st == GMLP_OK && !lm)
        st = c->num_classes ? gmlp_classify(model, input, batch, out) : gmlp_features(model, input, batch, out);
    if (st == GMLP_OK && lm) {
        st = gmlp_lm_logits(model, input, batch, (size_t)c->seq_len, out);
        gmlp_lm_state *s = NULL;
        if (st == GMLP_OK && c->causal && (st = gmlp_lm_state_create(model, batch, &s)) == GMLP_OK)
            st = gmlp_lm_step(s, input, out); /* a decoding step's narrow products */
        gmlp_lm_state_free(s);
    }
    free(input);
    free(out);
    return st;
}

gmlp_status gmlp_tune(gmlp_context *ctx, gmlp_model *model, size_t batch, gmlp_tune_progress progress, void *user)
{
    if (!ctx || !model)
        return gmlp_fail(gmlp_api_error(), GMLP_ERR_INVALID_ARGUMENT, "gmlp_tune: NULL argument");
    gmlp_config c = {.size = sizeof c};
    GMLP_TRY(gmlp_model_config(model, &c));
    if (batch < 1 || batch > 4096)
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT, "gmlp_tune: batch %zu outside 1 .. 4096", batch);
    if (!ctx->set.cache_dir[0])
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT,
                         "gmlp_tune: the context has no cache directory to keep the results in");
    gmlp_gemm_record *rec = gmlp_calloc(1, sizeof *rec);
    if (!rec)
        return gmlp_ctx_fail(ctx, GMLP_ERR_HOST_MEMORY, "gmlp_tune: out of host memory");
    pthread_mutex_lock(&ctx->lock);
    gmlp_gemm_record_set(ctx, rec);
    pthread_mutex_unlock(&ctx->lock);
    gmlp_status st = run_model(model, &c, batch);
    pthread_mutex_lock(&ctx->lock);
    gmlp_gemm_record_set(ctx, NULL);
    if (st == GMLP_OK && rec->lost)
        st = gmlp_fail(&ctx->err, GMLP_ERR_HOST_MEMORY, "gmlp_tune: out of host memory noting the shapes");
    if (st == GMLP_OK)
        st = gmlp_tune_run(ctx, rec, progress, user);
    pthread_mutex_unlock(&ctx->lock);
    free(rec->g);
    free(rec);
    return st;
}
