#include "context.h"

#include <clblast_c.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/clerr.h"
#include "cl/program.h"
#include "gmlp_cl.h"

static const char *const kernel_names[GMLP_K_COUNT] = {
    [GMLP_K_LAYERNORM] = "gmlp_layernorm",   [GMLP_K_SGU_GATE] = "gmlp_sgu_gate",
    [GMLP_K_PATCHIFY] = "gmlp_patchify",
    [GMLP_K_MEAN_TOKENS] = "gmlp_mean_tokens", [GMLP_K_EMBED] = "gmlp_embed",
    [GMLP_K_SHIFT_TOKENS] = "gmlp_shift_tokens", [GMLP_K_SOFTMAX_ROWS] = "gmlp_softmax_rows",
};

gmlp_status gmlp_ctx_fail(gmlp_context *ctx, gmlp_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gmlp_verrf(ctx->err, sizeof ctx->err, st, fmt, ap);
    va_end(ap);
    gmlp_log("%s", ctx->err);
    return st;
}

gmlp_status gmlp_ctx_cl_fail(gmlp_context *ctx, const char *call, cl_int e)
{
    gmlp_status st = (e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_RESOURCES) ? GMLP_ERR_DEVICE_MEMORY
                     : e == CL_OUT_OF_HOST_MEMORY                                          ? GMLP_ERR_HOST_MEMORY
                                                                                           : GMLP_ERR_OPENCL;
    return gmlp_ctx_fail(ctx, st, "%s failed: %s (%d)", call, gmlp_cl_error_name(e), (int)e);
}

gmlp_status gmlp_buffer_create(gmlp_context *ctx, size_t bytes, const void *host_ptr, const char *what, cl_mem *out)
{
    *out = NULL;
    const size_t given = host_ptr ? bytes : 0;
    if (bytes == 0)
        bytes = 4; /* zero-size buffers are invalid in OpenCL */
    if (bytes > ctx->dev.max_alloc)
        return gmlp_ctx_fail(ctx, GMLP_ERR_DEVICE_MEMORY,
                             "%s needs %zu bytes, more than the device's largest allocation (%llu bytes)", what,
                             bytes, (unsigned long long)ctx->dev.max_alloc);
    if (ctx->mem_limit && bytes > ctx->mem_limit - ctx->mem_used)
        return gmlp_ctx_fail(ctx, GMLP_ERR_DEVICE_MEMORY,
                             "%s needs %zu bytes of device memory; %zu of the %zu-byte limit are in use", what,
                             bytes, ctx->mem_used, ctx->mem_limit);
    cl_int e;
    /* no CL_MEM_COPY_HOST_PTR: PoCL copies a rounded-up size with it, reading
     * past the end of a host array of, say, one half (2 bytes) */
    *out = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, bytes, NULL, &e);
    if (e != CL_SUCCESS) {
        *out = NULL;
        gmlp_status st = gmlp_ctx_cl_fail(ctx, "clCreateBuffer", e);
        size_t n = strlen(ctx->err);
        snprintf(ctx->err + n, sizeof ctx->err - n, " allocating %zu bytes for %s", bytes, what);
        return e == CL_INVALID_BUFFER_SIZE ? GMLP_ERR_DEVICE_MEMORY : st;
    }
    if (given && (e = clEnqueueWriteBuffer(ctx->queue, *out, CL_TRUE, 0, given, host_ptr, 0, NULL, NULL)) != CL_SUCCESS) {
        clReleaseMemObject(*out);
        *out = NULL;
        return gmlp_ctx_cl_fail(ctx, "clEnqueueWriteBuffer (initial contents)", e);
    }
    ctx->mem_used += bytes;
    if (ctx->mem_used > ctx->mem_peak)
        ctx->mem_peak = ctx->mem_used;
    return GMLP_OK;
}

size_t gmlp_mem_budget(const gmlp_context *ctx, size_t replacing)
{
    size_t budget = (size_t)(ctx->dev.global_mem / 4);
    if (ctx->mem_limit) {
        size_t others = ctx->mem_used - replacing;
        size_t left = ctx->mem_limit > others ? ctx->mem_limit - others : 0;
        budget = left < budget ? left : budget;
    }
    return budget;
}

void gmlp_buffer_release(gmlp_context *ctx, cl_mem *buf)
{
    if (!*buf)
        return;
    size_t bytes = 0;
    clGetMemObjectInfo(*buf, CL_MEM_SIZE, sizeof bytes, &bytes, NULL);
    ctx->mem_used -= bytes < ctx->mem_used ? bytes : ctx->mem_used;
    clReleaseMemObject(*buf);
    *buf = NULL;
}

