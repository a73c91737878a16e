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
#define GMLP_HF_MAX_SIZES 6

/* A size config.json states: a class or an input-channel count. */
typedef struct gmlp_hf_size {
    char key[48]; /* where, e.g. "pretrained_cfg.num_classes" */
    int classes;  /* 1: a class count; 0: a channel count */
    long long value;
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
 * GMLP_ERR_FORMAT naming the key; *out is then empty. */
gmlp_status gmlp_hf_config_parse(const void *data, size_t size, gmlp_hf_config *out, gmlp_error *err);
void gmlp_hf_config_free(gmlp_hf_config *c);
/* Whether it holds any preprocessing value. */
int gmlp_hf_config_has_preproc(const gmlp_hf_config *c);

#endif
