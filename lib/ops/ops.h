/* Host wrappers that enqueue one op each on the context's queue.  Each op
 * declares its kernel (a gmlp_kernel_spec: file in cl_kernels/, entry point)
 * next to its wrapper; lib/cl builds and caches it.  Matrices are row-major
 * fp32 in cl_mem buffers (GEMM operands A and B may be half or bfloat16); offsets,
 * leading dimensions and strides count elements.  Nothing here waits for the
 * device. */
#ifndef GMLP_OPS_H
#define GMLP_OPS_H

#include "cl/context.h"
#include "core/half.h"
#include "kernel_abi.h"
#include "ops/gemm_tilings.h"

/* ---- element-wise and reduction ops (ops/elementwise.c) ---- */

/* A matrix of rows, ld elements apart, from element off, stored as elem
 * (float unless an op says it takes others). */
typedef struct gmlp_rows {
    cl_mem buf;
    size_t off, ld;
    gmlp_elem elem;
} gmlp_rows;

/* y rows = LayerNorm(x rows) over cols values; x and y of any storage. */
gmlp_status gmlp_op_layernorm(gmlp_context *ctx, gmlp_rows x, gmlp_rows y, cl_mem gamma, cl_mem beta, int rows,
                              int cols, float eps);

/* An outer product r[row % period] * s[col] over rows of images of period
 * rows each; r NULL: none. */
typedef struct gmlp_outer {
    cl_mem r, s;
    size_t period;
} gmlp_outer;

/* y rows = x rows * alpha + beta per column (timm ResMLP's Affine); x and y
 * of any storage.  Then x += add where add.r is set (x as it was read goes
 * to y). */
gmlp_status gmlp_op_affine(gmlp_context *ctx, gmlp_rows x, gmlp_rows y, cl_mem alpha, cl_mem beta, int rows,
                           int cols, gmlp_outer add);

/* images (batch, chans, height, width) from element img_off -> patches
 * (batch * ntok, chans*ph*pw), rows in (c, ky, kx) order, stored as patches
 * says (a 16-bit mode's rounding): the stem's GEMM input. */
gmlp_status gmlp_op_patchify(gmlp_context *ctx, cl_mem images, size_t img_off, gmlp_rows patches, int batch, int chans,
                             int height, int width, int ph, int pw);

/* out[out_off + b * dim + c] = mean over t of y[b, t, c], y the tokens x,
 * or where norm is not NULL the final norm of them, normalised as they are
 * read by norm's statistics (rows b ntok + t) and vectors along dim, as a
 * GEMM's prologue (gmlp_gemm_norm, below; its operand ignored). */
struct gmlp_gemm_norm;
gmlp_status gmlp_op_mean_tokens(gmlp_context *ctx, cl_mem x, cl_mem out, size_t out_off, int batch, int ntok,
                                int dim, const struct gmlp_gemm_norm *norm);

/* x[r, :] = table[tokens[r], :] for rows token ids (already range-checked). */
gmlp_status gmlp_op_embed(gmlp_context *ctx, cl_mem tokens, cl_mem table, cl_mem x, int rows, int dim);

/* Token shift (g-mlp-pytorch PreShiftTokens) of rows = seqs * m positions p0..
 * into out, reading hist (hist_rows positions per sequence): channel segment
 * s < segments takes position i - (first + s), zero outside 0 .. p0+m-1. */
gmlp_status gmlp_op_shift_tokens(gmlp_context *ctx, cl_mem hist, int hist_rows, int p0, int m, cl_mem out,
                                 int rows, int dim, int segments, int first);

/* In place: rows of ld floats become softmax(scale * row[0 .. len)); with
 * causal, row r (position p0 + r % m) keeps only columns up to its position. */
gmlp_status gmlp_op_softmax_rows(gmlp_context *ctx, cl_mem sim, int rows, size_t ld, int len, int p0, int m,
                                 int causal, float scale);

/* Copies, for each of seqs sequences, rows rows of width elements from src
 * to dst (each: row pitch ld, sequence pitch seq, first element off, in
 * elements of elem; both stored alike).  Moves activations into
 * per-sequence caches. */
typedef struct gmlp_seq_rows {
    cl_mem buf;
    size_t off, ld, seq;
    gmlp_elem elem;
} gmlp_seq_rows;
gmlp_status gmlp_op_copy_rows(gmlp_context *ctx, gmlp_seq_rows src, gmlp_seq_rows dst, size_t width, size_t rows,
                              size_t seqs);

