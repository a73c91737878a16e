/* A GEMM kernel variant as a declared set of axes (gemm_variant.c): a
 * tiling (gemm_tilings.h) compiled for one value of each axis.  The axis
 * table is the one place a variant's fields meet their -D macros, plan-key
 * radices and labels: the defines, the plan key, the labels and the list of
 * programs are loops over it.  Adding an axis value is a value in its row
 * and the kernels' #if on it; docs/architecture.md shows how. */
#ifndef GMLP_GEMM_VARIANT_H
#define GMLP_GEMM_VARIANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops/gemm_tilings.h"

/* What an operand's elements pass through as a kernel stages them, before
 * the product: nothing, op(A)'s rows normalised along k (the fused
 * LayerNorm or Affine before fc1), or op(B)'s rows normalised across n (the
 * one before the spatial GEMM or a token MLP): ops.h's gmlp_gemm_norm. */
typedef enum gmlp_gemm_prologue {
    GMLP_PROLOGUE_NONE = GMLP_GEMM_PROLOGUE_NONE,
    GMLP_PROLOGUE_NORM_A = GMLP_GEMM_PROLOGUE_NORM_A,
    GMLP_PROLOGUE_NORM_B = GMLP_GEMM_PROLOGUE_NORM_B,
    GMLP_PROLOGUES
} gmlp_gemm_prologue;

/* How a matrix engine's instructions issue: natively, or (tests) emulated
 * by their documented semantics through local memory or (Intel's XMX) the
 * sub-group's shuffles.  Portable tilings ignore it. */
typedef enum gmlp_gemm_issue {
    GMLP_ISSUE_NATIVE = GMLP_GEMM_ISSUE_NATIVE,
    GMLP_ISSUE_EMULATED = GMLP_GEMM_ISSUE_EMULATED,
    GMLP_ISSUE_SHUFFLES = GMLP_GEMM_ISSUE_SHUFFLES,
    GMLP_ISSUES
} gmlp_gemm_issue;

/* One value per axis (gmlp_gemm_axes): the fields the axis table reads by
 * offset, all one byte. */
typedef struct gmlp_gemm_variant {
    uint8_t ta, tb;    /* op(A), op(B) used transposed */
    uint8_t vw;        /* loads up to this many elements wide: 1, 2, 4 or 8 (16-bit operands) (the operands'
                        * alignment; a tiling's variant: at most its own; the direct kernel's own, up to 16) */
    uint8_t a, b, c;   /* gmlp_elem: how A, B and C are stored */
    uint8_t precision; /* gmlp_gemm_precision: what A and B round to */
    uint8_t prologue;  /* gmlp_gemm_prologue */
    uint8_t stats;     /* the epilogue writes C's row statistics (GMLP_GEMM_STATS_ROWS; the direct kernel's
                        * argument, no define) */
    uint8_t pairs;     /* B stored as pairs along k (ops.h's gmlp_view.pairs; the direct kernel's alone) */
    uint8_t issue;     /* gmlp_gemm_issue: a context's, not the product's (no part of the plan key) */
} gmlp_gemm_variant;

/* One axis: its field, its kernels' macro, its values in order (the plan
 * key's digit is a value's index; the first is the kernels' default, which
 * the defines leave out), and a label per value ("" for none; each with
 * its own leading separator; a printf format given the value). */
#define GMLP_GEMM_AXIS_VALUES 4
typedef struct gmlp_gemm_axis {
    const char *field;
    size_t offset; /* of the field in gmlp_gemm_variant */
    const char *macro; /* NULL: no define (the kernels read the value from their arguments) */
    int radix;
    int values[GMLP_GEMM_AXIS_VALUES];
    const char *labels[GMLP_GEMM_AXIS_VALUES];
    int keyed; /* part of the plan key */
} gmlp_gemm_axis;

/* The axis table, *n rows. */
const gmlp_gemm_axis *gmlp_gemm_axes(size_t *n);
/* The plan keys of one size class: the keyed axes' radices multiplied
 * (test_gemm_tables checks the table against it). */
#define GMLP_GEMM_VARIANT_KEYS (4 * 4 * GMLP_ELEMS * GMLP_ELEMS * GMLP_ELEMS * GMLP_GEMM_PRECISIONS * GMLP_PROLOGUES * 2 * 2)

