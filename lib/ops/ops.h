/* Host wrappers that enqueue one op each on the context's queue.  Matrices
 * are row-major fp32 in cl_mem buffers (GEMM operands A and B may be half);
 * offsets and strides count elements.  Nothing here waits for the device. */
#ifndef GMLP_OPS_H
#define GMLP_OPS_H

#include "cl/context.h"

typedef enum gmlp_act { GMLP_ACT_NONE = 0, GMLP_ACT_GELU = 1 } gmlp_act;

/* y rows = LayerNorm(x rows) over cols values. */
gmlp_status gmlp_op_layernorm(gmlp_context *ctx, cl_mem x, int x_off, int x_stride, cl_mem y, int y_off,
                              int y_stride, cl_mem gamma, cl_mem beta, int rows, int cols, float eps);

/* x[r, c] = act(x[r, c] + bias[c]) (per-column bias). */
gmlp_status gmlp_op_bias_act_cols(gmlp_context *ctx, cl_mem x, cl_mem bias, int rows, int cols, gmlp_act act);
/* x[r, c] = act(x[r, c] + bias[r % period]) (per-row bias of a stack of
 * period x cols matrices). */
gmlp_status gmlp_op_bias_act_rows(gmlp_context *ctx, cl_mem x, cl_mem bias, int rows, int cols, int period,
                                  gmlp_act act);

/* On rows of z = [u | g], each 2 * half wide: g = u * (g + bias[r % ntok]). */
gmlp_status gmlp_op_sgu_gate(gmlp_context *ctx, cl_mem z, int rows, int half, cl_mem bias, int ntok);

/* images (batch, chans, height, width) -> patches (batch * ntok, chans*ph*pw). */
gmlp_status gmlp_op_patchify(gmlp_context *ctx, cl_mem images, cl_mem patches, int batch, int chans, int height,
                             int width, int ph, int pw);

/* out[b, c] = mean over t of x[b, t, c]. */
gmlp_status gmlp_op_mean_tokens(gmlp_context *ctx, cl_mem x, cl_mem out, int batch, int ntok, int dim);

/* One GEMM operand: buffer, offset, leading dimension, batch stride
 * (elements), whether it is used transposed and whether the buffer holds
 * IEEE half rather than float (A and B only). */
typedef struct gmlp_mat {
    cl_mem buf;
    size_t off, ld, stride;
    int trans;
    int half;
} gmlp_mat;

/* C[i] = A[i] . B[i] + beta * C[i] for i < batch; C is m x n, the product's
 * inner size k.  batch 1 ignores the strides.  All-float operands go to
 * CLBlast, a half one to gmlp_op_gemm_kernel. */
gmlp_status gmlp_op_gemm(gmlp_context *ctx, size_t m, size_t n, size_t k, gmlp_mat a, gmlp_mat b, float beta,
                         gmlp_mat c, size_t batch);

/* The same contract on the library's own kernel (cl_kernels/gemm.cl), for any
 * operand types; fp32 arithmetic. */
gmlp_status gmlp_op_gemm_kernel(gmlp_context *ctx, size_t m, size_t n, size_t k, gmlp_mat a, gmlp_mat b, float beta,
                                gmlp_mat c, size_t batch);

/* The kernel variant for these operand types, built once per context: with
 * large tiles when asked and the device takes them, else with the largest
 * small tiles it takes.  A failure to build is GMLP_ERR_BUILD with the build
 * log. */
gmlp_status gmlp_gemm_kernel_get(gmlp_context *ctx, int a_half, int b_half, int large_tiles,
                                 const gmlp_gemm_kernel **out);

#endif
