/* A loaded model: config, metadata, weights on the device and a workspace of
 * activation buffers reused across calls (llama2.c's Config / Weights /
 * RunState split). */
#ifndef GMLP_MODEL_H
#define GMLP_MODEL_H

#include "cl/context.h"
#include "format/safetensors.h"
#include "cl/clerr.h"
#include "ops/ops.h"
#include "model/preproc.h"
#include "model/hf_config.h"

typedef struct gmlp_block_weights {
    cl_mem norm_w, norm_b;         /* gMLP: norm; Mixer: norm2 (before the channel MLP) */
    cl_mem fc1_w, fc1_b, fc2_w, fc2_b;
    cl_mem sgu_norm_w, sgu_norm_b; /* the SGU's LayerNorm */
    cl_mem sgu_w, sgu_b;           /* heads x N x N (LM: causal mask / circulant built in), heads x N */
    cl_mem qkv_w, attn_out_w, attn_out_b; /* LM tiny attention */
    cl_mem norm1_w, norm1_b;       /* Mixer token MLP; ResMLP: norm1 times ls1 */
    cl_mem tok1_w, tok1_b, tok2_w, tok2_b; /* ResMLP: linear_tokens as tok1 */
    cl_mem ls1;                    /* ResMLP's token-mix layer scale (also folded into norm1) */
} gmlp_block_weights;

/* The activations of one pass, one planner for every architecture
 * (model/workspace.c).  Capacity: rows (sequences x positions), sequences,
 * attention keys per query, rows of output. */
/* A forward recorded on a workspace's buffers (cl/record.h), for one key
 * (the pass's sizes): rec NULL with refused, one that cannot be recorded. */
#define GMLP_RECORDINGS 4
typedef struct gmlp_recorded {
    size_t key[4];
    int used, refused;
    gmlp_recording *rec;
} gmlp_recorded;

/* The activations a forward holds in its workspace (model/storage.c: each one's storage and place). */
typedef enum gmlp_held_id {
    GMLP_HELD_X,           /* rows x d: the residual stream */
    GMLP_HELD_LN,          /* rows x d: a block's LN(x) or Aff(x) */
    GMLP_HELD_SHIFTED,     /* rows x d: LN(x) token-shifted (LM with shift_tokens) */
    GMLP_HELD_LNV,         /* rows x g: the SGU's LN(v) */
    GMLP_HELD_PATCHES,     /* rows x C*ph*pw: the stem's input */
    GMLP_HELD_UV,          /* rows x h: fc1's [u | v] (GluMlp's [x1 | x2]: x1 the gate) */
    GMLP_HELD_GATED,       /* rows x g over v's half: act(W_h . LN(v) + b) * u, fc2's input */
    GMLP_HELD_GATED_APART, /* rows x g, the same where the spatial GEMM normalises v as it reads it */
    GMLP_HELD_HIDDEN,      /* rows x h: the channel MLP's hidden product (GluMlp: x2 gated, over its half) */
    GMLP_HELD_TOKENS_GATE, /* per image t/2 x d: GluMlp's token gate */
    GMLP_HELD_TOKENS,      /* per image t x d: the token MLP's hidden product (GluMlp: its gated half) */
    GMLP_HELD_STEM,        /* rows x d: the stem's output before its norm (stem_norm) */
    GMLP_HELD_FINAL,       /* rows x d: the final norm, which the mean over tokens or the LM head reads */
    GMLP_HELDS
} gmlp_held_id;

typedef struct gmlp_workspace {
    size_t rows, seqs, kv_len, out_rows;
    size_t bytes;
    cl_mem input;  /* images (seqs x C x H x W) or token ids (rows) */
    cl_mem x;      /* rows x d: the residual stream */
    cl_mem y;      /* rows x max(d, g): LayerNorm outputs, the SGU's LN(v) */
    cl_mem ys;     /* rows x d: token-shifted y (LM with shift_tokens) */
    cl_mem z;      /* rows x h: fc1's [u | v]; also the stem's patches and the Mixer token MLP */
    cl_mem qkv, sim, ao; /* tiny attention: rows x 3a, rows x kv_len, rows x a */
    cl_mem pooled; /* seqs x d: mean over tokens (vision) */
    cl_mem out;    /* out_rows x classes (or vocabulary): logits */
    cl_mem stats;  /* rows x parts x 3: x's row statistics, for a LayerNorm fused into the product that reads
                    * it (fc1, a token MLP: block.c); NULL: none */
    cl_mem stats_v; /* rows x parts x 3: the SGU's v's, for LN(v) fused into the spatial GEMM; NULL: none */
    size_t x_parts; /* the parts per row of the statistics the last product writing x wrote; 0: none (reset per pass) */
    gmlp_recorded recorded[GMLP_RECORDINGS]; /* freed with the buffers they use (model/replay.c) */
    size_t next_recorded;                    /* the slot a new key takes */
    size_t generation;                       /* counts the allocations: recordings elsewhere check it */
} gmlp_workspace;

