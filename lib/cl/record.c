#include "record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/clerr.h"
#include "cl/context.h"
#include "core/alloc.h"

/* OpenCL 3.0's versioned extension list (the build targets 1.2's headers). */
#define EXTENSIONS_WITH_VERSION 0x1060
typedef struct name_version {
    cl_uint version; /* major 10 bits, minor 10, patch 12 */
    char name[64];
} name_version;

/* One recorded command: a kernel with its own bound object, or a copy. */
typedef struct command {
    cl_kernel k; /* NULL: the copy */
    cl_uint dims;
    size_t global[3], local[3];
    int has_local;
    cl_mem src, dst;
    size_t so[3], dof[3], region[3], pitch[4];
} command;

struct gmlp_recording {
    command *cmds;
    size_t n, cap;
    cl_kernel pending;             /* bound by gmlp_kernel_args, for the next launch */
    const gmlp_kernel *pending_for;
    int refused;
    cl_command_buffer_khr cb;      /* NULL: replayed by enqueues */
    int simultaneous;              /* cb may be enqueued while an earlier run is pending */
    cl_event last;                 /* else: the last run, waited for before the next */
    gmlp_cmdbuf_api api;
};

/* The version of cl_khr_command_buffer d lists, 0 where none is listed. */
static cl_uint extension_version(cl_device_id d)
{
    size_t n = 0;
    if (clGetDeviceInfo(d, EXTENSIONS_WITH_VERSION, 0, NULL, &n) != CL_SUCCESS || n < sizeof(name_version))
        return 0;
    name_version *v = gmlp_malloc(n);
    cl_uint found = 0;
    if (v && clGetDeviceInfo(d, EXTENSIONS_WITH_VERSION, n, v, NULL) == CL_SUCCESS)
        for (size_t i = 0; i < n / sizeof *v; i++)
            if (!strncmp(v[i].name, "cl_khr_command_buffer", sizeof v[i].name))
                found = v[i].version;
    free(v);
    return found;
}

void gmlp_cmdbuf_probe(gmlp_context *ctx)
{
    memset(&ctx->cmdbuf, 0, sizeof ctx->cmdbuf);
    char *why = ctx->cmdbuf_why;
    const size_t size = sizeof ctx->cmdbuf_why;
    if (!ctx->set.command_buffers) {
        snprintf(why, size, "plain enqueues: command buffers turned off (GMLP_COMMAND_BUFFERS=0)");
        return;
    }
    cl_uint v = extension_version(ctx->dev.device);
    unsigned major = v >> 22, minor = v >> 12 & 0x3ff, patch = v & 0xfff;
    if (!v) {
        snprintf(why, size, "plain enqueues: the device has no cl_khr_command_buffer");
        return;
    }
    if (major != 0 || minor != 9) { /* provisional: the entry points this build knows are 0.9's */
        snprintf(why, size, "plain enqueues: cl_khr_command_buffer %u.%u.%u, not the 0.9 this build knows", major,
                 minor, patch);
        return;
    }
    cl_command_queue_properties need = 0, have = 0;
    clGetDeviceInfo(ctx->dev.device, CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR, sizeof need, &need, NULL);
    clGetCommandQueueInfo(ctx->queue, CL_QUEUE_PROPERTIES, sizeof have, &have, NULL);
    if ((need & have) != need) {
        snprintf(why, size, "plain enqueues: command buffers need queue properties 0x%llx", (unsigned long long)need);
        return;
    }
    gmlp_cmdbuf_api a;
#define FIND(field, name) *(void **)&a.field = clGetExtensionFunctionAddressForPlatform(ctx->dev.platform, #name)
    FIND(create, clCreateCommandBufferKHR);
    FIND(finalize, clFinalizeCommandBufferKHR);
    FIND(release, clReleaseCommandBufferKHR);
    FIND(enqueue, clEnqueueCommandBufferKHR);
    FIND(kernel, clCommandNDRangeKernelKHR);
    FIND(copy_rect, clCommandCopyBufferRectKHR);
#undef FIND
    if (!a.create || !a.finalize || !a.release || !a.enqueue || !a.kernel || !a.copy_rect) {
        snprintf(why, size, "plain enqueues: cl_khr_command_buffer %u.%u.%u lacks an entry point", major, minor, patch);
        return;
    }
    cl_bitfield caps = 0;
    clGetDeviceInfo(ctx->dev.device, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR, sizeof caps, &caps, NULL);
    ctx->cmdbuf = a;
    ctx->cmdbuf_simultaneous = (caps & CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR) != 0;
    snprintf(why, size, "command buffers (cl_khr_command_buffer %u.%u.%u)", major, minor, patch);
}