/* ---- the fused decoding step of causal LMs (ops/lm_step.c, cl_kernels/lm_step.cl) ----
 * One new token per sequence (rows sequences), at the position step[0] (a
 * device int: one recording replays for every position); float weights. */

/* Whether a row of width values fits the step (GMLP_LM_STEP_MAX, kernel_abi.h). */
int gmlp_lm_step_fits(size_t width);

/* out[b, :] (n_out) = act(ys . W^T + bias), ys = LN(x[b, :]) (d values)
 * token-shifted: segments > 0 writes LN(x) into hist (seq_len x d per
 * sequence) at the position, and channel segment s = 1 .. segments-1 reads
 * position - s from it; segments 0: no shift (to_logits).  embed (the first
 * layer; NULL: none): x[b, :] is first written as embed's row of the token
 * step[1 + b]. */
typedef struct gmlp_lm_step_in_args {
    cl_mem step; /* int: the position, then with embed a token per row */
    int seq_len;
    cl_mem embed, x, gamma, beta;
    int d;
    float eps;
    cl_mem hist;
    int segments;
    cl_mem w, bias; /* W: n_out x d; bias NULL: none */
    int n_out, act;
    cl_mem out;
    int rows;
} gmlp_lm_step_in_args;
gmlp_status gmlp_op_lm_step_in(gmlp_context *ctx, const gmlp_lm_step_in_args *a);

/* The SGU's new row: z[b, :] = [u | v] (h values, g = h/2); LN(v) into hist
 * (seq_len x g per sequence) at the position; out[b, c] = act(W_hd[pos, 0 ..
 * pos] . hist[0 .. pos, c] + bias[hd, pos]) * u[c], hd = c / (g / heads). */
typedef struct gmlp_lm_step_sgu_args {
    cl_mem step;
    int seq_len;
    cl_mem z;
    int h;
    cl_mem gamma, beta;
    float eps;
    cl_mem hist, w, bias; /* W: heads x seq_len x seq_len; bias heads x seq_len, NULL: none */
    int heads, act;
    cl_mem out;
    int rows;
} gmlp_lm_step_sgu_args;
gmlp_status gmlp_op_lm_step_sgu(gmlp_context *ctx, const gmlp_lm_step_sgu_args *a);

/* x[b, :] (n) += v[b, :] (k) . W^T + bias: proj_out with the residual. */
gmlp_status gmlp_op_lm_step_out(gmlp_context *ctx, cl_mem v, int k, cl_mem w, cl_mem bias, int n, cl_mem x, int rows);

/* ---- token sampling on the device (ops/sample.c, cl_kernels/sample.cl) ----
 * The draw of gmlp_sample (cl_kernels/sample_draw.h), bit for bit: a token
 * per row of logits (rows x V) into the decoding step's buffer step (the
 * position step[0] and a token a row), logged at tokens[b * seq_len +
 * step[0]]; rng: a generator state a row (ulong); flags: 2 ints, 0 at
 * first (1 + the index of a non-finite logit and the position of the first
 * step that met one); the position then advances by one. */
typedef struct gmlp_sample_args {
    cl_mem logits;
    int V, rows;
    float temperature, top_p;
    int top_k;
    cl_mem rng, step;
    int seq_len;
    cl_mem tokens, flags;
} gmlp_sample_args;
/* Whether the device can sample at all: the draw's doubles (cl_khr_fp64). */
int gmlp_sample_device_able(const gmlp_context *ctx);
/* Whether the device samples rows of V under these options: cl_khr_fp64,
 * and greedy, top_k <= GMLP_SAMPLE_MAX, or V <= GMLP_SAMPLE_MAX. */
int gmlp_sample_device_covers(gmlp_context *ctx, int V, float temperature, int top_k);
gmlp_status gmlp_op_sample(gmlp_context *ctx, const gmlp_sample_args *a);

/* ---- GEMM (ops/gemm.c, gemm_kernel.c, gemm_clblast.c) ---- */

/* A GEMM operand: a row-major matrix in a buffer. */
typedef struct gmlp_view {
    cl_mem buf;
    size_t off;    /* first element */
    size_t ld;     /* elements between rows */
    size_t stride; /* elements between the matrices of a batch */
    int trans;     /* used transposed */
    gmlp_elem elem; /* how the buffer stores the elements: float, half or bfloat16 */
    int pairs;     /* B alone, not transposed: stored as pairs along k (x86's "VNNI" layout, vdpbf16ps's
                    * operand), element (q, j) at (q / 2) ld + 2 j + q % 2, ld >= 2 n; an odd k's last pair
                    * holds a zero second (gmlp_linear_pairs); the direct kernel's alone */
} gmlp_view;

