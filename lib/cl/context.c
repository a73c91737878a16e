#include "context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/clerr.h"
#include "core/alloc.h"

gmlp_status gmlp_context_open(gmlp_context *ctx, const char *device)
{
    GMLP_TRY(gmlp_device_select(device, &ctx->dev, &ctx->err));
    GMLP_TRY(gmlp_shared_context_acquire(&ctx->dev, &ctx->cl, &ctx->err));
    cl_int e;
    ctx->queue = clCreateCommandQueue(ctx->cl, ctx->dev.device, ctx->set.profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &e);
    if (e != CL_SUCCESS) {
        ctx->queue = NULL;
        return gmlp_fail_cl(&ctx->err, "clCreateCommandQueue", e);
    }
    gmlp_cmdbuf_probe(ctx);
    return GMLP_OK;
}

gmlp_status gmlp_context_open_borrowed(gmlp_context *ctx, cl_context cl, cl_device_id device, cl_command_queue queue)
{
    if (!cl || !device || !queue)
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "gmlp_context_create_cl: a %s that is NULL",
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
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT,
                         "gmlp_context_create_cl: the queue or device cannot be queried: %s (%d)", gmlp_cl_error_name(e),
                         (int)e);
    if (qctx != cl || qdev != device)
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "gmlp_context_create_cl: the queue belongs to another %s",
                         qctx != cl ? "cl_context" : "device");
    if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT,
                         "gmlp_context_create_cl: the queue runs out of order; the library needs an in-order queue");
    if (ctx->set.profiling && !(props & CL_QUEUE_PROFILING_ENABLE))
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT,
                         "gmlp_context_create_cl: profiling asked for, but the queue has no CL_QUEUE_PROFILING_ENABLE");
    gmlp_devinfo_query(platform, device, &ctx->dev);
    ctx->cl = cl;
    ctx->queue = queue;
    gmlp_cmdbuf_probe(ctx);
    return GMLP_OK;
}

void gmlp_context_close(gmlp_context *ctx)
{
    if (ctx->queue)
        clFinish(ctx->queue); /* nothing of ours is left running */
    gmlp_profile_clear(ctx);
    free(ctx->profile);
    ctx->profile = NULL;
    gmlp_kernels_release(ctx);
    if (ctx->borrowed)
        return;
    if (ctx->queue)
        clReleaseCommandQueue(ctx->queue);
    if (ctx->cl)
        gmlp_shared_context_release(ctx->cl);
}

gmlp_status gmlp_buffer_create(gmlp_context *ctx, size_t bytes, const void *host_ptr, const char *what, cl_mem *out)
{
    *out = NULL;
    const size_t given = host_ptr ? bytes : 0;
    if (bytes == 0)
        bytes = 4; /* zero-size buffers are invalid in OpenCL */
    if (bytes > ctx->dev.max_alloc)
        return gmlp_fail(&ctx->err, GMLP_ERR_DEVICE_MEMORY,
                         "%s needs %zu bytes, more than the device's largest allocation (%llu bytes)", what, bytes,
                         (unsigned long long)ctx->dev.max_alloc);
    if (ctx->set.mem_limit && bytes > ctx->set.mem_limit - ctx->mem_used)
        return gmlp_fail(&ctx->err, GMLP_ERR_DEVICE_MEMORY,
                         "%s needs %zu bytes of device memory; %zu of the %zu-byte limit are in use", what, bytes,
                         ctx->mem_used, ctx->set.mem_limit);
    cl_int e;
    /* no CL_MEM_COPY_HOST_PTR: PoCL copies a rounded-up size with it, reading
     * past the end of a host array of, say, one half (2 bytes) */
    *out = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, bytes, NULL, &e);
    if (e != CL_SUCCESS) {
        *out = NULL;
        char call[300];
        snprintf(call, sizeof call, "clCreateBuffer(%zu bytes for %s)", bytes, what);
        gmlp_status st = gmlp_fail_cl(&ctx->err, call, e);
        return e == CL_INVALID_BUFFER_SIZE ? GMLP_ERR_DEVICE_MEMORY : st;
    }
    if (given && (e = clEnqueueWriteBuffer(ctx->queue, *out, CL_TRUE, 0, given, host_ptr, 0, NULL, NULL)) != CL_SUCCESS) {
        clReleaseMemObject(*out);
        *out = NULL;
        return gmlp_fail_cl(&ctx->err, "clEnqueueWriteBuffer (initial contents)", e);
    }
    ctx->mem_used += bytes;
    if (ctx->mem_used > ctx->mem_peak)
        ctx->mem_peak = ctx->mem_used;
    return GMLP_OK;
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

size_t gmlp_mem_budget(const gmlp_context *ctx, size_t replacing)
{
    size_t budget = (size_t)(ctx->dev.global_mem / 4);
    if (ctx->set.mem_limit) {
        size_t others = ctx->mem_used - replacing;
        size_t left = ctx->set.mem_limit > others ? ctx->set.mem_limit - others : 0;
        budget = left < budget ? left : budget;
    }
    return budget;
}

gmlp_status gmlp_profile_record(gmlp_context *ctx, const char *label, cl_event from, cl_event ev, size_t bytes)
{
    size_t n = ctx->n_profile;
    if (n == 0 || (n >= 64 && (n & (n - 1)) == 0)) { /* capacity: 64, then doubling */
        gmlp_profile_entry *grown = gmlp_realloc(ctx->profile, (n ? 2 * n : 64) * sizeof *grown);
        if (!grown) {
            if (from)
                clReleaseEvent(from);
            clReleaseEvent(ev);
            return gmlp_fail(&ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory recording a profile");
        }
        ctx->profile = grown;
    }
    ctx->profile[ctx->n_profile++] = (gmlp_profile_entry){label, from, ev, bytes};
    return GMLP_OK;
}

cl_int gmlp_profile_ns(const gmlp_profile_entry *p, cl_ulong *ns)
{
    cl_ulong t0, t1;
    cl_int e = clGetEventProfilingInfo(p->from ? p->from : p->ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
    if (e == CL_SUCCESS)
        e = clGetEventProfilingInfo(p->ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
    *ns = e == CL_SUCCESS && t1 > t0 ? t1 - t0 : 0;
    return e;
}

void gmlp_profile_clear(gmlp_context *ctx)
{
    for (size_t i = 0; i < ctx->n_profile; i++) {
        if (ctx->profile[i].from)
            clReleaseEvent(ctx->profile[i].from);
        clReleaseEvent(ctx->profile[i].ev);
    }
    ctx->n_profile = 0;
}
