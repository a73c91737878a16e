/* Recorded launches: a forward's kernels, each with a kernel object of its
 * own and its arguments bound once, kept and replayed.  While a recording is
 * on (ctx->rec), gmlp_kernel_args binds a fresh kernel object of the call
 * site and gmlp_kernel_launch (and gmlp_enqueue_copy_rect) add a command
 * instead of enqueuing it: nothing runs until the replay.  Where the device
 * offers cl_khr_command_buffer (0.9.x: the extension is provisional) and it
 * is not turned off (GMLP_COMMAND_BUFFERS=0), the commands also go into a
 * command buffer, replayed with one enqueue; else the replay enqueues them
 * one by one, with no argument set.  Both run the same kernels with the
 * same arguments in the same order: the results are the same bit for bit. */
#ifndef GMLP_RECORD_H
#define GMLP_RECORD_H

#include <CL/cl.h>
#include <CL/cl_ext.h>

#include "gmlp.h"

typedef struct gmlp_context gmlp_context;
typedef struct gmlp_recording gmlp_recording;

/* The command-buffer entry points of a device, when the context opens. */
typedef struct gmlp_cmdbuf_api {
    clCreateCommandBufferKHR_fn create;
    clFinalizeCommandBufferKHR_fn finalize;
    clReleaseCommandBufferKHR_fn release;
    clEnqueueCommandBufferKHR_fn enqueue;
    clCommandNDRangeKernelKHR_fn kernel;
    clCommandCopyBufferRectKHR_fn copy_rect;
} gmlp_cmdbuf_api;

/* Fills ctx->cmdbuf where the device offers cl_khr_command_buffer 0.9.x with
 * every entry point, the queue's properties fit and the settings allow;
 * else leaves it empty.  ctx->cmdbuf_why says which, for the report. */
void gmlp_cmdbuf_probe(gmlp_context *ctx);

/* Starts recording on ctx (none may be in progress). */
gmlp_status gmlp_record_begin(gmlp_context *ctx);
/* Ends ctx's recording; st: the status of the code recorded.  On GMLP_OK
 * *out is the recording (command buffer finalized); else *out is NULL and
 * the status is st, or GMLP_OK where the code was refused only because it
 * cannot be recorded (gmlp_record_refuse): the caller then runs it plain. */
gmlp_status gmlp_record_end(gmlp_context *ctx, gmlp_status st, gmlp_recording **out);
/* Whether a recording is in progress on ctx. */
int gmlp_recording_on(const gmlp_context *ctx);
/* Marks the recording in progress as impossible (an op that enqueues by
 * other means, CLBlast): GMLP_ERR_UNSUPPORTED naming who. */
gmlp_status gmlp_record_refuse(gmlp_context *ctx, const char *who);
/* Enqueues the recorded commands on ctx's queue (nothing waits). */
gmlp_status gmlp_record_replay(gmlp_context *ctx, const gmlp_recording *rec);
/* Whether rec replays as one command buffer. */
int gmlp_recording_is_command_buffer(const gmlp_recording *rec);
/* The commands rec holds. */
size_t gmlp_recording_commands(const gmlp_recording *rec);
/* NULL-safe; releases its kernel objects and command buffer. */
void gmlp_record_free(gmlp_recording *rec);

/* For lib/cl/kernels.c while a recording is on: a kernel object of k's own,
 * for gmlp_kernel_args to bind (the recording keeps it), and the launch of
 * the one last bound. */
typedef struct gmlp_kernel gmlp_kernel;
gmlp_status gmlp_record_bind(gmlp_context *ctx, const gmlp_kernel *k, cl_kernel *out);
gmlp_status gmlp_record_launch(gmlp_context *ctx, const gmlp_kernel *k, cl_uint dims, const size_t *global,
                               const size_t *local);

/* clEnqueueCopyBufferRect on ctx's queue, or into the recording. */
gmlp_status gmlp_enqueue_copy_rect(gmlp_context *ctx, cl_mem src, cl_mem dst, const size_t src_origin[3],
                                   const size_t dst_origin[3], const size_t region[3], size_t src_row_pitch,
                                   size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch);

#endif
