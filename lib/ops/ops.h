/* Host wrappers that enqueue one op each on the context's queue.  Matrices
 * are row-major fp32 in cl_mem buffers (GEMM operands A and B may be half);
 * offsets and strides count elements.  Nothing here waits for the device. */
#ifndef GMLP_OPS_H
#define GMLP_OPS_H

#include "cl/context.h"

/* y rows = LayerNorm(x rows) over cols values. */
gmlp_status gmlp_op_layernorm(gmlp_context *ctx, cl_mem x, int x_off, int x_stride, cl_mem y, int y_off,
                              int y_stride, cl_mem gamma, cl_mem beta, int rows, int cols, float eps);

/* The general SGU epilogue (g-mlp-pytorch): rows are m positions p0.. of each
 * sequence; g = act(g + bias[h * bstride + position] + cb) * u, where head h
 * owns channels [h * dh, (h+1) * dh); cb (per channel) may be NULL. */
typedef struct gmlp_gate {
    cl_mem bias, cb;
    int bstride, dh, p0, m, act; /* act: GMLP_GATE_* */
} gmlp_gate;
gmlp_status gmlp_op_sgu_gate(gmlp_context *ctx, cl_mem z, int rows, int half, const gmlp_gate *g);

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

/* images (batch, chans, height, width), from float img_off -> patches
 * (batch * ntok, chans*ph*pw). */
gmlp_status gmlp_op_patchify(gmlp_context *ctx, cl_mem images, size_t img_off, cl_mem patches, int batch, int chans,
                             int height, int width, int ph, int pw);

/* out[out_off + b * dim + c] = mean over t of x[b, t, c]. */
gmlp_status gmlp_op_mean_tokens(gmlp_context *ctx, cl_mem x, cl_mem out, size_t out_off, int batch, int ntok,
                                int dim);

/* One GEMM operand: buffer, offset, leading dimension, batch stride
 * (elements), whether it is used transposed and whether the buffer holds
 * IEEE half rather than float (A and B only). */
typedef struct gmlp_mat {
    cl_mem buf;
    size_t off, ld, stride;
    int trans;
    int half;
} gmlp_mat;

/* What a GEMM does to each element of C after the product (ops/gemm_kernel.c
 * and gmlp_epilogue in cl_kernels/gemm.cl): v = A.B + beta * C, then
 * v += bias[j] (or bias[i] with bias_rows, i counted within each matrix of
 * the batch), v = GELU(v) with gelu, v *= mul[C's index + mul_off - c.off]
 * (mul laid out as C: same ld and stride) with mul.  NULL buffers: none. */
typedef struct gmlp_epilogue {
    cl_mem bias;
    int bias_rows;
    int gelu;
    cl_mem mul;
    size_t mul_off;
} gmlp_epilogue;

/* C[i] = epilogue(A[i] . B[i] + beta * C[i]) for i < batch; C is m x n, the
 * product's inner size k; epi NULL: none.  batch 1 ignores the strides.  Runs
 * on the library's kernel, bias and GELU fused, a gate factor applied by a
 * kernel of its own after it; unless the context chose CLBlast
 * (GMLP_GEMM=clblast) and A and B are float: CLBlast, then the whole epilogue
 * as a kernel of its own. */
gmlp_status gmlp_op_gemm(gmlp_context *ctx, size_t m, size_t n, size_t k, gmlp_mat a, gmlp_mat b, float beta,
                         gmlp_mat c, size_t batch, const gmlp_epilogue *epi);

/* The same contract on the library's own kernel (cl_kernels/gemm.cl), for any
 * operand types; fp32 arithmetic. */
gmlp_status gmlp_op_gemm_kernel(gmlp_context *ctx, size_t m, size_t n, size_t k, gmlp_mat a, gmlp_mat b, float beta,
                                gmlp_mat c, size_t batch, const gmlp_epilogue *epi);

/* The epilogue alone, in place on C (m x n, batch matrices). */
gmlp_status gmlp_op_epilogue(gmlp_context *ctx, size_t m, size_t n, gmlp_mat c, size_t batch,
                             const gmlp_epilogue *epi);

/* Tilings of the GEMM kernel: small (64 x 64), large (128 x 128) for
 * products that fill the device, narrow (16 x 16) for products of few rows or
 * columns; smaller where the device takes no more. */
typedef enum gmlp_tiles { GMLP_TILES_SMALL = 0, GMLP_TILES_LARGE = 1, GMLP_TILES_NARROW = 2 } gmlp_tiles;

/* The kernel variant for these operand types and tiling, built once per
 * context; the small tiling when the device takes no other.  A failure to
 * build is GMLP_ERR_BUILD with the build log. */
gmlp_status gmlp_gemm_kernel_get(gmlp_context *ctx, int a_half, int b_half, gmlp_tiles size,
                                 const gmlp_gemm_kernel **out);

#endif