/* The fused LayerNorm's halves (cl_kernels/gemm_common.cl, the direct
 * kernel's alone so far: gmlp_gemm_fuses).  Row statistics: per row of a
 * product's C (r = p m + i over a batch) and part, (count, mean, M2) as 3
 * floats at (r parts + part) 3, parts the producing product's
 * (gmlp_gemm_stats_parts).  The prologue normalises, as it loads:
 * - GMLP_NORM_OF_A: op(A)'s rows (A not transposed) along k, (A[i, q] -
 *   mean_i) rstd_i w[q] + b[q], from stats' row p m + i (fc1's LayerNorm);
 * - GMLP_NORM_OF_B: op(B)'s k rows (B not transposed) across n, (B[q, j] -
 *   mean_q) rstd_q w[j] + b[j], from stats' row p k + q (the LayerNorm
 *   before the spatial GEMM or a token MLP);
 * mean and rstd = 1 / sqrt(var + eps) from the row's parts merged in order;
 * stats NULL: mean 0 and rstd 1 (an Affine). */
typedef enum gmlp_gemm_norm_of { GMLP_NORM_OF_A, GMLP_NORM_OF_B } gmlp_gemm_norm_of;
typedef struct gmlp_gemm_norm {
    cl_mem w, b;  /* w NULL: no prologue */
    cl_mem stats; /* NULL: an Affine */
    size_t parts;
    float eps;
    gmlp_gemm_norm_of of;
} gmlp_gemm_norm;

/* C[p] = epilogue(op(A[p]) . op(B[p]) + beta * C[p]) for p < batch, C m x n,
 * the inner size k.  The epilogue, in this order (gmlp_epilogue, common.cl):
 * plus the bias (per column, or per row of each matrix with bias_rows),
 * then act, then times the gate's element (the SGU: the gate fused into the
 * spatial matmul, u beside v in the same buffer).  Fused LayerNorms (norm,
 * stats): op(A) or op(B) normalised as it loads, and C's row statistics
 * written. */
typedef struct gmlp_gemm {
    size_t m, n, k;
    size_t batch;  /* 0 counts as 1 */
    gmlp_view a, b, c;
    float beta;    /* 0: C is not read; 1: C holds the residual */
    cl_mem bias;   /* NULL: none; else from element bias_off */
    size_t bias_off;
    int bias_rows;
    int act;         /* GMLP_ACT_*: GELU for fc1, the SGU gate's activation */
    gmlp_view gate;  /* buf NULL: none; else m x n per matrix, stored as the precision's activations
                      * (gmlp_gemm_precision_inputs: float, or FP16's half, BF16's bfloat16) */
    gmlp_gemm_precision precision; /* the format A and B are rounded to (FP32: none); CLBlast runs FP32 only */
    gmlp_gemm_norm norm; /* the prologue: none where norm.w is NULL */
    cl_mem stats;        /* NULL: none; else C's row statistics over its columns from stats_col0 on */
    size_t stats_col0;
} gmlp_gemm;

static inline int gmlp_gemm_bias_mode(const gmlp_gemm *g)
{
    return !g->bias ? GMLP_BIAS_NONE : g->bias_rows ? GMLP_BIAS_ROWS : GMLP_BIAS_COLS;
}
/* whether g's epilogue does anything beyond beta * C */
static inline int gmlp_gemm_has_epilogue(const gmlp_gemm *g)
{
    return g->bias || g->act != GMLP_ACT_IDENTITY || g->gate.buf;
}
/* Whether g has a half of the fused LayerNorm: a prologue, row statistics. */
static inline int gmlp_gemm_fused(const gmlp_gemm *g)
{
    return g->norm.w || g->stats;
}
/* The kernels' epilogue arguments (GMLP_EPI_PARAMS, common.cl), as
 * gmlp_kernel_args pairs (cl/kernels.h). */
#define GMLP_EPI_ARGS(g)                                                                                      \
    ARG_MEM((g)->bias), ARG_ULONG((g)->bias_off), ARG_INT(gmlp_gemm_bias_mode(g)), ARG_INT((g)->act),         \
        ARG_MEM((g)->gate.buf), ARG_ULONG((g)->gate.off), ARG_ULONG((g)->gate.ld), ARG_ULONG((g)->gate.stride)