/* The products of a model: activations x linear weights (the weights B),
 * NT on the file's out x in or NN on weights packed in x out at load (or
 * as pairs along k); and token mixing, weights x activations (the weights
 * A; attention's too), NN. */
typedef enum gmlp_model_product {
    GMLP_PRODUCT_LINEAR,
    GMLP_PRODUCT_LINEAR_KN,
    GMLP_PRODUCT_LINEAR_PAIRS,
    GMLP_PRODUCT_MIXING,
} gmlp_model_product;
/* The linear layers' product on weights stored so. */
gmlp_model_product gmlp_linear_product(gmlp_linear_layout linear);
/* Product prod of a model whose weights are stored as w and whose
 * activations that only GEMMs read as inputs, 4-aligned.  Activation form x < gmlp_gemm_model_acts:
 * float to float; where inputs are 16-bit also inputs to float and inputs
 * to inputs (a product only GEMMs read, of such inputs: BF16's bfloat16,
 * FP16's half). */
#define GMLP_GEMM_MODEL_ACTS 3
/* How a model in precision p stores the activations only GEMMs read: BF16's
 * as bfloat16, FP16's as half, the others as float. */
gmlp_elem gmlp_gemm_precision_inputs(gmlp_gemm_precision p);
int gmlp_gemm_model_acts(gmlp_elem inputs);
gmlp_gemm_variant gmlp_gemm_model_form(gmlp_elem w, gmlp_elem inputs, int x, gmlp_model_product prod,
                                       gmlp_gemm_precision p);

/* The variant of tiling t that runs products of form v: v with the vector
 * width t's kernel loads (the direct kernel's arithmetic width whatever
 * the alignment, else at most t's). */
gmlp_gemm_variant gmlp_gemm_variant_on(const gmlp_gemm_variant *v, const gmlp_tiling *t);
/* v's plan key within its size class: 0 .. GMLP_GEMM_VARIANT_KEYS - 1. */
size_t gmlp_gemm_variant_key(const gmlp_gemm_variant *v);
/* How a device's compiler wants the kernels' code (a mask; 0: as for a CPU
 * of no listed platform): loops unrolled (everywhere but on CPUs); in the
 * CPUs' direct blocks, where the platform compiles by clang to this host's
 * code (GMLP_RUNTIME_CPU_CLANG: PoCL, Intel's CPU runtime), clang's
 * __builtin_prefetch (GMLP_GEMM_PREFETCH) and the epilogue's copy for whole
 * blocks (GMLP_GEMM_WHOLE; through rusticl's SPIR-V the first stops the
 * process, the second took the cold build 4x as long). */
enum { GMLP_GEMM_CODE_UNROLLED = 1, GMLP_GEMM_CODE_PREFETCH = 2, GMLP_GEMM_CODE_WHOLE = 4 };
int gmlp_gemm_code(const gmlp_devinfo *d);
/* The -D options of tiling t's variant v (v from gmlp_gemm_variant_on):
 * the axes' that differ from the kernels' defaults, then the tiling's
 * (gmlp_gemm_tiling_defines); returns snprintf's count. */
int gmlp_gemm_variant_defines(const gmlp_gemm_variant *v, const gmlp_tiling *t, int code, char *buf, size_t size);
/* The tiling's own -D options: unrolled or not (code, gmlp_gemm_code's),
 * its numbers, its cp.async stages, ldmatrix, swizzle and double-buffered
 * fragments switches, its group order, prefetching (a CPUs' tiling where
 * code says), its row's defines. */
int gmlp_gemm_tiling_defines(const gmlp_tiling *t, int code, char *buf, size_t size);
/* "ENTRY TILING NT v4 A:float B:half fp16" (and C's storage, and how an
 * engine issues, where not the first value), for logs and profiles. */
int gmlp_gemm_variant_label(const gmlp_gemm_variant *v, const gmlp_tiling *t, char *buf, size_t size);

/* Every program variant the library may build for a GPU (loops unrolled,
 * instructions native), in order: fn(user, t, v, target) with v a form
 * (gmlp_gemm_variant_on gives t's variant), target NULL for any GPU,
 * "nvidia" for a tiling only NVIDIA's registers hold unspilled, else the
 * prefix of the matrix engine t needs (gemm_programs.c). */
typedef void (*gmlp_gemm_program_fn)(void *user, const gmlp_tiling *t, const gmlp_gemm_variant *v,
                                     const char *target);
void gmlp_gemm_programs(gmlp_gemm_program_fn fn, void *user);

#endif
