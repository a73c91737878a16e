/* Constants the kernels and the host share: plain #defines, valid C and
 * OpenCL C.  Embedded in front of every kernel program (cl_kernels/meson.build)
 * and included by the host wrappers in lib/ops. */
#ifndef GMLP_KERNEL_ABI_H
#define GMLP_KERNEL_ABI_H

/* Activations (the SGU gate's: gmlp.h's GMLP_GATE_* have the same values). */
#define GMLP_ACT_IDENTITY 0
#define GMLP_ACT_TANH 1
#define GMLP_ACT_SIGMOID 2
#define GMLP_ACT_GELU 3 /* exact (erf), as nn.GELU() */
#define GMLP_ACT_SILU 4 /* x sigmoid(x), as nn.SiLU(): timm's gmixer GluMlp */
#define GMLP_ACT_RELU 5 /* max(x, 0), as nn.ReLU() */
#define GMLP_ACTS 6     /* how many: the values are 0 .. GMLP_ACTS - 1 */

/* Where a GEMM epilogue's bias runs along. */
#define GMLP_BIAS_NONE 0
#define GMLP_BIAS_COLS 1 /* bias[j]: fc layers, stem, head */
#define GMLP_BIAS_ROWS 2 /* bias[i], i the row within one matrix of a batch: token-axis matmuls */

/* The format a GEMM rounds its operands to (GMLP_GEMM_PRECISION;
 * cl_kernels/precision.cl): lib/ops's gmlp_gemm_precision. */
#define GMLP_GEMM_PREC_FP32 0
#define GMLP_GEMM_PREC_TF32 1
#define GMLP_GEMM_PREC_FP16 2
#define GMLP_GEMM_PREC_BF16 3

/* How a buffer stores its elements (lib/core's gmlp_elem): a GEMM's
 * operands (GMLP_GEMM_A, _B, _C, _GATE), an element-wise op's input and
 * output (common.cl's gmlp_elem_get / _put). */
#define GMLP_STORE_FLOAT 0
#define GMLP_STORE_HALF 1
#define GMLP_STORE_BF16 2
/* A GEMM variant's other axes (lib/ops/gemm_variant.c): what its operands'
 * elements pass through as they are staged (GMLP_GEMM_PROLOGUE), and how a
 * matrix engine's instructions issue (GMLP_GEMM_ISSUE: emulated in tests). */
#define GMLP_GEMM_PROLOGUE_NONE 0
#define GMLP_GEMM_PROLOGUE_NORM_A 1 /* op(A)'s rows normalised along k: the LayerNorm or Affine before fc1 */
#define GMLP_GEMM_PROLOGUE_NORM_B 2 /* op(B)'s k rows normalised across n: the one before a token-axis GEMM */
/* NORM_B in the tiled kernel: the most k rows whose (mean, rstd) a group holds in local memory */
#define GMLP_NORM_B_ROWS 1024
/* The pooling's work-groups (mean_tokens.cl): at most this many columns, and tokens a run */
#define GMLP_POOL_GROUP 64
/* Whether a GEMM's epilogue also writes its rows' partial statistics (the
 * direct kernel's stats argument): what a later prologue normalises by. */
#define GMLP_GEMM_STATS_NONE 0
#define GMLP_GEMM_STATS_ROWS 1
#define GMLP_GEMM_ISSUE_NATIVE 0
#define GMLP_GEMM_ISSUE_EMULATED 1 /* the instruction's semantics, fragments through local memory */
#define GMLP_GEMM_ISSUE_SHUFFLES 2 /* the same through the sub-group's shuffles (Intel's XMX) */

/* The fused decoding step (lm_step.cl): the widest row it normalises (held
 * in local memory), the outputs of proj_in, proj_out and to_logits and the
 * channels of the gate a work-item makes. */
#define GMLP_LM_STEP_MAX 2048
#define GMLP_LM_STEP_OUTS 4 /* the kernels are written for four */
#define GMLP_LM_STEP_LANES 8

/* Token sampling on the device (sample.cl): the most candidates it keeps
 * (local memory), so top_k up to it, or a whole row up to it wide. */
#define GMLP_SAMPLE_MAX 1024

#endif