/* The kernels' fused-LayerNorm arguments (GMLP_NORM_PARAMS, gemm_common.cl). */
#define GMLP_NORM_ARGS(g)                                                                                     \
    ARG_MEM((g)->norm.stats), ARG_ULONG((g)->norm.parts), ARG_MEM((g)->norm.w), ARG_MEM((g)->norm.b),         \
        ARG_FLOAT((g)->norm.eps), ARG_MEM((g)->stats), ARG_INT((g)->stats_col0)

/* A GEMM backend, in the way of ggml's backend interface: the table in
 * ops/gemm_backend.c lists those this build holds, by gmlp_gemm_backend. */
typedef struct gmlp_gemm_backend_i {
    const char *name;                      /* for messages */
    int (*supports)(const gmlp_gemm *g);   /* whether it runs g's shape and operand types */
    gmlp_status (*run)(gmlp_context *ctx, const gmlp_gemm *g); /* g, epilogue included */
    void (*context_closed)(gmlp_context *ctx); /* NULL: keeps nothing per context */
} gmlp_gemm_backend_i;
/* The backend which names; NULL where this build lacks it (CLBlast without
 * -Dclblast) or which is no backend.  Tests ask it whether CLBlast is built in. */
const gmlp_gemm_backend_i *gmlp_gemm_backend_find(gmlp_gemm_backend which);
/* The failure for a which gmlp_gemm_backend_find has not, who asking:
 * GMLP_ERR_UNSUPPORTED "built without CLBlast", or an unknown backend. */
gmlp_status gmlp_gemm_backend_refuse(gmlp_error *err, const char *who, gmlp_gemm_backend which);

/* On the context's backend: the library's kernel, epilogue fused; or, for
 * float operands with GMLP_GEMM_CLBLAST or a tuned CLBlast win, CLBlast
 * then the epilogue as a kernel of its own. */
gmlp_status gmlp_op_gemm(gmlp_context *ctx, const gmlp_gemm *g);
/* Always the library's kernel (cl_kernels/gemm*.cl), any operand types. */
gmlp_status gmlp_op_gemm_kernel(gmlp_context *ctx, const gmlp_gemm *g);
/* Always on backend which: a failure where this build lacks it or it does
 * not take g's operands. */
gmlp_status gmlp_op_gemm_on(gmlp_context *ctx, gmlp_gemm_backend which, const gmlp_gemm *g);
/* gmlp_op_gemm_on CLBlast (float operands), then the epilogue. */
gmlp_status gmlp_op_gemm_clblast(gmlp_context *ctx, const gmlp_gemm *g);
/* Whether gmlp_op_gemm runs g, of size class cls (gmlp_gemm_class; -1 for an
 * empty product), on CLBlast: built in, float operands, and GMLP_GEMM=clblast
 * or a tuned CLBlast win for the class and g's form. */
int gmlp_gemm_on_clblast(const gmlp_context *ctx, int cls, const gmlp_gemm *g);
/* Checks g's operands against their buffers (shared by both backends). */
gmlp_status gmlp_gemm_check(gmlp_context *ctx, const gmlp_gemm *g);
/* Checks that row statistics of parts parts per row, rows rows per matrix
 * of batch (0 counts as 1: a product's C's or op(A)'s m, op(B)'s k; the
 * pooling's tokens), fit buffer stats; name says which in a failure. */
gmlp_status gmlp_gemm_check_stats(gmlp_context *ctx, const char *name, cl_mem stats, size_t rows, size_t parts,
                                  size_t batch);
/* Whether ctx fuses the LayerNorms that a prologue on operand of would
 * take where a product can: its settings (GMLP_FUSE) and the device's fuse
 * row (gemm_tilings.c). */
bool gmlp_gemm_fusing(const gmlp_context *ctx, gmlp_gemm_norm_of of);
/* How ctx stores image models' linear weights in precision p: its settings
 * (GMLP_PACK) and the device's forms row (gemm_tilings.c). */
gmlp_linear_layout gmlp_gemm_linear_layout(const gmlp_context *ctx, gmlp_gemm_precision p);
/* Whether g, with its halves of the fused LayerNorm, runs fused on ctx's
 * device (*fuses): the device's fuse row takes them (gemm_tilings.c) and
 * the kernel runs g's plain form on a family that has them; a product
 * that does not fuse runs its LayerNorm unfused. */
