/* Kernels of the embedded sources (cl_kernels/), built on first use and kept
 * for the context's life, with argument binding and launching.  The ops
 * (lib/ops) declare which kernel they run; this layer knows none of them. */
#ifndef GMLP_KERNELS_H
#define GMLP_KERNELS_H

#include <CL/cl.h>

#include "gmlp.h"

typedef struct gmlp_context gmlp_context;

/* What an op runs: a __kernel function of a file in cl_kernels/. */
typedef struct gmlp_kernel_spec {
    const char *file;
    const char *entry;
} gmlp_kernel_spec;

typedef struct gmlp_kernel {
    const gmlp_kernel_spec *spec;
    char *defines;          /* of a solo file's variant, or NULL */
    const struct gmlp_program_rewrite *rewrite; /* its program's (cl/program.h), or NULL */
    cl_kernel k;
    cl_program program;     /* k's, for the kernel objects of recordings (cl/record.h) */
    size_t wg_max;          /* work-items per group the compiled kernel allows */
    cl_ulong local_mem;     /* bytes of local memory it uses */
    cl_ulong private_mem;   /* bytes of private memory per work-item: non-zero where the compiler spilled */
    char label[160];        /* entry point and variant, for profiles and logs */
} gmlp_kernel;

/* The cache behind gmlp_kernel_get, in the context. */
typedef struct gmlp_kernel_cache {
    cl_program shared;      /* every shared source, built when the context is made */
    struct gmlp_program_entry *programs; /* solo variants: one program per (file, defines) */
    size_t n_programs;
    gmlp_kernel **kernels;
    size_t n_kernels;
} gmlp_kernel_cache;

/* Builds the shared program with these options (the ops' -D values). */
gmlp_status gmlp_kernels_init(gmlp_context *ctx, const char *shared_options);
void gmlp_kernels_release(gmlp_context *ctx);

/* spec's kernel, from the shared program, or for a solo file from the
 * program of its variant `defines` (-D options; NULL: the file's defaults).
 * label: how profiles and logs name it (NULL: the entry point). */
gmlp_status gmlp_kernel_get(gmlp_context *ctx, const gmlp_kernel_spec *spec, const char *defines, const char *label,
                            const gmlp_kernel **out);
/* The same from a solo file's program rewritten by rw (cl/program.h), a
 * program of its own beside the unrewritten variant's. */
gmlp_status gmlp_kernel_get_rewritten(gmlp_context *ctx, const gmlp_kernel_spec *spec, const char *defines,
                                      const struct gmlp_program_rewrite *rw, const char *label,
                                      const gmlp_kernel **out);

/* Argument kinds for gmlp_kernel_args: each value is preceded by its kind. */
enum { GMLP_ARG_END, GMLP_ARG_MEM, GMLP_ARG_INT, GMLP_ARG_ULONG, GMLP_ARG_FLOAT };
#define ARG_MEM(v) GMLP_ARG_MEM, (cl_mem)(v)
#define ARG_INT(v) GMLP_ARG_INT, (int)(v)
#define ARG_ULONG(v) GMLP_ARG_ULONG, (cl_ulong)(v)
#define ARG_FLOAT(v) GMLP_ARG_FLOAT, (double)(v)

/* Sets k's arguments in order from (kind, value) pairs ending with
 * GMLP_ARG_END; while a recording is on (cl/record.h), those of a kernel
 * object of this call site's own, which the next launch records. */
gmlp_status gmlp_kernel_args(gmlp_context *ctx, const gmlp_kernel *k, ...);

/* Enqueues k over a dims-dimensional range (local NULL: the driver picks),
 * or while a recording is on, records it; an empty range enqueues nothing.
 * Nothing waits for the device. */
gmlp_status gmlp_kernel_launch(gmlp_context *ctx, const gmlp_kernel *k, cl_uint dims, const size_t *global,
                               const size_t *local);
/* The same, profiled under label (which must live as long as the context)
 * instead of k's: one kernel launched for another purpose (split-K's parts). */
gmlp_status gmlp_kernel_launch_as(gmlp_context *ctx, const gmlp_kernel *k, const char *label, cl_uint dims,
                                  const size_t *global, const size_t *local);

#endif