struct gmlp_model {
    gmlp_context *ctx;
    gmlp_config cfg;
    char **meta_keys, **meta_values;
    size_t n_meta;
    char **labels; /* num_classes entries, or NULL */
    gmlp_source sources[GMLP_PK_COUNT];
    char *conflicts[GMLP_PK_COUNT]; /* gmlp.KEY and config.json disagree: how; else NULL */
    cl_mem stem_w, stem_b, norm_w, norm_b, head_w, head_b; /* LM: to_logits.0 / .1 as norm / head */
    cl_mem stem_norm_w, stem_norm_b;                       /* cfg.stem_norm */
    cl_mem embed_w;                                        /* LM: to_embed */
    gmlp_block_weights *blocks;
    gmlp_workspace ws;
    gmlp_gemm_precision precision; /* the format every GEMM of the forward rounds its operands to */
    gmlp_linear_layout linear; /* how the linear weights (GMLP_SPEC_LINEAR) are stored: the file's out x in, in x
                                * out, or in x out as pairs along k */
    gmlp_elem gemm_outputs; /* how the products only GEMMs read are stored (gmlp_gemm_prepare): float, bf16 or half */
    gmlp_elem held[2][GMLP_HELDS]; /* how each activation is stored, in a stand-alone pass and with a cache */
};

/* How a model is loaded (lib/api resolves gmlp_load_options into it). */
typedef struct gmlp_model_setup {
    gmlp_weight_type weights;
    gmlp_gemm_precision precision;
} gmlp_model_setup;

/* g, a product of m's forward, in m's precision: every GEMM, the head and
 * the tiny attention included, as PyTorch's autocast does. */
static inline gmlp_status gmlp_model_gemm(const gmlp_model *m, gmlp_gemm g)
{
    g.precision = m->precision;
    return gmlp_op_gemm(m->ctx, &g);
}

/* ---- loading (model/load.c, config*.c, lm_config.c, weights.c, lm_weights.c) ---- */

/* A model from a safetensors file in memory and, for a model folder, its
 * config.json (hf; NULL: none); the caller holds ctx's lock.  *out is NULL
 * on failure, with ctx->err saying why. */
gmlp_status gmlp_model_create(gmlp_context *ctx, const void *data, size_t size, const gmlp_hf_config *hf,
                              const gmlp_model_setup *setup, gmlp_model **out);
/* gmlp_model_load's work for a path: a safetensors file, or a model folder
 * (model.safetensors and optionally config.json); failures name the path. */
gmlp_status gmlp_model_open(gmlp_context *ctx, const char *path, const gmlp_model_setup *setup, gmlp_model **out);
void gmlp_model_destroy(gmlp_model *m);
/* A whole file into *data (malloc'd). */
gmlp_status gmlp_read_file(gmlp_context *ctx, const char *path, unsigned char **data, size_t *size);
/* A __metadata__ value of the model's file, NULL if absent. */
const char *gmlp_model_meta(const gmlp_model *m, const char *key);
/* key's value (as the gmlp.KEY metadata spells it), now from the user. */
gmlp_status gmlp_model_set_preproc(gmlp_model *m, const char *key, const char *value);

/* Fills cfg from tensor names/shapes, metadata and a model folder's
 * config.json (hf, NULL for none; the metadata wins), validating both and
 * the consistency of every size. */
gmlp_status gmlp_config_infer(const gmlp_st_file *f, const gmlp_hf_config *hf, gmlp_config *cfg, gmlp_error *err);

/* Checks that f holds exactly the tensors cfg implies, with the right shapes
 * and a float dtype. */
gmlp_status gmlp_config_check_tensors(const gmlp_st_file *f, const gmlp_config *cfg, gmlp_error *err);

/* Sets preprocessing value `key` (GMLP_PK_*, not labels) of cfg from its
 * string form, read by the rules of its source src (mean/std: see
 * config_preproc.c); a malformed value is GMLP_ERR_INVALID_ARGUMENT from the
 * user, else GMLP_ERR_FORMAT, with a message starting "WHAT 'VALUE'" (what:
 * e.g. "metadata gmlp.mean"). */
gmlp_status gmlp_cfg_set_preproc(gmlp_config *cfg, gmlp_preproc_key key, const char *value, const char *what,
                                 gmlp_source src, gmlp_error *err);
/* Whether a pretrained mean/std value (config.json's, the default) was
 * averaged for cfg's channels. */