gmlp_status gmlp_gemm_fuses(gmlp_context *ctx, const gmlp_gemm *g, bool *fuses);
/* The parts per row of g's row statistics (g.stats): its planned
 * variant's work-items along n. */
gmlp_status gmlp_gemm_stats_parts(gmlp_context *ctx, const gmlp_gemm *g, size_t *parts);
/* The most parts per row any tiling writes for rows n wide (workspace sizes). */
size_t gmlp_gemm_stats_parts_max(size_t n);
/* The bytes g's operands move (gmlp_launch_moves), each element once as
 * stored, C written: with GMLP_MOVES_PRODUCT A, B and C read where beta is
 * not 0; with _EPILOGUE the bias and the gate; with _C C read too (an
 * epilogue or a sum after the product). */
enum { GMLP_MOVES_PRODUCT = 1, GMLP_MOVES_EPILOGUE = 2, GMLP_MOVES_C = 4 };
size_t gmlp_gemm_moves(const gmlp_gemm *g, unsigned parts);
/* The epilogue alone, in place on C (an element-wise op: ops/elementwise.c,
 * cl_kernels/epilogue.cl); A, B, k and beta unused. */
gmlp_status gmlp_op_epilogue(gmlp_context *ctx, const gmlp_gemm *g);

/* Builds (or takes from the cache) every GEMM-kernel variant a model with
 * these storages of weights and of the activations only GEMMs read (inputs;
 * float ones too), its linear weights stored as linear says, may
 * run, so that no later call compiles.  *outputs: how
 * the model stores the products only GEMMs read, of such inputs: as inputs
 * where each of those products runs the same tiling so as it would storing
 * floats (a 16-bit C wants the epilogue in registers, which the larger
 * blocks of some kernels sweep over C instead: gmlp_gemm_tiling_stores),
 * else as floats. */
gmlp_status gmlp_gemm_prepare(gmlp_context *ctx, gmlp_elem weights, gmlp_elem inputs, gmlp_gemm_precision precision,
                              gmlp_linear_layout linear, gmlp_elem *outputs);
/* Writes one line per kernel variant the library may build for a GPU
 * ("FILE[@TARGET] -DNAME=VALUE ...": gmlp_gemm_programs) into buf, as
 * gmlp_list_devices does; returns the length the whole text needs. */
size_t gmlp_gemm_variants(char *buf, size_t size);
/* What runs a context's products with these operand types, for its report:
 * one line, the linear layers' form (NT) then the token mixing's (NN), each
 * size class's tiling (tuned ones marked) or CLBlast. */
gmlp_status gmlp_gemm_describe(gmlp_context *ctx, gmlp_elem a, gmlp_elem b, gmlp_gemm_precision precision, char *buf,
                               size_t size);

/* What runs a model's large linear-layer products (weights half or not,
 * stored as linear says) in precision p: "CLBlast", or the planned tiling's engine ("portable",
 * "mma.sync m16n8k8"); a static string. */
gmlp_status gmlp_gemm_engine(gmlp_context *ctx, gmlp_elem weights, gmlp_gemm_precision p, gmlp_linear_layout linear,
                             const char **engine);

/* Called when a context closes: lets each backend (CLBlast) release what it
 * cached for it. */
void gmlp_gemm_context_closed(gmlp_context *ctx);

/* ---- GEMM tilings, plans and tuned choices (ops/gemm_kernel.c, ops/gemm_tune.c) ---- */

/* g's size class (GMLP_GEMM_SMALL ...) on ctx's device. */
int gmlp_gemm_class(const gmlp_context *ctx, const gmlp_gemm *g);
/* g on the kernel with tiling t, whatever the defaults or tuned choices say
 * (split along k as gmlp_op_gemm_kernel splits: gemm_split.c); *skipped
 * NULL once it ran, else why nothing was enqueued: t is not for the
 * device, the compiled kernel cannot run t's work-groups, spills
 * (non-zero CL_KERNEL_PRIVATE_MEM_SIZE off CPUs) or failed its engine's
 * capability ladder. */
gmlp_status gmlp_op_gemm_tiled(gmlp_context *ctx, const gmlp_gemm *g, const gmlp_tiling *t, const char **skipped);
/* gmlp_op_gemm_tiled's *skipped where the device's compiler allows a tile's
 * work-group no more work-items (rusticl: 32 for any kernel): the tiling
 * cannot run there at all, which tests forcing tilings skip. */
