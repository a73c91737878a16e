/* A loaded model: config, metadata, weights on the device and a workspace of
 * activation buffers reused across calls (llama2.c's Config / Weights /
 * RunState split). */
#ifndef GMLP_MODEL_H
#define GMLP_MODEL_H

#include "cl/context.h"
#include "format/safetensors.h"
#include "ops/ops.h"

typedef struct gmlp_block_weights {
    cl_mem norm_w, norm_b;         /* gMLP: norm; Mixer: norm2 (before the channel MLP) */
    cl_mem fc1_w, fc1_b, fc2_w, fc2_b;
    cl_mem sgu_norm_w, sgu_norm_b; /* gMLP */
    cl_mem sgu_w, sgu_b;           /* LM: heads x N x N (causal mask / circulant built in), heads x N */
    cl_mem qkv_w, attn_out_w, attn_out_b; /* LM tiny attention */
    cl_mem norm1_w, norm1_b;       /* Mixer token MLP */
    cl_mem tok1_w, tok1_b, tok2_w, tok2_b;
} gmlp_block_weights;

typedef struct gmlp_workspace {
    size_t batch; /* images the buffers hold; 0 before the first call */
    size_t bytes; /* their device memory */
    cl_mem images, x, y, z, pooled, logits;
} gmlp_workspace;

/* Language-model activations for rows = sequences x positions of one pass. */
typedef struct gmlp_lm_workspace {
    size_t rows, kv_len, out_rows; /* capacity: rows, attention keys per query, rows of logits */
    size_t bytes;
    cl_mem tokens, x, y, ys, z, gn, qkv, sim, ao, logits;
} gmlp_lm_workspace;

struct gmlp_model {
    gmlp_context *ctx;
    gmlp_config cfg;
    char **meta_keys, **meta_values;
    size_t n_meta;
    char **labels; /* num_classes entries from gmlp.labels, or NULL */
    cl_mem stem_w, stem_b, norm_w, norm_b, head_w, head_b; /* LM: to_logits.0 / .1 as norm / head */
    cl_mem embed_w;                                        /* LM: to_embed */
    gmlp_block_weights *blocks;
    gmlp_workspace ws;
    gmlp_lm_workspace lm;
};

/* Fills cfg from tensor names/shapes and metadata, validating the metadata
 * and the consistency of every size. */
gmlp_status gmlp_config_infer(const gmlp_st_file *f, gmlp_config *cfg, char *err, size_t errsize);

/* Checks that f holds exactly the tensors cfg implies, with the right shapes
 * and a float dtype. */
gmlp_status gmlp_config_check_tensors(const gmlp_st_file *f, const gmlp_config *cfg, char *err, size_t errsize);

/* Helpers shared by the timm and the LM config inference. */
const gmlp_st_tensor *gmlp_cfg_need(const gmlp_st_file *f, const gmlp_config *cfg, int l, const char *leaf, int ndim,
                                    char *err, size_t errsize);
gmlp_status gmlp_cfg_check_dim(long long v, const char *what, const char *tensor, char *err, size_t errsize);
int gmlp_cfg_count_blocks(const gmlp_st_file *f, const char *prefix);
int gmlp_parse_float(const char *s, float *out);
/* Index of s in the NULL-terminated names, or -1. */
int gmlp_cfg_choice(const char *s, const char *const *names);
/* gmlp.norm_eps / gmlp.sgu_eps over the defaults already in cfg. */
gmlp_status gmlp_cfg_parse_eps(const gmlp_st_file *f, gmlp_config *cfg, char *err, size_t errsize);
/* The LM part of gmlp_config_infer (cfg->arch already GMLP_ARCH_LM). */
gmlp_status gmlp_lm_config_infer(const gmlp_st_file *f, gmlp_config *cfg, char *err, size_t errsize);

/* The LM's spatial matrices (heads x N x N) from the file: circulant
 * construction and causal mask applied. */
gmlp_status gmlp_lm_upload_spatial(gmlp_model *m, const gmlp_st_file *f);

/* A weight as a new device buffer of numel values: a matrix (matrix != 0)
 * as half when the model stores weights as GMLP_WEIGHTS_F16, anything else
 * (biases, LayerNorm parameters) as float.  Adds its bytes to
 * cfg.weight_bytes.  A matrix value beyond half's range is
 * GMLP_ERR_UNSUPPORTED naming the tensor. */
gmlp_status gmlp_model_upload(gmlp_model *m, const float *host, size_t numel, int matrix, const char *name,
                              cl_mem *dst);
/* The GEMM operand reading a matrix that gmlp_model_upload made (off, ld and
 * stride in elements). */
gmlp_mat gmlp_weight_mat(const gmlp_model *m, cl_mem buf, size_t off, size_t ld, size_t stride, int trans);

/* Runs the network on batch images (host memory), writing pooled features
 * and, when logits != NULL, the head's output. */
gmlp_status gmlp_forward(gmlp_model *m, const float *images, size_t batch, float *features, float *logits);
/* The same from and to device buffers of the context (gmlp_classify_cl), enqueued only. */
gmlp_status gmlp_forward_cl(gmlp_model *m, cl_mem images, size_t batch, cl_mem logits);
void gmlp_workspace_free(gmlp_model *m);

/* Per-sequence caches of a decoding state: per layer, seq_len positions of
 * the normalised block input (only with token shift), of the normalised gate
 * input, and of the tiny attention's keys and values (only with attention). */
typedef struct gmlp_lm_cache {
    cl_mem *ln, *gate, *kv;
} gmlp_lm_cache;

/* Runs positions p0 .. p0+n-1 of batch sequences (tokens: batch x n, host).
 * cache NULL: a stand-alone pass (p0 = 0); else earlier positions are read
 * from it and these are written into it.  logits: batch x n x vocab, or with
 * last_only batch x vocab (each sequence's last position). */
gmlp_status gmlp_lm_forward(gmlp_model *m, const int32_t *tokens, size_t batch, size_t p0, size_t n,
                            const gmlp_lm_cache *cache, int last_only, float *logits);
/* Sequences of n tokens one pass can hold within the memory budget (>= 1). */
size_t gmlp_lm_max_batch(const gmlp_model *m, size_t n);
void gmlp_lm_workspace_free(gmlp_model *m);

#endif