/* Largest power of two ≤ 64 the device accepts for one work-group. */
static int pick_wg(const gmlp_devinfo *d)
{
    int wg = 64;
    while (wg > 1 && (size_t)wg > d->max_wg)
        wg /= 2;
    return wg;
}

static size_t env_size(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (*end == 'k' || *end == 'K')
        n <<= 10;
    else if (*end == 'm' || *end == 'M')
        n <<= 20;
    else if (*end == 'g' || *end == 'G')
        n <<= 30;
    return (size_t)n;
}

/* The backend opts ask for, $GMLP_GEMM deciding AUTO. */
static gmlp_status pick_backend(gmlp_context *ctx, gmlp_gemm_backend want)
{
    if (want == GMLP_GEMM_AUTO) {
        const char *env = getenv("GMLP_GEMM");
        if (!env || !*env || !strcmp(env, "kernel"))
            want = GMLP_GEMM_KERNEL;
        else if (!strcmp(env, "clblast"))
            want = GMLP_GEMM_CLBLAST;
        else
            return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT, "GMLP_GEMM=%s: expected kernel or clblast", env);
    }
    if (want != GMLP_GEMM_KERNEL && want != GMLP_GEMM_CLBLAST)
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT, "gmlp_context_options.gemm: unknown backend %d",
                             (int)want);
    ctx->gemm_backend = want;
    return GMLP_OK;
}

/* The rest of a context, once it has a device, a cl_context and a queue. */
static gmlp_status init_kernels(gmlp_context *ctx)
{
    ctx->wg = pick_wg(&ctx->dev);
    ctx->mem_limit = env_size("GMLP_DEVICE_MEMORY_LIMIT");
    char build_opts[256];
    snprintf(build_opts, sizeof build_opts, "-cl-std=CL1.2 -DGMLP_WG=%d", ctx->wg);
    GMLP_TRY(gmlp_program_build(ctx->cl, &ctx->dev, NULL, build_opts, &ctx->program, ctx->err, sizeof ctx->err));
    for (int k = 0; k < GMLP_K_COUNT; k++) {
        cl_int e;
        ctx->kernels[k] = clCreateKernel(ctx->program, kernel_names[k], &e);
        if (e != CL_SUCCESS) {
            ctx->kernels[k] = NULL;
            return gmlp_ctx_fail(ctx, GMLP_ERR_OPENCL, "clCreateKernel(%s) failed: %s", kernel_names[k],
                                 gmlp_cl_error_name(e));
        }
    }
    return GMLP_OK;
}

static gmlp_status init(gmlp_context *ctx, const gmlp_context_options *opts)
{
    GMLP_TRY(pick_backend(ctx, opts->gemm));
    const char *device = opts->device ? opts->device : getenv("GMLP_DEVICE");
    GMLP_TRY(gmlp_device_select(device, &ctx->dev, ctx->err, sizeof ctx->err));
    GMLP_TRY(gmlp_shared_context_acquire(&ctx->dev, &ctx->cl, ctx->err, sizeof ctx->err));
    cl_int e;
    ctx->queue = clCreateCommandQueue(ctx->cl, ctx->dev.device, 0, &e);
    if (e != CL_SUCCESS) {
        ctx->queue = NULL;
        return gmlp_ctx_cl_fail(ctx, "clCreateCommandQueue", e);
    }
    return init_kernels(ctx);
}

/* The caller's objects: checked to belong together and the queue to be in
 * order (the ops rely on it); borrowed, so teardown leaves them alone. */
static gmlp_status init_borrowed(gmlp_context *ctx, cl_context cl, cl_device_id device, cl_command_queue queue,
                                 const gmlp_context_options *opts)
{
    GMLP_TRY(pick_backend(ctx, opts->gemm));
    if (!cl || !device || !queue)
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT, "gmlp_context_create_cl: a %s that is NULL",
                             !cl ? "cl_context" : !device ? "cl_device_id" : "cl_command_queue");
    ctx->borrowed = 1;
    cl_context qctx;
    cl_device_id qdev;
    cl_command_queue_properties props;
    cl_platform_id platform;
    cl_int e = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof qctx, &qctx, NULL);
    if (!e)
        e = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof qdev, &qdev, NULL);
    if (!e)
        e = clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    if (!e)
        e = clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL);
    if (e)
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT,
                             "gmlp_context_create_cl: the queue or device cannot be queried: %s",
                             gmlp_cl_error_name(e));
    if (qctx != cl || qdev != device)
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT,
                             "gmlp_context_create_cl: the queue belongs to another %s",
                             qctx != cl ? "cl_context" : "device");
    if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        return gmlp_ctx_fail(ctx, GMLP_ERR_INVALID_ARGUMENT,
                             "gmlp_context_create_cl: the queue runs out of order; the library needs an in-order queue");
    gmlp_devinfo_query(platform, device, &ctx->dev);
    ctx->cl = cl;
    ctx->queue = queue;
    return init_kernels(ctx);
}

