/* The gmlp_context: a device, its cl_context and in-order queue, the settings
 * it was made with, its kernels, the accounting of its buffers and its last
 * error.  Generic: it knows no op (lib/ops declares those). */
#ifndef GMLP_CONTEXT_H
#define GMLP_CONTEXT_H

#include <CL/cl.h>
#include <pthread.h>

#include "cl/device.h"
#include "cl/kernels.h"
#include "cl/record.h"
#include "core/error.h"

#define GMLP_FUSE_ALL 2
#define GMLP_PACK_ALL 2

/* What a context was asked for, resolved against the environment (lib/api/env.c). */
typedef struct gmlp_settings {
    gmlp_gemm_backend gemm;  /* GMLP_GEMM_KERNEL or GMLP_GEMM_CLBLAST */
    int gemm_forced;         /* gemm was asked for (options or GMLP_GEMM), not the default: tuned choices may not override it */
    char cache_dir[1024];    /* "": no disk cache */
    char cl_options[1024];   /* appended to every build */
    size_t mem_limit;        /* bytes the library's buffers may take; 0: no limit */
    int profiling;           /* record an event per kernel (gmlp_diag.h) */
    int precision;           /* $GMLP_PRECISION's gmlp_precision; 0 (AUTO): unset, FP32 */
    int command_buffers;     /* recorded forwards may replay as command buffers (0: GMLP_COMMAND_BUFFERS=0) */
    int lm_step;             /* cached LM decoding may run the fused step (0: GMLP_LM_STEP=0) */
    int gemm_split;          /* $GMLP_GEMM_SPLIT: split-K parts forced on the kernel's products (1: none); 0: the tables' */
    int sample_device;       /* generation may sample on the device (0: GMLP_SAMPLE_DEVICE=0) */
    int engines;             /* the matrix engines the device has may run (0: GMLP_ENGINES=0, the portable kernels
                              * alone: before/after comparisons) */
    int fuse;                /* LayerNorms fuse into the GEMMs beside them: 0 never (GMLP_FUSE=0), 1 as the tables
                              * say, GMLP_FUSE_ALL wherever the kernel can (GMLP_FUSE=1: tests, benches) */
    int pack;                /* image models' linear weights stored in x out: 0 never (GMLP_PACK=0), 1 as the
                              * tables say, GMLP_PACK_ALL on every device (GMLP_PACK=1: tests, benches) */
    gmlp_logger log;
} gmlp_settings;

/* One profiled launch: what ran, and its event; from (else NULL) a marker
 * enqueued before it, where its time starts: a call into CLBlast runs
 * helper kernels (padding, transposes) ahead of the one event it returns. */
typedef struct gmlp_profile_entry {
    const char *label;
    cl_event from, ev;
    size_t bytes; /* what its operands move: gmlp_launch_moves */
} gmlp_profile_entry;

struct gmlp_context {
    gmlp_devinfo dev;
    cl_context cl;
    cl_command_queue queue;
    int borrowed;           /* cl and queue are the caller's (gmlp_context_create_cl): never released */
    gmlp_settings set;
    gmlp_kernel_cache kernels;
    size_t mem_used;        /* by the library's buffers (not CLBlast's temporaries) */
    size_t mem_peak;
    gmlp_profile_entry *profile;
    size_t n_profile;
    size_t moves;           /* gmlp_launch_moves: the next launch's, for its profile entry */
    pthread_mutex_t lock;   /* lib/api holds it around every call on the context */
    gmlp_error err;         /* err.log points at set.log */
    gmlp_recording *rec;    /* a recording in progress (cl/record.h), else NULL */
    gmlp_cmdbuf_api cmdbuf; /* cl_khr_command_buffer's entry points; create NULL: none (gmlp_cmdbuf_probe) */
    int cmdbuf_simultaneous; /* a command buffer may be enqueued while pending */
    char cmdbuf_why[128];   /* how recorded forwards replay here, and why, for the report */
    struct gmlp_ops *ops;   /* what the layer above keeps per context (lib/ops: ops/state.h) */
};

/* A context on the device spec selects (gmlp_device_select), with
 * ctx->set already filled; its kernels come once gmlp_kernels_init built the
 * shared program. */
gmlp_status gmlp_context_open(gmlp_context *ctx, const char *device);
/* A context on the caller's objects, checked to belong together and the
 * queue to be in order (the ops rely on it); borrowed, never released. */
gmlp_status gmlp_context_open_borrowed(gmlp_context *ctx, cl_context cl, cl_device_id device, cl_command_queue queue);
/* Waits for the queue, then releases what the context owns. */
void gmlp_context_close(gmlp_context *ctx);

/* Device buffer accounted against the memory limit, with host_ptr's bytes as
 * its contents (NULL: uninitialised).  what names it in a failure. */
gmlp_status gmlp_buffer_create(gmlp_context *ctx, size_t bytes, const void *host_ptr, const char *what, cl_mem *out);
void gmlp_buffer_release(gmlp_context *ctx, cl_mem *buf);

/* Bytes a workspace may take: a quarter of device memory, or what the memory
 * limit leaves beside the other buffers (replacing: the bytes of the
 * workspace being replaced). */
size_t gmlp_mem_budget(const gmlp_context *ctx, size_t replacing);

/* With profiling on: keeps from (may be NULL) and ev (released later) under
 * label, which must live as long as the context, with the bytes its
 * operands move (gmlp_launch_moves). */
gmlp_status gmlp_profile_record(gmlp_context *ctx, const char *label, cl_event from, cl_event ev, size_t bytes);
/* The bytes the next launch's operands move (each element read or written
 * once, as stored: what the launch cannot do with less), for its profile
 * entry; every launch (gmlp_kernel_launch) takes and clears it. */
static inline void gmlp_launch_moves(gmlp_context *ctx, size_t bytes)
{
    ctx->moves = bytes;
}
/* Nanoseconds from the entry's start to its end, once its commands are done. */
cl_int gmlp_profile_ns(const gmlp_profile_entry *p, cl_ulong *ns);
void gmlp_profile_clear(gmlp_context *ctx);

#endif
