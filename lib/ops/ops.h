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

/* The general SGU epilogue (g-mlp-pytorch): rows are m positions p0.. of each
 * sequence; g = act(g + bias[h * bstride + position] + cb) * u, where head h
 * owns channels [h * dh, (h+1) * dh); cb (per channel) may be NULL. */
typedef struct gmlp_gate {
    cl_mem bias, cb;
    int bstride, dh, p0, m, act; /* act: GMLP_GATE_* */
} gmlp_gate;
gmlp_status gmlp_op_sgu_gate_ex(gmlp_context *ctx, cl_mem z, int rows, int half, const gmlp_gate *g);

/* x[r, :] = table[tokens[r], :] for rows token ids (already range-checked). */
gmlp_status gmlp_op_embed(gmlp_context *ctx, cl_mem tokens, cl_mem table, cl_mem x, int rows, int dim);

/* Token shift (g-mlp-pytorch PreShiftTokens) of rows = seqs * m positions p0..
 * into out, reading hist (hist_rows positions per sequence): channel segment
 * s < segments takes position i - (first + s), zero outside 0 .. p0+m-1. */
gmlp_status gmlp_op_shift_tokens(gmlp_context *ctx, cl_mem hist, int hist_rows, int p0, int m, cl_mem out,
                                 int rows, int dim, int segments, int first);

/* In place: rows of ld floats become softmax(scale * row[0 .. len)); with
 * causal, row r (position p0 + r % m) keeps only columns up to its position. */
gmlp_status gmlp_op_softmax_rows(gmlp_context *ctx, cl_mem sim, int rows, int ld, int len, int p0, int m,
                                 int causal, float scale);

/* Copies, for each of seqs sequences, rows rows of width floats: from src
 * (row pitch src_ld, sequence pitch src_seq, first float src_off) to dst
 * (likewise).  Moves activations into per-sequence caches. */
typedef struct gmlp_rows {
    cl_mem buf;
    size_t off, ld, seq;
} gmlp_rows;
gmlp_status gmlp_op_copy_rows(gmlp_context *ctx, gmlp_rows src, gmlp_rows dst, size_t width, size_t rows,
                              size_t seqs);

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