int gmlp_cfg_norm_averaged(const gmlp_config *cfg, const char *value);
/* cfg's image size and crop_pct give a resize preprocessing can do; else status st. */
gmlp_status gmlp_cfg_check_resize(const gmlp_config *cfg, gmlp_status st, gmlp_error *err);

/* Names in a newline-separated label list (a trailing newline adds none). */
int gmlp_cfg_count_labels(const char *s);

/* g-mlp-pytorch's spatial matrices (heads x N x N) from the file: circulant
 * construction and causal mask applied. */
gmlp_status gmlp_layers_upload_spatial(gmlp_model *m, const gmlp_st_file *f);

/* The weight matrices' storage of a model loaded with weights asked in
 * precision: as asked, except that a BF16 model keeps float weights as
 * bfloat16, the format every product rounds them to anyway: the same
 * results with half the memory, and the tensor cores' staging a copy (the
 * matrices feed only GEMMs: tensors.c's GMLP_SPEC_GEMM). */
gmlp_weight_type gmlp_weights_stored(gmlp_weight_type asked, gmlp_gemm_precision precision);
/* How the model stores its weight matrices (cfg.weights as a gmlp_elem:
 * gmlp_weight_type's values are gmlp_elem's). */
gmlp_elem gmlp_weight_elem(const gmlp_model *m);
/* How the model stores activations that only GEMMs read (the LayerNorms
 * before fc1 and the spatial matmul, the Mixer's, ResMLP's Affines): a BF16
 * model as bfloat16, an FP16 model as half (saturated as the mode rounds),
 * the rounding every product does to its operands done once by their
 * producer (the same results, half the traffic); float otherwise. */
gmlp_elem gmlp_gemm_input_elem(const gmlp_model *m);
/* A weight as a new device buffer of numel values: a matrix (matrix != 0)
 * as the model stores them (cfg.weights: float, half or bfloat16), anything
 * else (biases, LayerNorm parameters) as float.  Adds its bytes to
 * cfg.weight_bytes.  A matrix value beyond half's range is
 * GMLP_ERR_UNSUPPORTED naming the tensor. */
gmlp_status gmlp_model_upload(gmlp_model *m, const float *host, size_t numel, int matrix, const char *name,
                              cl_mem *dst);
/* A GEMM operand reading a weight matrix of ld columns from element off
 * (stored as gmlp_model_upload made it). */
gmlp_view gmlp_weight(const gmlp_model *m, cl_mem buf, size_t off, size_t ld);
/* nn.Linear's weight (out x in in the file) as the right operand of x . W^T,
 * stored as m's layout says. */
gmlp_view gmlp_linear_weight(const gmlp_model *m, cl_mem buf, size_t out_features, size_t in_features);
/* Linear weight w's outputs from on (gmixer's GluMlp: the second half). */
gmlp_view gmlp_linear_outputs(gmlp_view w, size_t from);

/* A safetensors file in memory (*data malloc'd) with random weights for
 * cfg's architecture and sizes (gmlp_diag_random_model). */
gmlp_status gmlp_random_model(const gmlp_config *cfg, uint64_t seed, void **data, size_t *size, gmlp_error *err);

/* ---- running (model/workspace.c, block.c, forward.c, lm_forward.c) ---- */

/* Buffers for rows rows of seqs sequences seeing kv_len keys, with out_rows
 * rows of output: grown (never shrunk) as calls need. */
gmlp_status gmlp_workspace_reserve(gmlp_model *m, size_t rows, size_t seqs, size_t kv_len, size_t out_rows);
void gmlp_workspace_free(gmlp_model *m);
/* Sequences of n positions (vision: images) one pass can hold within the
 * memory budget, each with out_per_seq rows of output (>= 1). */
size_t gmlp_workspace_max_seqs(const gmlp_model *m, size_t n, size_t out_per_seq);

/* Runs body(m, arg), which enqueues only, recorded: the first time for
 * this key (up to 4 values; the sizes the enqueued commands depend on
 * beyond m's workspace buffers) it is recorded, then every time replayed
 * (cl/record.h).  Plain where nothing can be recorded: with profiling on,
 * or where body refused (a CLBlast GEMM).  The recordings go with the
 * workspace. */
gmlp_status gmlp_model_replay(gmlp_model *m, const size_t key[4], gmlp_status (*body)(gmlp_model *m, void *arg),
                              void *arg);
/* Releases the workspace's recordings (gmlp_workspace_free does). */
void gmlp_model_recordings_free(gmlp_model *m);

/* Per-sequence caches of a decoding state: per layer, seq_len positions of
 * the normalised block input (only with token shift), of the normalised gate
 * input, and of the tiny attention's keys and values (only with attention). */
typedef struct gmlp_lm_cache {
    cl_mem *ln, *gate, *kv;
} gmlp_lm_cache;

