/* The state_dict layout of the supported models: tensor names, shapes (as
 * symbols resolved against a gmlp_config) and where each lands in
 * gmlp_model, shared by validation and upload so they cannot disagree. */
#ifndef GMLP_TENSORS_H
#define GMLP_TENSORS_H

#include <stddef.h>

#include "gmlp.h"

/* When a tensor is part of the model. */
typedef enum gmlp_spec_cond {
    GMLP_IF_ALWAYS,
    GMLP_IF_HEAD,      /* a classifier head (num_classes > 0) */
    GMLP_IF_ATTN,      /* a tiny attention (attn_dim > 0) */
    GMLP_IF_DENSE,     /* a dense spatial matrix */
    GMLP_IF_CIRCULANT, /* the Toeplitz parameterisation */
    GMLP_IF_LAYERNORM, /* timm's final norm is a LayerNorm (all but ResMLP) */
    GMLP_IF_AFFINE,    /* ... or ResMLP's Affine */
    GMLP_IF_STEM_LAYERNORM, /* stem_norm=True: the stem's norm, a LayerNorm */
    GMLP_IF_STEM_AFFINE,    /* ... or ResMLP's Affine */
} gmlp_spec_cond;

#define GMLP_NO_FIELD ((size_t)-1) /* validated, but turned into another buffer (spatial matrices) */

typedef struct gmlp_tensor_spec {
    const char *leaf; /* name after the block prefix (block) or whole (model) */
    const char *dims; /* one symbol per dim, see gmlp_spec_dim */
    size_t field;     /* offsetof the cl_mem in gmlp_block_weights / gmlp_model, or GMLP_NO_FIELD */
    gmlp_spec_cond cond;
    int flags;        /* GMLP_SPEC_* */
} gmlp_tensor_spec;

enum {
    GMLP_SPEC_GEMM = 1,   /* a GEMM operand (stored as half on request), not a bias, norm or gathered table */
    GMLP_SPEC_BY_LS1 = 2, /* uploaded multiplied by the block's ls1 / ls2 (ResMLP's layer scales): */
    GMLP_SPEC_BY_LS2 = 4, /* element i by ls[i / (numel / d)], along the first dimension longer than 1 */
    GMLP_SPEC_LINEAR = 8, /* nn.Linear's weight (out x in, a conv's flattened): stored as the model's layout says */
};
/* The leaf of the vector spec is uploaded multiplied by, or NULL. */
const char *gmlp_spec_scale(const gmlp_tensor_spec *spec);

/* The layouts, each terminated by leaf == NULL: model-level tensors of timm's
 * MlpMixer family, g-mlp-pytorch's LM and gMLPVision; per-block tensors of
 * timm's SpatialGatingBlock, MixerBlock, ResMLP's ResBlock and
 * g-mlp-pytorch's layers.  The architecture table (arch.c) says whose is whose. */
extern const gmlp_tensor_spec gmlp_timm_model_specs[], gmlp_lm_model_specs[], gmlp_vision_model_specs[];
extern const gmlp_tensor_spec gmlp_sgu_block_specs[], gmlp_mixer_block_specs[], gmlp_resmlp_block_specs[],
    gmlp_layer_block_specs[];

/* Specs for the model-level and per-block tensors of cfg->arch. */
const gmlp_tensor_spec *gmlp_model_specs(const gmlp_config *cfg);
const gmlp_tensor_spec *gmlp_block_specs(const gmlp_config *cfg);
/* Whether cfg's model has this tensor. */
int gmlp_spec_present(const gmlp_config *cfg, const gmlp_tensor_spec *spec);

/* Name of tensor `leaf` of block l (or of the model when l < 0):
 * "blocks.{l}." (timm) or "layers.{l}." (g-mlp-pytorch) in front, a leading
 * '$' of a layer's leaf replaced by its gMLPBlock's path. */
void gmlp_tensor_name(const gmlp_config *cfg, char *buf, size_t size, int l, const char *leaf);

/* Size of dimension symbol s: d dim, h ffn, g ffn/2, N tokens, t token-MLP
 * width, C channels, p/q patch height/width, P C x p x q, k classes, V vocabulary, H
 * heads, a attention width, A 3 x attention width, 1 one, u / f the Mixer's token /
 * channel fc2 inputs (gmixer's GluMlp: half of fc1's outputs). */
long long gmlp_spec_dim(const gmlp_config *cfg, char s);

#endif