static void teardown(gmlp_context *ctx)
{
    for (int k = 0; k < GMLP_K_COUNT; k++)
        if (ctx->kernels[k])
            clReleaseKernel(ctx->kernels[k]);
    if (ctx->program)
        clReleaseProgram(ctx->program);
    if (ctx->epilogue)
        clReleaseKernel(ctx->epilogue);
    for (int v = 0; v < 12; v++) {
        gmlp_gemm_kernel *g = &ctx->gemm[v / 3][v % 3];
        if (g->kernel)
            clReleaseKernel(g->kernel);
        if (g->program)
            clReleaseProgram(g->program);
    }
    if (ctx->queue)
        clFinish(ctx->queue); /* nothing of ours is left running */
    if (ctx->borrowed)
        return;
    if (ctx->queue)
        clReleaseCommandQueue(ctx->queue);
    if (ctx->cl)
        gmlp_shared_context_release(ctx->cl);
}

void gmlp_context_options_default(gmlp_context_options *opts)
{
    if (!opts)
        return;
    gmlp_context_options d = {.device = NULL, .gemm = GMLP_GEMM_AUTO};
    *opts = d;
}

/* Allocates a context and runs init, or init_borrowed on the caller's objects. */
static gmlp_status create(const gmlp_context_options *opts, cl_context cl, cl_device_id device,
                          cl_command_queue queue, int borrow, gmlp_context **out)
{
    char *terr = gmlp_thread_error();
    if (!out)
        return gmlp_errf(terr, GMLP_ERRMSG_SIZE, GMLP_ERR_INVALID_ARGUMENT, "gmlp_context_create: out is NULL");
    *out = NULL;
    gmlp_context_options defaults;
    gmlp_context_options_default(&defaults);
    if (!opts)
        opts = &defaults;
    gmlp_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return gmlp_errf(terr, GMLP_ERRMSG_SIZE, GMLP_ERR_HOST_MEMORY, "out of host memory creating a context");
    gmlp_status st = borrow ? init_borrowed(ctx, cl, device, queue, opts) : init(ctx, opts);
    if (st != GMLP_OK) {
        snprintf(terr, GMLP_ERRMSG_SIZE, "%s", ctx->err);
        teardown(ctx);
        free(ctx);
        return st;
    }
    pthread_mutex_init(&ctx->lock, NULL);
    snprintf(ctx->err, sizeof ctx->err, "no error");
    *out = ctx;
    return GMLP_OK;
}

gmlp_status gmlp_context_create_ex(const gmlp_context_options *opts, gmlp_context **out)
{
    return create(opts, NULL, NULL, NULL, 0, out);
}

gmlp_status gmlp_context_create_cl(cl_context cl, cl_device_id device, cl_command_queue queue,
                                   const gmlp_context_options *opts, gmlp_context **out)
{
    return create(opts, cl, device, queue, 1, out);
}

gmlp_status gmlp_context_create(const char *device, gmlp_context **out)
{
    gmlp_context_options opts;
    gmlp_context_options_default(&opts);
    opts.device = device;
    return gmlp_context_create_ex(&opts, out);
}

void gmlp_context_destroy(gmlp_context *ctx)
{
    if (!ctx)
        return;
    teardown(ctx);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

const char *gmlp_last_error(const gmlp_context *ctx)
{
    return ctx ? ctx->err : gmlp_thread_error();
}

gmlp_gemm_backend gmlp_context_gemm(const gmlp_context *ctx)
{
    return ctx ? ctx->gemm_backend : GMLP_GEMM_AUTO;
}

const char *gmlp_context_device_name(const gmlp_context *ctx)
{
    return ctx ? ctx->dev.name : "";
}

size_t gmlp_list_devices(char *buf, size_t size)
{
    gmlp_devinfo *list;
    size_t n, need = 0;
    if (gmlp_devices_enumerate(&list, &n, gmlp_thread_error(), GMLP_ERRMSG_SIZE) != GMLP_OK) {
        if (buf && size)
            buf[0] = 0;
        return 0;
    }
    char line[1024];
    if (buf && size)
        buf[0] = 0;
    for (size_t i = 0; i < n; i++) {
        int len = gmlp_devinfo_format(&list[i], i, line, sizeof line);
        if (len < 0)
            continue;
        if (buf && need + (size_t)len < size)
            memcpy(buf + need, line, (size_t)len + 1);
        need += (size_t)len;
    }
    free(list);
    return need;
}
