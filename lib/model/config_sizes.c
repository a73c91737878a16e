/* An image model's sizes from its tensors' shapes: timm's MlpMixer family
 * (gMLP, Mixer, gMixer, ResMLP) and g-mlp-pytorch's gMLPVision; and the
 * helpers the LM's inference shares. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "model/arch.h"
#include "model/config.h"
#include "model/tensors.h"

const gmlp_st_tensor *gmlp_cfg_need(const gmlp_st_file *f, const gmlp_config *cfg, int l, const char *leaf, int ndim,
                                    gmlp_error *err)
{
    char name[256];
    gmlp_tensor_name(cfg, name, sizeof name, l, leaf);
    const gmlp_st_tensor *t = gmlp_st_find(f, name);
    if (!t)
        gmlp_fail(err, GMLP_ERR_FORMAT, "missing tensor '%s'", name);
    else if (t->ndim != ndim) {
        gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s' has %d dimensions, expected %d", name, t->ndim, ndim);
        t = NULL;
    }
    return t;
}

/* depth = 1 + the largest block index named; missing blocks in between are
 * caught by gmlp_config_check_tensors. */
int gmlp_cfg_count_blocks(const gmlp_st_file *f, const char *prefix)
{
    long depth = 0;
    size_t len = strlen(prefix);
    for (size_t i = 0; i < f->n_tensors; i++) {
        const char *n = f->tensors[i].name;
        char *end;
        if (strncmp(n, prefix, len) || n[len] < '0' || n[len] > '9')
            continue;
        long l = strtol(n + len, &end, 10);
        if (*end == '.' && l < GMLP_MAX_DIM && l + 1 > depth)
            depth = l + 1;
    }
    return (int)depth;
}

gmlp_status gmlp_cfg_check_dim(long long v, const char *what, const char *tensor, gmlp_error *err)
{
    if (v < 1 || v > GMLP_MAX_DIM)
        return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s' gives %s = %lld, outside [1, %d]", tensor,
                         what, v, GMLP_MAX_DIM);
    return GMLP_OK;
}

/* num_classes from PREFIX.weight; none (a feature extractor) without it. */
static gmlp_status infer_head(const gmlp_st_file *f, gmlp_config *cfg, const char *prefix, gmlp_error *err)
{
    char w[64], b[64];
    snprintf(w, sizeof w, "%s.weight", prefix);
    snprintf(b, sizeof b, "%s.bias", prefix);
    const gmlp_st_tensor *t = gmlp_st_find(f, w);
    if (t) {
        if (t->ndim != 2)
            return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s' has %d dimensions, expected 2", w, t->ndim);
        GMLP_TRY(gmlp_cfg_check_dim(t->shape[0], "num_classes", t->name, err));
        cfg->num_classes = (int)t->shape[0];
    } else if (gmlp_st_find(f, b)) {
        return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s' is present but '%s' is missing", b, w);
    }
    return GMLP_OK;
}

/* seq_len (and the Mixer's token_dim) from blocks.0's token mixing; fc1
 * (ffn_dim's witness) names the faults of a split channel MLP. */
static gmlp_status infer_token_mix(const gmlp_st_file *f, gmlp_config *cfg, const gmlp_st_tensor *fc1,
                                   gmlp_error *err)
{
    const gmlp_st_tensor *t;
    switch (gmlp_arch_of(cfg)->mix) {
    case GMLP_MIX_LINEAR:
        if (!(t = gmlp_cfg_need(f, cfg, 0, "linear_tokens.weight", 2, err)))
            return GMLP_ERR_FORMAT;
        GMLP_TRY(gmlp_cfg_check_dim(t->shape[0], "the token count", t->name, err));
        cfg->seq_len = (int)t->shape[0];
        return GMLP_OK;
    case GMLP_MIX_SGU:
        if (cfg->ffn_dim % 2)
            return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s': ffn_dim %d is odd, the SGU splits it in two",
                             fc1->name, cfg->ffn_dim);
        if (!(t = gmlp_cfg_need(f, cfg, 0, "mlp_channels.gate.proj.weight", 2, err)))
            return GMLP_ERR_FORMAT;
        GMLP_TRY(gmlp_cfg_check_dim(t->shape[0], "the token count", t->name, err));
        cfg->seq_len = (int)t->shape[0];
        return GMLP_OK;
    case GMLP_MIX_MLP:
        if (!(t = gmlp_cfg_need(f, cfg, 0, "mlp_tokens.fc1.weight", 2, err)))
            return GMLP_ERR_FORMAT;
        GMLP_TRY(gmlp_cfg_check_dim(t->shape[0], "token_dim", t->name, err));
        GMLP_TRY(gmlp_cfg_check_dim(t->shape[1], "the token count", t->name, err));
        cfg->token_dim = (int)t->shape[0];
        cfg->seq_len = (int)t->shape[1];
        if (gmlp_arch_of(cfg)->halves && (cfg->token_dim % 2 || cfg->ffn_dim % 2))
            return gmlp_fail(err, GMLP_ERR_FORMAT, "blocks.0: GluMlp widths %d and %d must be even",
                             cfg->token_dim, cfg->ffn_dim);
        return GMLP_OK;
    }
    return gmlp_fail(err, GMLP_ERR_UNSUPPORTED, "no token mixing of this kind");
}