int gmlp_recording_on(const gmlp_context *ctx)
{
    return ctx->rec != NULL;
}

gmlp_status gmlp_record_begin(gmlp_context *ctx)
{
    if (ctx->rec)
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "a recording is already in progress");
    gmlp_recording *r = gmlp_calloc(1, sizeof *r);
    if (!r)
        return gmlp_fail(&ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory for a recording");
    ctx->rec = r;
    return GMLP_OK;
}

gmlp_status gmlp_record_refuse(gmlp_context *ctx, const char *who)
{
    if (ctx->rec)
        ctx->rec->refused = 1;
    return gmlp_fail(&ctx->err, GMLP_ERR_UNSUPPORTED, "%s cannot be recorded", who);
}

static gmlp_status add(gmlp_context *ctx, const command *c)
{
    gmlp_recording *r = ctx->rec;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        command *grown = gmlp_realloc(r->cmds, cap * sizeof *grown);
        if (!grown)
            return gmlp_fail(&ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory for a recording");
        r->cmds = grown, r->cap = cap;
    }
    r->cmds[r->n++] = *c;
    return GMLP_OK;
}

gmlp_status gmlp_record_bind(gmlp_context *ctx, const gmlp_kernel *k, cl_kernel *out)
{
    gmlp_recording *r = ctx->rec;
    if (r->pending)
        clReleaseKernel(r->pending);
    r->pending = NULL, r->pending_for = NULL;
    cl_int e;
    cl_kernel own = clCreateKernel(k->program, k->spec->entry, &e);
    if (e != CL_SUCCESS) {
        char call[200];
        snprintf(call, sizeof call, "clCreateKernel(%s) for a recording", k->label);
        return gmlp_fail_cl(&ctx->err, call, e);
    }
    r->pending = own, r->pending_for = k;
    *out = own;
    return GMLP_OK;
}

gmlp_status gmlp_record_launch(gmlp_context *ctx, const gmlp_kernel *k, cl_uint dims, const size_t *global,
                               const size_t *local)
{
    gmlp_recording *r = ctx->rec;
    if (r->pending_for != k || dims > 3)
        return gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "%s launched while recording without its arguments",
                         k->label);
    command c = {.k = r->pending, .dims = dims, .has_local = local != NULL};
    for (cl_uint d = 0; d < dims; d++) {
        c.global[d] = global[d];
        c.local[d] = local ? local[d] : 0;
    }
    GMLP_TRY(add(ctx, &c));
    r->pending = NULL, r->pending_for = NULL;
    return GMLP_OK;
}

gmlp_status gmlp_enqueue_copy_rect(gmlp_context *ctx, cl_mem src, cl_mem dst, const size_t src_origin[3],
                                   const size_t dst_origin[3], const size_t region[3], size_t src_row_pitch,
                                   size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch)
{
    if (ctx->rec) {
        command c = {.src = src, .dst = dst, .pitch = {src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch}};
        memcpy(c.so, src_origin, sizeof c.so);
        memcpy(c.dof, dst_origin, sizeof c.dof);
        memcpy(c.region, region, sizeof c.region);
        return add(ctx, &c);
    }
    cl_int e = clEnqueueCopyBufferRect(ctx->queue, src, dst, src_origin, dst_origin, region, src_row_pitch,
                                       src_slice_pitch, dst_row_pitch, dst_slice_pitch, 0, NULL, NULL);
    return e == CL_SUCCESS ? GMLP_OK : gmlp_fail_cl(&ctx->err, "clEnqueueCopyBufferRect", e);
}

/* The commands into a command buffer on ctx's queue, each after the one
 * before it (the sync points chain them, whatever the queue's order). */
