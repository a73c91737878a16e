/* config.json of a Hugging Face model folder as timm writes it (save_for_hf,
 * push_to_hf_hub): the preprocessing of pretrained_cfg and the label names,
 * turned into the strings the gmlp.* metadata would hold, and the sizes it
 * states, which must agree with the weights. */
#ifndef GMLP_HF_CONFIG_H
#define GMLP_HF_CONFIG_H

#include <stddef.h>

#include "core/error.h"
#include "model/preproc.h"

#define GMLP_HF_CONFIG_MAX_BYTES ((size_t)16 << 20) /* ImageNet-21k's names and descriptions fit */
#define GMLP_HF_MAX_SIZES 16

/* What a size config.json states is a count of. */
typedef enum gmlp_hf_kind {
    GMLP_HF_CLASSES,
    GMLP_HF_CHANNELS,
    GMLP_HF_DIM,       /* model_args.embed_dim, num_features */
    GMLP_HF_DEPTH,     /* model_args.num_blocks */
    GMLP_HF_PATCH,     /* model_args.patch_size: value[0] x value[1] */
    GMLP_HF_STEM_NORM, /* model_args.stem_norm: 0 or 1 */
    GMLP_HF_MLP_RATIO, /* model_args.mlp_ratio: ratio[0] tokens, ratio[1] channels (one number: both) */
} gmlp_hf_kind;

/* A size config.json states, which the weights must have. */
typedef struct gmlp_hf_size {
    char key[48]; /* where, e.g. "pretrained_cfg.num_classes" */
    gmlp_hf_kind kind;
    long long value[2];
    double ratio[2];
} gmlp_hf_size;

typedef struct gmlp_hf_config {
    char *value[GMLP_PK_COUNT];   /* per gmlp_preproc_key, as gmlp.KEY spells it; NULL: absent */
    char key[GMLP_PK_COUNT][48];  /* where each came from, e.g. "pretrained_cfg.input_size" */
    gmlp_hf_size sizes[GMLP_HF_MAX_SIZES];
    int n_sizes;
    char *architecture; /* timm's registry name, NULL: absent */
} gmlp_hf_config;

/* Reads config.json's text (size bytes, at most GMLP_HF_CONFIG_MAX_BYTES).
 * Malformed JSON (line and column), a value of the wrong type or shape is
 * GMLP_ERR_FORMAT naming the key, a global_pool other than 'avg'
 * GMLP_ERR_UNSUPPORTED; *out is then empty. */
gmlp_status gmlp_hf_config_parse(const void *data, size_t size, gmlp_hf_config *out, gmlp_error *err);
void gmlp_hf_config_free(gmlp_hf_config *c);
/* Whether it holds any preprocessing value. */
int gmlp_hf_config_has_preproc(const gmlp_hf_config *c);

#endif
