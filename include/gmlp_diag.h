/*
 * gmlp_diag.h — diagnostics for benchmarks, profiling and the portability
 * checks: how the library uses a device, measured or listed.  Installed, but
 * OUTSIDE the stable-ABI promise of gmlp.h: these calls may change with any
 * release.  gmlp-bench uses only gmlp.h and this header.
 */
#ifndef GMLP_DIAG_H
#define GMLP_DIAG_H

#include "gmlp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device memory the library's buffers take on ctx now and at most since the
 * context was made (weights, workspaces, decoding states; not CLBlast's
 * temporaries). */
GMLP_API gmlp_status gmlp_diag_memory(const gmlp_context *ctx, size_t *used, size_t *peak);

/* Seconds per call of an m x n x k float GEMM (row-major, no transposes) on
 * backend (GMLP_GEMM_KERNEL or GMLP_GEMM_CLBLAST, whatever ctx's own), after
 * one untimed call: the mean of `runs` calls, timed on the host around a
 * queue finish. */
GMLP_API gmlp_status gmlp_diag_gemm_seconds(gmlp_context *ctx, gmlp_gemm_backend backend, size_t m, size_t n,
                                            size_t k, int runs, double *seconds);

/* Per-kernel device time from queue profiling, on a context created with
 * gmlp_context_options.profiling: what ran since the last reset, one row per
 * kernel variant in order of first launch.  Waits for the queue. */
typedef struct gmlp_diag_kernel_time {
    char name[160];  /* entry point and variant, e.g. "gmlp_gemm 128x128x2/8x8 A:float B:half" */
    size_t launches;
    double total_us; /* summed device time, CL_PROFILING_COMMAND_START to _END */
    double bytes;    /* what the launches' operands moved, each element read or written once as stored (0:
                      * not counted: the LM's fused step and sampling) */
} gmlp_diag_kernel_time;
/* Writes up to max rows into rows and their count into *n (rows beyond max
 * are counted, not written). */
GMLP_API gmlp_status gmlp_diag_profile(gmlp_context *ctx, gmlp_diag_kernel_time *rows, size_t max, size_t *n);
GMLP_API void gmlp_diag_profile_reset(gmlp_context *ctx);

/* A safetensors file, in memory, holding random weights (uniform in +-0.05)
 * for cfg's architecture and sizes (arch, in_chans, img_h/w, patch_h/w, dim,
 * depth, ffn_dim, token_dim, num_classes; LMs: vocab_size, seq_len, causal;
 * LMs and gMLPVision: heads, attn_dim),
 * with the gmlp.* metadata that makes it load as cfg.  *data is malloc'd:
 * free() it. */
GMLP_API gmlp_status gmlp_diag_random_model(const gmlp_config *cfg, uint64_t seed, void **data, size_t *size);

/* GEMM tuning.  gmlp_tune runs the model once at this batch (zeros in) to
 * note the GEMM shapes it uses (fc1, fc2, spatial, stem, head; an LM's whole
 * sequence and one decoding step), groups them by size class and operand
 * form, and times on each group every kernel tiling of the library's curated
 * set that the device takes without spilling, and CLBlast for float
 * operands: device time from queue profiling when the context was made with
 * gmlp_context_options.profiling, else host time around a queue finish; the
 * fastest of 5 calls after an untimed one, summed over the group's shapes.
 * A candidate whose result differs from the default kernel's beyond
 * float-rounding bounds is rejected.  The fastest per group are written to
 * the cache directory as the device's tuning file (kept beside winners of
 * other groups from earlier runs) and used by this and later contexts on the
 * same device, driver and library version, unless the backend was forced
 * (gmlp_context_options.gemm or GMLP_GEMM: then only kernel tilings apply
 * with "kernel", only half-operand tilings with "clblast").  Needs a cache
 * directory; clears the context's profile (gmlp_diag_profile). */
typedef struct gmlp_tune_step {
    const char *group;     /* size class and form, e.g. "large NT float x float" */
    const char *candidate; /* e.g. "kernel 64x64x8/4x4" or "clblast" */
    int index, count;      /* this candidate of the group's count */
    double us;             /* microseconds per call over the group's shapes; < 0: not timed */
    const char *skipped;   /* NULL, or why not timed or rejected */
    int winner;            /* 1: the group's winner, reported once after its candidates */
} gmlp_tune_step;
typedef void (*gmlp_tune_progress)(void *user, const gmlp_tune_step *step);
GMLP_API gmlp_status gmlp_tune(gmlp_context *ctx, gmlp_model *model, size_t batch, gmlp_tune_progress progress,
                               void *user);

/* Every OpenCL program the library may build for a GPU, one line each:
 * "NAME OPTIONS", NAME "shared" (the element-wise kernels, built with each
 * context) or a kernel file built alone in variants ("gemm_tiled.cl"; the
 * GEMM's CPU-only variants, whose blocks would spill a GPU's registers, are
 * left out; "gemm_tiled.cl@nvidia": a variant only NVIDIA GPUs get, whose
 * deeper slices other GPUs' compilers spill; "gemm_mma.cl@mma": a matrix
 * engine's, named by its tilings' prefix (mma, xmx8, xmx16, xmx16tf32, mfma,
 * mfmabf16, wmma, wmma64), which only devices whose capability ladder
 * passed build, in every form a model runs).  Written into buf as
 * gmlp_list_devices does; returns the length the full text needs. */
GMLP_API size_t gmlp_diag_programs(char *buf, size_t size);
/* The source text of program NAME as the library builds it (the prelude
 * included); returns its length, 0 for an unknown NAME. */
GMLP_API size_t gmlp_diag_program_source(const char *name, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
