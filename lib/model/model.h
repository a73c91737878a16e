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
    cl_mem sgu_w, sgu_b;
    cl_mem norm1_w, norm1_b;       /* Mixer token MLP */
    cl_mem tok1_w, tok1_b, tok2_w, tok2_b;
} gmlp_block_weights;

typedef struct gmlp_workspace {
    size_t batch; /* images the buffers hold; 0 before the first call */
    size_t bytes; /* their device memory */
    cl_mem images, x, y, z, pooled, logits;
} gmlp_workspace;

struct gmlp_model {
    gmlp_context *ctx;
    gmlp_config cfg;
    char **meta_keys, **meta_values;
    size_t n_meta;
    char **labels; /* num_classes entries from gmlp.labels, or NULL */
    cl_mem stem_w, stem_b, norm_w, norm_b, head_w, head_b;
    gmlp_block_weights *blocks;
    gmlp_workspace ws;
};

/* Fills cfg from tensor names/shapes and metadata, validating the metadata
 * and the consistency of every size. */
gmlp_status gmlp_config_infer(const gmlp_st_file *f, gmlp_config *cfg, char *err, size_t errsize);

/* Checks that f holds exactly the tensors cfg implies, with the right shapes
 * and a float dtype. */
gmlp_status gmlp_config_check_tensors(const gmlp_st_file *f, const gmlp_config *cfg, char *err, size_t errsize);

/* Name of tensor `leaf` of block l (or of the model when l < 0). */
void gmlp_tensor_name(char *buf, size_t size, int l, const char *leaf);

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
void gmlp_workspace_free(gmlp_model *m);

#endif
