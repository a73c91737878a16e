/* The gmlp_context: a device, its shared cl_context, a queue, the compiled
 * kernels and the last error. */
#ifndef GMLP_CONTEXT_H
#define GMLP_CONTEXT_H

#include <CL/cl.h>
#include <pthread.h>

#include "cl/device.h"
#include "core/error.h"

typedef enum gmlp_kernel_id {
    GMLP_K_LAYERNORM,
    GMLP_K_SGU_GATE,
    GMLP_K_PATCHIFY,
    GMLP_K_MEAN_TOKENS,
    GMLP_K_EMBED,
    GMLP_K_SHIFT_TOKENS,
    GMLP_K_SOFTMAX_ROWS,
    GMLP_K_COUNT
} gmlp_kernel_id;

/* A built variant of cl_kernels/gemm.cl and its tile sizes (ops/gemm_kernel.c). */
typedef struct gmlp_gemm_kernel {
    cl_program program;
    cl_kernel kernel;
    int tm, tn, tk, wm, wn;
    int tried; /* a build was attempted (the large tiling may not fit) */
} gmlp_gemm_kernel;

struct gmlp_context {
    gmlp_devinfo dev;
    cl_context cl;
    cl_command_queue queue;
    int borrowed;           /* cl and queue are the caller's (gmlp_context_create_cl): never released */
    cl_program program;
    cl_kernel kernels[GMLP_K_COUNT];
    gmlp_gemm_kernel gemm[4][3]; /* by a_half | b_half << 1, then gmlp_tiles (ops/ops.h); built on first use */
    cl_kernel epilogue;          /* gemm.cl's epilogue alone, after CLBlast GEMMs; built on first use */
    gmlp_gemm_backend gemm_backend; /* GMLP_GEMM_KERNEL or GMLP_GEMM_CLBLAST, never AUTO */
    int wg;                 /* work-group size of the reduction kernels */
    size_t mem_limit;       /* injectable device-memory budget, 0 = none */
    size_t mem_used;        /* by the library's buffers (not CLBlast's temporaries) */
    size_t mem_peak;
    pthread_mutex_t lock;   /* serialises calls on this context */
    char err[GMLP_ERRMSG_SIZE];
};

/* Records the failure on ctx and returns st. */
gmlp_status gmlp_ctx_fail(gmlp_context *ctx, gmlp_status st, const char *fmt, ...) GMLP_PRINTF(3, 4);
/* For a failed OpenCL call: message names the call and the error. */
gmlp_status gmlp_ctx_cl_fail(gmlp_context *ctx, const char *call, cl_int e);

/* Device buffer accounted against mem_limit; NULL host_ptr for none. */
gmlp_status gmlp_buffer_create(gmlp_context *ctx, size_t bytes, const void *host_ptr, const char *what, cl_mem *out);
void gmlp_buffer_release(gmlp_context *ctx, cl_mem *buf);

/* Bytes a workspace may take: a quarter of device memory, or what an
 * injected limit leaves beside the other buffers (replacing: the bytes of
 * the workspace being replaced). */
size_t gmlp_mem_budget(const gmlp_context *ctx, size_t replacing);

#endif