extern const char gmlp_gemm_tiled_too_big[];
/* What step 1 of the capability ladder reads of a device beyond
 * gmlp_devinfo (zero where it has no cl_device_id: the tests' made-up ones). */
typedef struct gmlp_engine_facts {
    bool intel_mma;   /* the sub-group matrix extensions Intel's XMX rows need */
    bool intel_tf32;  /* and the TF32 one */
    int min_subgroup; /* Intel's smallest sub-group size */
    bool amd_runtime; /* cl_amd_device_attribute_query: AMD's own compiler */
    int wavefront;    /* AMD's wavefront width */
    bool host_bf16;   /* a CPU device whose OpenCL C reaches x86's builtins (GMLP_RUNTIME_CPU_X86_BUILTINS: PoCL),
                       * the host having AVX512_BF16 */
} gmlp_engine_facts;
void gmlp_engine_facts_query(const gmlp_devinfo *d, gmlp_engine_facts *f);
/* The matrix engines d's architecture has, from d and f. */
unsigned gmlp_engines_for(const gmlp_devinfo *d, const gmlp_engine_facts *f);
/* Why a GPU of a vendor with matrix engines has none (buf, size bytes);
 * NULL where it has one, or is no such GPU. */
const char *gmlp_engines_missing(const gmlp_devinfo *d, const gmlp_engine_facts *f, char *buf, size_t size);
/* Step 1 of the capability ladder (ops/gemm_engines.c) when a context
 * opens: the engines gmlp_engines_for finds, into ctx->dev.engines; one log
 * line where gmlp_engines_missing says why there are none. */
void gmlp_engines_detect(gmlp_context *ctx);
/* Whether tiling t's variant `defines` (label: for the log) of form g
 * passed the rest of the ladder: at once for a tiling needing no engine;
 * else the probe build and a one-tile self-test in a throwaway context, on
 * first use (the verdict kept, and cached on disk). */
bool gmlp_engine_verified(gmlp_context *ctx, const gmlp_gemm *g, const gmlp_tiling *t, const char *defines,
                          const char *label);
/* Releases the ladder's context (gmlp_ops_close). */
void gmlp_engines_close(gmlp_context *ctx);
/* Forgets the planned variants (the tuned choices changed). */
void gmlp_gemm_plan_clear(gmlp_context *ctx);

/* The tuned winner for a class and operand form: a tiling, or CLBlast. */
typedef struct gmlp_tuned_choice {
    int clblast;              /* 1: CLBlast (float operands only) */
    const gmlp_tiling *tiling; /* else: one of gmlp_gemm_tilings */
} gmlp_tuned_choice;
/* ctx's winner for g's class and form; NULL: none (the defaults apply). */
const gmlp_tuned_choice *gmlp_gemm_tuned(const gmlp_context *ctx, int cls, const gmlp_gemm *g);
/* Reads the device's tuning file from the cache directory into the ops'
 * state; a missing file leaves none, an unusable one (corrupt, another
 * format, device, driver or library version, unknown tilings) is ignored
 * with one log line. */
void gmlp_gemm_tune_load(gmlp_context *ctx);
/* Frees the tuned choices and any recording. */
void gmlp_gemm_tune_free(gmlp_context *ctx);
/* Starts (rec) or ends (NULL) the recording of ctx's GEMM shapes (ops/gemm_tune.h). */
struct gmlp_gemm_record;
void gmlp_gemm_record_set(gmlp_context *ctx, struct gmlp_gemm_record *rec);
/* Notes g's shape in the recording, if one is in progress (gmlp_op_gemm calls it). */
void gmlp_gemm_record_note(gmlp_context *ctx, const gmlp_gemm *g);

/* ---- the ops' state in a context (ops/state.c) ---- */

/* The reduction kernels' work-group size (the shared program's GMLP_WG):
 * this, or the largest power of two below it that the device takes. */
#define GMLP_REDUCE_WG_MAX 64

/* Makes ctx->ops after gmlp_context_open: the shared program built with the
 * ops' options (the reduction work-group size), the tuning file read. */
gmlp_status gmlp_ops_open(gmlp_context *ctx);
/* Lets the GEMM backends release what they keep for ctx, frees ctx->ops;
 * before gmlp_context_close (a no-op if the ops never opened). */
void gmlp_ops_close(gmlp_context *ctx);

#endif
