/* Contexts: creation (on a device the library opens, or on the caller's
 * OpenCL objects), destruction, their error and logging. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "gmlp_cl.h"
#include "core/alloc.h"
#include "ops/ops.h"

gmlp_error *gmlp_api_error(void)
{
    gmlp_logger lg = gmlp_process_logger();
    if (lg.level == GMLP_LOG_AUTO)
        lg.level = gmlp_env_log_level();
    return gmlp_thread_error_logging(&lg);
}

int gmlp_size_ok(size_t given, size_t min)
{
    return given >= min && given <= (1u << 16);
}

int gmlp_sized_in(void *defaults, size_t size, size_t min, const void *src)
{
    size_t given;
    memcpy(&given, src, sizeof given);
    if (!gmlp_size_ok(given, min))
        return 0;
    memcpy(defaults, src, given < size ? given : size);
    memcpy(defaults, &size, sizeof size);
    return 1;
}

int gmlp_options_in(void *defaults, size_t size, const void *src)
{
    return gmlp_sized_in(defaults, size, 2 * sizeof(size_t), src);
}

void gmlp_set_log(gmlp_log_level level, gmlp_log_callback log, void *user)
{
    gmlp_logger lg = {level, log, user};
    gmlp_process_logger_set(&lg);
}

void gmlp_context_options_default(gmlp_context_options *opts)
{
    if (opts)
        *opts = (gmlp_context_options){.size = sizeof *opts, .gemm = GMLP_GEMM_AUTO, .log_level = GMLP_LOG_AUTO};
}

/* A context on the device opts name (borrow NULL), or on the caller's objects. */
static gmlp_status create(const gmlp_context_options *opts, const cl_command_queue *borrow, cl_context cl,
                          cl_device_id cl_device, gmlp_context **out)
{
    gmlp_error *terr = gmlp_api_error();
    if (!out)
        return gmlp_fail(terr, GMLP_ERR_INVALID_ARGUMENT, "gmlp_context_create: out is NULL");
    *out = NULL;
    gmlp_context_options o;
    gmlp_context_options_default(&o);
    if (opts && !gmlp_options_in(&o, sizeof o, opts))
        return gmlp_fail(terr, GMLP_ERR_INVALID_ARGUMENT,
                         "gmlp_context_options.size is %zu: fill the options with gmlp_context_options_default",
                         opts->size);
    gmlp_context *ctx = gmlp_calloc(1, sizeof *ctx);
    if (!ctx)
        return gmlp_fail(terr, GMLP_ERR_HOST_MEMORY, "out of host memory creating a context");
    ctx->err.log = terr->log; /* until the context's own logger is known */
    const char *device;
    gmlp_status st = gmlp_env_settings(&o, &ctx->set, &device, &ctx->err);
    ctx->err.log = &ctx->set.log;
    if (st == GMLP_OK)
        st = borrow ? gmlp_context_open_borrowed(ctx, cl, cl_device, *borrow) : gmlp_context_open(ctx, device);
    if (st == GMLP_OK)
        st = gmlp_ops_open(ctx);
    if (st != GMLP_OK) {
        snprintf(terr->msg, sizeof terr->msg, "%s", ctx->err.msg);
        gmlp_ops_close(ctx);
        gmlp_context_close(ctx);
        free(ctx);
        return st;
    }
    pthread_mutex_init(&ctx->lock, NULL);
    snprintf(ctx->err.msg, sizeof ctx->err.msg, "no error");
    *out = ctx;
    return GMLP_OK;
}

gmlp_status gmlp_context_create_ex(const gmlp_context_options *opts, gmlp_context **out)
{
    return create(opts, NULL, NULL, NULL, out);
}

gmlp_status gmlp_context_create(const char *device, gmlp_context **out)
{
    gmlp_context_options opts;
    gmlp_context_options_default(&opts);
    opts.device = device;
    return create(&opts, NULL, NULL, NULL, out);
}

gmlp_status gmlp_context_create_cl(cl_context cl, cl_device_id device, cl_command_queue queue,
                                   const gmlp_context_options *opts, gmlp_context **out)
{
    return create(opts, &queue, cl, device, out);
}

gmlp_status gmlp_context_cl_objects(const gmlp_context *ctx, cl_context *cl, cl_device_id *device,
                                    cl_command_queue *queue)
{
    if (!ctx)
        return gmlp_fail(gmlp_api_error(), GMLP_ERR_INVALID_ARGUMENT, "gmlp_context_cl_objects: NULL context");
    if (cl)
        *cl = ctx->cl;
    if (device)
        *device = ctx->dev.device;
    if (queue)
        *queue = ctx->queue;
    return GMLP_OK;
}

void gmlp_context_destroy(gmlp_context *ctx)
{
    if (!ctx)
        return;
    gmlp_ops_close(ctx);
    gmlp_context_close(ctx);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

gmlp_status gmlp_ctx_fail(gmlp_context *ctx, gmlp_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&ctx->lock);
    gmlp_vfail(&ctx->err, st, fmt, ap);
    pthread_mutex_unlock(&ctx->lock);
    va_end(ap);
    return st;
}

/* A copy: another thread's call may write ctx->err once the lock is released. */
const char *gmlp_last_error(const gmlp_context *ctx)
{
    static _Thread_local char msg[GMLP_ERRMSG_SIZE];
    if (!ctx)
        return gmlp_thread_error()->msg;
    pthread_mutex_t *lock = (pthread_mutex_t *)&ctx->lock; /* the context is not const, only this view of it */
    pthread_mutex_lock(lock);
    memcpy(msg, ctx->err.msg, sizeof msg);
    pthread_mutex_unlock(lock);
    return msg;
}

gmlp_gemm_backend gmlp_context_gemm(const gmlp_context *ctx)
{
    return ctx ? ctx->set.gemm : GMLP_GEMM_AUTO;
}

const char *gmlp_context_device_name(const gmlp_context *ctx)
{
    return ctx ? ctx->dev.name : "";
}