gmlp_status gmlp_timm_config_infer(const gmlp_st_file *f, gmlp_config *cfg, gmlp_error *err)
{
    const gmlp_st_tensor *t;
    if (!(t = gmlp_cfg_need(f, cfg, -1, gmlp_arch_of(cfg)->stem, 4, err)))
        return GMLP_ERR_FORMAT;
    GMLP_TRY(gmlp_cfg_check_dim(t->shape[0], "dim", t->name, err));
    GMLP_TRY(gmlp_cfg_check_dim(t->shape[1], "in_chans", t->name, err));
    GMLP_TRY(gmlp_cfg_check_dim(t->shape[2], "patch height", t->name, err));
    GMLP_TRY(gmlp_cfg_check_dim(t->shape[3], "patch width", t->name, err));
    if (t->shape[1] > 3)
        return gmlp_fail(err, GMLP_ERR_UNSUPPORTED, "tensor '%s': %lld input channels (at most 3)",
                         t->name, (long long)t->shape[1]);
    cfg->dim = (int)t->shape[0];
    cfg->in_chans = (int)t->shape[1];
    cfg->patch_h = (int)t->shape[2];
    cfg->patch_w = (int)t->shape[3];
    if (gmlp_st_meta(f, "gmlp.patch_size")) /* the stem's shape is the patch: a second value could only disagree */
        return gmlp_fail(err, GMLP_ERR_FORMAT, "metadata gmlp.patch_size is for gMLPVision only: a %s takes its "
                         "%dx%d patch from '%s'", gmlp_arch_of(cfg)->what, cfg->patch_h, cfg->patch_w, t->name);
    /* any stem.norm.* tensor: the check then wants the arch's pair (weight/bias; ResMLP: alpha/beta) */
    for (size_t i = 0; i < f->n_tensors && !cfg->stem_norm; i++)
        cfg->stem_norm = !strncmp(f->tensors[i].name, "stem.norm.", 10);
    cfg->depth = gmlp_cfg_count_blocks(f, "blocks.");
    if (cfg->depth == 0)
        return gmlp_fail(err, GMLP_ERR_FORMAT, "no 'blocks.0.*' tensors: the model has no blocks");
    if (!(t = gmlp_cfg_need(f, cfg, 0, "mlp_channels.fc1.weight", 2, err)))
        return GMLP_ERR_FORMAT;
    GMLP_TRY(gmlp_cfg_check_dim(t->shape[0], "ffn_dim", t->name, err));
    cfg->ffn_dim = (int)t->shape[0];
    GMLP_TRY(infer_token_mix(f, cfg, t, err));
    return infer_head(f, cfg, gmlp_arch_of(cfg)->head, err);
}

/* gMLPVision's patch embedding (a Linear on patches flattened as (c p1 p2),
 * the timm stem's weight reshaped) and its layers.  The patch: metadata
 * gmlp.patch_size, else the square one that, with 1-3 channels, makes the
 * embedding's inputs: at most one does, as c p^2 = c' q^2 has no other
 * solution for c, c' in 1..3. */
gmlp_status gmlp_vision_config_infer(const gmlp_st_file *f, gmlp_config *cfg, gmlp_error *err)
{
    const gmlp_st_tensor *t;
    if (!(t = gmlp_cfg_need(f, cfg, -1, gmlp_arch_of(cfg)->stem, 2, err)))
        return GMLP_ERR_FORMAT;
    GMLP_TRY(gmlp_cfg_check_dim(t->shape[0], "dim", t->name, err));
    GMLP_TRY(gmlp_cfg_check_dim(t->shape[1], "channels x patch area", t->name, err));
    cfg->dim = (int)t->shape[0];
    const long long k = t->shape[1];
    const char *s = gmlp_st_meta(f, "gmlp.patch_size");
    int hw[2];
    if (s) {
        if (!gmlp_parse_size(s, hw))
            return gmlp_fail(err, GMLP_ERR_FORMAT, "metadata gmlp.patch_size '%s' is not \"S\" or \"H,W\" with "
                             "positive integers", s);
        long long area = (long long)hw[0] * hw[1];
        if (k % area || k / area > 3)
            return gmlp_fail(err, GMLP_ERR_FORMAT, "metadata gmlp.patch_size %dx%d: tensor '%s' has %lld inputs, "
                             "not 1-3 channels of that patch", hw[0], hw[1], t->name, k);
        cfg->patch_h = hw[0];
        cfg->patch_w = hw[1];
        cfg->in_chans = (int)(k / area);
    } else {
        for (int c = 1; c <= 3 && !cfg->in_chans; c++) {
            long long side = k % c ? 0 : llround(sqrt((double)(k / c)));
            if (side * side * c == k) {
                cfg->in_chans = c;
                cfg->patch_h = cfg->patch_w = (int)side;
            }
        }
        if (!cfg->in_chans)
            return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s' has %lld inputs, not 1-3 channels of a square "
                             "patch: a non-square patch needs metadata gmlp.patch_size", t->name, k);
    }
    GMLP_TRY(gmlp_layers_config_infer(f, cfg, err));
    return infer_head(f, cfg, gmlp_arch_of(cfg)->head, err);
}
