/* What each architecture (GMLP_ARCH_*) is, as one row of data: the loader,
 * the forward, the workspace planner and the API read its fields instead of
 * comparing arch values. */
#ifndef GMLP_ARCH_H
#define GMLP_ARCH_H

#include "model/model.h"
#include "model/tensors.h"

/* The norm layer of the blocks, the stem and the final norm. */
typedef enum gmlp_norm_kind {
    GMLP_NORM_LAYERNORM, /* nn.LayerNorm */
    GMLP_NORM_AFFINE,    /* ResMLP's Affine: alpha * x + beta, no statistics */
} gmlp_norm_kind;

/* How a block mixes the tokens. */
typedef enum gmlp_token_mix {
    GMLP_MIX_SGU,    /* the spatial gating unit: N x N matrices gating half of fc1's outputs */
    GMLP_MIX_MLP,    /* MixerBlock's token MLP: N -> token_dim -> N */
    GMLP_MIX_LINEAR, /* ResMLP's linear_tokens: one N x N matrix */
} gmlp_token_mix;

typedef struct gmlp_arch_desc {
    const char *name; /* gmlp.arch's value, gmlp_arch_name's */
    const char *what; /* for messages: "timm gMLP", ... */
    const char *timm_prefix; /* a timm family: its registry names' prefix ("resmlp_"), by which config.json's
                              * architecture names it (rows may share one: the first is taken); else NULL */
    int lm;           /* a language model: token ids in, logits per position; no image */
    int layers;       /* g-mlp-pytorch's layers.N (options read off layers.0, spatial matrices built
                       * at upload), not timm's blocks.N */
    const char *block_path; /* g-mlp-pytorch: the gMLPBlock inside a layer, what a leaf's '$' stands for */
    gmlp_token_mix mix;
    int halves;             /* fc1's outputs split in two: the SGU's [u | v], GluMlp's [x1 | x2] */
    gmlp_norm_kind norm;
    int gate_act;           /* GMLP_GATE_* on the gate: timm gmixer's GluMlp has nn.SiLU (an LM's gmlp.act
                             * overrides) */
    int mlp_act;            /* GMLP_GATE_* on fc1's outputs: the channel MLP's activation, and a MixerBlock's
                             * token MLP's (timm gives both one act_layer); GluMlp's fc1 has none, its act_layer
                             * is gate_act */
    gmlp_status (*block)(const gmlp_pass *p, int l); /* x += the block's output */
    /* The sizes from the tensors' shapes (cfg->arch set, the rest zero). */
    gmlp_status (*infer)(const gmlp_st_file *f, gmlp_config *cfg, gmlp_error *err);
    const char *stem, *head; /* image models: the patch embedding's weight, the head's prefix */
    int patch_in_metadata;   /* the patch's shape is metadata gmlp.patch_size: a Linear on flattened
                              * patches cannot tell a non-square one */
    const char *mean, *std; /* image models: the default normalisation, as a pretrained cfg's (gmlp.mean) */
    float norm_eps, sgu_eps; /* defaults; 0: no such LayerNorm */
    const gmlp_tensor_spec *model_specs, *block_specs;
} gmlp_arch_desc;

/* The row of arch (GMLP_ARCH_*), or NULL if it is none. */
const gmlp_arch_desc *gmlp_arch_get(int arch);
/* The row of a configuration whose arch is valid (loaded, or checked with
 * gmlp_arch_get). */
const gmlp_arch_desc *gmlp_arch_of(const gmlp_config *cfg);
/* The GMLP_ARCH_* whose gmlp.arch value is name, or -1. */
int gmlp_arch_by_name(const char *name);

#endif