/* One pass of the blocks over positions p0 .. p0+n-1 of seqs sequences
 * (vision: all N tokens of seqs images).  rows = seqs x n; len = p0 + n: the
 * positions the last one sees.  cache NULL: a stand-alone pass (p0 = 0);
 * else earlier positions are read from it and these are written into it.
 * The model's sizes come along as the GEMMs take them: d dim, h ffn_dim,
 * N seq_len, t token_dim, a attn_dim, heads. */
typedef struct gmlp_pass {
    gmlp_model *m;
    size_t seqs, p0, n, rows, len;
    const gmlp_lm_cache *cache;
    size_t d, h, N, t, a, heads;
    bool tail_stats; /* the last block writes x's statistics for the forward's tail (gmlp_pass_of: false) */
} gmlp_pass;

/* The pass over positions p0 .. p0+n-1 of seqs sequences of m (block.c);
 * x holds no row statistics yet. */
gmlp_pass gmlp_pass_of(gmlp_model *m, size_t seqs, size_t p0, size_t n, const gmlp_lm_cache *cache);
/* g, a product of the pass writing the residual stream x, in m's precision,
 * writing x's row statistics too where want (a LayerNorm fused into the
 * next fc1 reads them: gmlp_block_takes_stats) and g can (block.c). */
gmlp_status gmlp_x_gemm(const gmlp_pass *p, gmlp_gemm g, bool want);
/* The product g that reads norm(x) as its operand of (A: fc1, both of
 * GluMlp's halves, the LM head; B: the Mixer's token fc1), norm the
 * model's LayerNorm or ResMLP's Affine, weights w and b, g's operand set
 * to the view of the pass's rows that norm(x) would fill: x normalised as
 * g's prologue where that fuses (a LayerNorm needs x's statistics), else
 * norm(x) computed into that view first.  x's statistics are used up
 * either way (block.c). */
gmlp_status gmlp_normed(const gmlp_pass *p, cl_mem w, cl_mem b, gmlp_gemm_norm_of of, gmlp_gemm *g);
/* Whether the first block of a model of configuration c fuses its
 * LayerNorm into fc1 given x's row statistics (a gMLP block without token
 * shift or attention, which read LN(x) too). */
bool gmlp_block_takes_stats(const gmlp_config *c);

/* ---- what a pass holds (model/storage.c) ---- */
/* Decides how each activation is stored (m->held), once, when m loads. */
void gmlp_storage_plan(gmlp_model *m);
/* Activation what of pass p: its buffer, storage, first element and row pitch (in its elements), the rows
 * of every sequence; stride 0. */
gmlp_view gmlp_held(const gmlp_pass *p, gmlp_held_id what);
/* v as a batch of matrices of rows rows each (stride rows x ld). */
gmlp_view gmlp_per_seq(gmlp_view v, size_t rows);
/* v as the element-wise ops take it. */
gmlp_rows gmlp_rows_of(gmlp_view v);

/* x += the block's output on the workspace's residual stream: the gMLP block
 * (g-mlp-pytorch's layer; timm's SpatialGatingBlock is its case of one head,
 * no token shift, no attention, no cache), timm's MixerBlock or ResMLP's ResBlock. */
gmlp_status gmlp_block(const gmlp_pass *p, int l);
gmlp_status gmlp_mixer_block(const gmlp_pass *p, int l);
gmlp_status gmlp_resmlp_block(const gmlp_pass *p, int l);

/* The model's norm (its row's: timm's norm_layer, LayerNorm with norm_eps; ResMLP: Affine) over rows x dim,
 * from into to: the stem's, a block's, the final one (block.c). */
gmlp_status gmlp_norm_rows(const gmlp_model *m, gmlp_rows from, gmlp_rows to, cl_mem w, cl_mem b, size_t rows);

/* Runs the network on batch images (host memory), writing the head's output
 * to logits and the pooled features to features, each where not NULL (one
 * of them at least; logits needs a head). */
gmlp_status gmlp_vision_forward(gmlp_model *m, const float *images, size_t batch, float *logits, float *features);
/* The same from and to device buffers of the context (gmlp_classify_cl), enqueued only. */
gmlp_status gmlp_forward_cl(gmlp_model *m, cl_mem images, size_t batch, cl_mem logits);

/* Runs positions p0 .. p0+n-1 of batch sequences (tokens: batch x n, host),
 * as gmlp_pass says.  logits: batch x n x vocab, or with last_only batch x
 * vocab (each sequence's last position). */
gmlp_status gmlp_lm_forward(gmlp_model *m, const int32_t *tokens, size_t batch, size_t p0, size_t n,
                            const gmlp_lm_cache *cache, int last_only, float *logits);

#endif
