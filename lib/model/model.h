/* A loaded model: config, metadata, weights on the device and a workspace of
 * activation buffers reused across calls (llama2.c's Config / Weights /
 * RunState split). */
#ifndef GMLP_MODEL_H
#define GMLP_MODEL_H

#include "cl/context.h"
#include "format/safetensors.h"

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

/* Runs the network on batch images (host memory), writing pooled features
 * and, when logits != NULL, the head's output. */
gmlp_status gmlp_forward(gmlp_model *m, const float *images, size_t batch, float *features, float *logits);
void gmlp_workspace_free(gmlp_model *m);

#endif