static cl_int build_command_buffer(gmlp_context *ctx, gmlp_recording *r)
{
    const gmlp_cmdbuf_api *a = &ctx->cmdbuf;
    cl_command_buffer_properties_khr props[3] = {0};
    if (ctx->cmdbuf_simultaneous) {
        props[0] = CL_COMMAND_BUFFER_FLAGS_KHR;
        props[1] = CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR;
    }
    cl_int e;
    r->cb = a->create(1, &ctx->queue, props, &e);
    if (e != CL_SUCCESS) {
        r->cb = NULL;
        return e;
    }
    cl_sync_point_khr prev = 0, sp;
    for (size_t i = 0; i < r->n && e == CL_SUCCESS; i++) {
        const command *c = &r->cmds[i];
        if (c->k)
            e = a->kernel(r->cb, NULL, NULL, c->k, c->dims, NULL, c->global, c->has_local ? c->local : NULL, i ? 1 : 0,
                          i ? &prev : NULL, &sp, NULL);
        else
            e = a->copy_rect(r->cb, NULL, c->src, c->dst, c->so, c->dof, c->region, c->pitch[0], c->pitch[1],
                             c->pitch[2], c->pitch[3], i ? 1 : 0, i ? &prev : NULL, &sp, NULL);
        prev = sp;
    }
    if (e == CL_SUCCESS)
        e = a->finalize(r->cb);
    if (e != CL_SUCCESS) {
        a->release(r->cb);
        r->cb = NULL;
    }
    r->api = *a;
    r->simultaneous = ctx->cmdbuf_simultaneous;
    return e;
}

gmlp_status gmlp_record_end(gmlp_context *ctx, gmlp_status st, gmlp_recording **out)
{
    gmlp_recording *r = ctx->rec;
    ctx->rec = NULL;
    *out = NULL;
    if (!r)
        return st != GMLP_OK ? st : gmlp_fail(&ctx->err, GMLP_ERR_INVALID_ARGUMENT, "no recording in progress");
    if (r->pending) {
        clReleaseKernel(r->pending);
        r->pending = NULL;
    }
    if (st != GMLP_OK || r->refused) {
        int refused = r->refused;
        gmlp_record_free(r);
        return refused ? GMLP_OK : st;
    }
    if (ctx->cmdbuf.create) {
        cl_int e = build_command_buffer(ctx, r);
        if (e != CL_SUCCESS) /* the commands themselves are good: replayed by enqueues */
            gmlp_log(&ctx->set.log, GMLP_LOG_INFO, "a command buffer of %zu commands failed (%s): plain enqueues", r->n,
                     gmlp_cl_error_name(e));
    }
    *out = r;
    return GMLP_OK;
}

gmlp_status gmlp_record_replay(gmlp_context *ctx, const gmlp_recording *rec)
{
    gmlp_recording *r = (gmlp_recording *)rec; /* the last run's event is bookkeeping */
    cl_int e = CL_SUCCESS;
    if (r->cb) {
        if (r->last) { /* without simultaneous use, the last run must be over */
            e = clWaitForEvents(1, &r->last);
            clReleaseEvent(r->last);
            r->last = NULL;
            if (e != CL_SUCCESS)
                return gmlp_fail_cl(&ctx->err, "clWaitForEvents(the last command buffer)", e);
        }
        e = r->api.enqueue(0, NULL, r->cb, 0, NULL, r->simultaneous ? NULL : &r->last);
        return e == CL_SUCCESS ? GMLP_OK : gmlp_fail_cl(&ctx->err, "clEnqueueCommandBufferKHR", e);
    }
    for (size_t i = 0; i < r->n && e == CL_SUCCESS; i++) {
        const command *c = &r->cmds[i];
        if (c->k)
            e = clEnqueueNDRangeKernel(ctx->queue, c->k, c->dims, NULL, c->global, c->has_local ? c->local : NULL, 0,
                                       NULL, NULL);
        else
            e = clEnqueueCopyBufferRect(ctx->queue, c->src, c->dst, c->so, c->dof, c->region, c->pitch[0],
                                        c->pitch[1], c->pitch[2], c->pitch[3], 0, NULL, NULL);
    }
    return e == CL_SUCCESS ? GMLP_OK : gmlp_fail_cl(&ctx->err, "replaying a recorded forward", e);
}

int gmlp_recording_is_command_buffer(const gmlp_recording *rec)
{
    return rec && rec->cb;
}

size_t gmlp_recording_commands(const gmlp_recording *rec)
{
    return rec ? rec->n : 0;
}

void gmlp_record_free(gmlp_recording *r)
{
    if (!r)
        return;
    if (r->last) {
        clWaitForEvents(1, &r->last);
        clReleaseEvent(r->last);
    }
    if (r->cb)
        r->api.release(r->cb);
    for (size_t i = 0; i < r->n; i++)
        if (r->cmds[i].k)
            clReleaseKernel(r->cmds[i].k);
    if (r->pending)
        clReleaseKernel(r->pending);
    free(r->cmds);
    free(r);
}
