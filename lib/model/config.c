/* From a parsed safetensors file (and a model folder's config.json) to a
 * validated gmlp_config: the architecture, then its sizes from tensor
 * shapes, then what config.json states checked against them, then the
 * preprocessing values and settings from __metadata__ or the defaults. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "model/arch.h"
#include "model/config.h"

/* The width timm's MlpMixer gives a block for mlp_ratio r: int(r * dim). */
static long long ratio_width(double r, int dim)
{
    double w = r * dim;
    return w >= 0 && w < GMLP_MAX_DIM ? (long long)w : -1;
}

/* One size config.json states against the weights: into said/have (and the
 * tensor that tells, witness) when they differ; 0 when they agree. */
static int differs(const gmlp_hf_size *z, const gmlp_config *cfg, char *said, char *have, size_t size,
                   char *witness)
{
    const gmlp_arch_desc *a = gmlp_arch_of(cfg);
    long long v = z->value[0], want = 0;
    snprintf(witness, size, "%s", a->stem);
    snprintf(said, size, "%lld", v);
    switch (z->kind) {
    case GMLP_HF_CLASSES:
        want = cfg->num_classes;
        snprintf(said, size, "%lld classes", v);
        snprintf(witness, size, cfg->num_classes ? "%s.weight" : "no head", a->head);
        break;
    case GMLP_HF_CHANNELS:
        want = cfg->in_chans;
        snprintf(said, size, "%lld input channels", v);
        break;
    case GMLP_HF_DIM: want = cfg->dim; break;
    case GMLP_HF_DEPTH:
        want = cfg->depth;
        snprintf(witness, size, "%s0 to %d", a->layers ? "layers." : "blocks.", cfg->depth - 1);
        break;
    case GMLP_HF_PATCH:
        snprintf(said, size, "%lldx%lld", v, z->value[1]);
        snprintf(have, size, "%dx%d", cfg->patch_h, cfg->patch_w);
        return v != cfg->patch_h || z->value[1] != cfg->patch_w;
    case GMLP_HF_STEM_NORM:
        snprintf(said, size, "%s", v ? "true" : "false");
        snprintf(have, size, "%s", cfg->stem_norm ? "stem.norm.* tensors" : "no stem.norm.* tensors");
        snprintf(witness, size, "timm's stem_norm");
        return !v != !cfg->stem_norm;
    case GMLP_HF_MLP_RATIO: {
        /* timm's widths: int(ratio * dim) per MLP; the MixerBlock's token MLP takes the first ratio */
        int tokens = a->mix == GMLP_MIX_MLP;
        long long t = ratio_width(z->ratio[0], cfg->dim), c = ratio_width(z->ratio[1], cfg->dim);
        if (tokens) {
            snprintf(said, size, "%g, %g (token width %lld, hidden width %lld)", z->ratio[0], z->ratio[1], t, c);
            snprintf(have, size, "%d and %d", cfg->token_dim, cfg->ffn_dim);
        } else {
            snprintf(said, size, "%g (hidden width %lld)", z->ratio[1], c);
            snprintf(have, size, "%d", cfg->ffn_dim);
        }
        snprintf(witness, size, "blocks.0");
        if (!tokens) /* a single MLP: one ratio, given once or twice */
            return z->ratio[0] != z->ratio[1] || c != cfg->ffn_dim;
        return c != cfg->ffn_dim || t != cfg->token_dim;
    }
    }
    snprintf(have, size, "%lld", want);
    return v != want;
}

/* What config.json states about the network must be what the weights are. */
static gmlp_status check_hf(const gmlp_hf_config *hf, const gmlp_config *cfg, gmlp_error *err)
{
    if (!hf)
        return GMLP_OK;
    for (int i = 0; i < hf->n_sizes; i++) {
        const gmlp_hf_size *z = &hf->sizes[i];
        char said[96], have[96], witness[96];
        /* gMLPVision's constructor has no mlp_ratio (g-mlp-pytorch's ff_mult) */
        if (z->kind == GMLP_HF_MLP_RATIO && !gmlp_arch_of(cfg)->timm_prefix)
            continue;
        if (differs(z, cfg, said, have, sizeof said, witness))
            return gmlp_fail(err, GMLP_ERR_FORMAT, "config.json %s says %s, but the weights have %s (%s)", z->key,
                             said, have, witness);
    }
    return gmlp_cfg_check_hf_arch(hf, cfg, err);
}

gmlp_status gmlp_config_infer(const gmlp_st_file *f, const gmlp_hf_config *hf, gmlp_config *cfg, gmlp_error *err)
{
    memset(cfg, 0, sizeof *cfg);
    GMLP_TRY(gmlp_cfg_infer_arch(f, cfg, err));
    const gmlp_arch_desc *a = gmlp_arch_of(cfg);
    cfg->gate_act = a->gate_act;
    if (a->lm) {
        if (gmlp_hf_config_has_preproc(hf) || (hf && hf->n_sizes))
            return gmlp_fail(err, GMLP_ERR_FORMAT, "config.json describes an image model, but the weights are a %s",
                             a->what);
        return a->infer(f, cfg, err);
    }
    cfg->heads = 1;
    GMLP_TRY(a->infer(f, cfg, err));
    GMLP_TRY(check_hf(hf, cfg, err));
    GMLP_TRY(gmlp_cfg_infer_preproc(f, hf, cfg, err));
    GMLP_TRY(gmlp_cfg_parse_eps(f, cfg, err));
    return gmlp_cfg_check_labels(f, hf, cfg, err);
}
