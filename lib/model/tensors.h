/* The state_dict layout of the supported timm models: tensor names, shapes
 * (as symbols resolved against a gmlp_config) and where each lands in
 * gmlp_model, shared by validation and upload so they cannot disagree. */
#ifndef GMLP_TENSORS_H
#define GMLP_TENSORS_H

#include <stddef.h>

#include "gmlp.h"

typedef struct gmlp_tensor_spec {
    const char *leaf; /* name after "blocks.{l}." (block) or whole (model) */
    const char *dims; /* one symbol per dim, see gmlp_spec_dim */
    size_t field;     /* offsetof the cl_mem in gmlp_block_weights / gmlp_model */
} gmlp_tensor_spec;

/* Specs for the model-level and per-block tensors of cfg->arch, terminated by
 * leaf == NULL. */
const gmlp_tensor_spec *gmlp_model_specs(void);
const gmlp_tensor_spec *gmlp_block_specs(const gmlp_config *cfg);
/* Whether the model has this tensor (the head only with num_classes > 0). */
int gmlp_spec_present(const gmlp_config *cfg, const gmlp_tensor_spec *spec);

/* Size of dimension symbol s: d dim, h ffn, g ffn/2, N tokens, t token-MLP
 * width, C channels, p/q patch height/width, k classes. */
long long gmlp_spec_dim(const gmlp_config *cfg, char s);

#endif
