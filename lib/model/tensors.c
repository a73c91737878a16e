#include "tensors.h"

#include <stdio.h>
#include <string.h>

#include "model/arch.h"
#include "model/model.h"

#define B(f) offsetof(gmlp_block_weights, f)
#define M(f) offsetof(gmlp_model, f)
#define ALWAYS GMLP_IF_ALWAYS
#define GEMM GMLP_SPEC_GEMM /* a GEMM operand: stored as half with GMLP_WEIGHTS_F16 */
#define LINEAR (GMLP_SPEC_GEMM | GMLP_SPEC_LINEAR)

/* timm MlpMixer, its norm_layer a LayerNorm or (ResMLP) an Affine of shape 1 x 1 x d. */
const gmlp_tensor_spec gmlp_timm_model_specs[] = {
    {"stem.proj.weight", "dCpq", M(stem_w), ALWAYS, LINEAR},
    {"stem.proj.bias", "d", M(stem_b), ALWAYS, 0},
    {"stem.norm.weight", "d", M(stem_norm_w), GMLP_IF_STEM_LAYERNORM, 0},
    {"stem.norm.bias", "d", M(stem_norm_b), GMLP_IF_STEM_LAYERNORM, 0},
    {"stem.norm.alpha", "11d", M(stem_norm_w), GMLP_IF_STEM_AFFINE, 0},
    {"stem.norm.beta", "11d", M(stem_norm_b), GMLP_IF_STEM_AFFINE, 0},
    {"norm.weight", "d", M(norm_w), GMLP_IF_LAYERNORM, 0},
    {"norm.bias", "d", M(norm_b), GMLP_IF_LAYERNORM, 0},
    {"norm.alpha", "11d", M(norm_w), GMLP_IF_AFFINE, 0},
    {"norm.beta", "11d", M(norm_b), GMLP_IF_AFFINE, 0},
    {"head.weight", "kd", M(head_w), GMLP_IF_HEAD, LINEAR},
    {"head.bias", "k", M(head_b), GMLP_IF_HEAD, 0},
    {NULL, NULL, 0, ALWAYS, 0},
};

const gmlp_tensor_spec gmlp_sgu_block_specs[] = {
    {"norm.weight", "d", B(norm_w), ALWAYS, 0},
    {"norm.bias", "d", B(norm_b), ALWAYS, 0},
    {"mlp_channels.fc1.weight", "hd", B(fc1_w), ALWAYS, LINEAR},
    {"mlp_channels.fc1.bias", "h", B(fc1_b), ALWAYS, 0},
    {"mlp_channels.gate.norm.weight", "g", B(sgu_norm_w), ALWAYS, 0},
    {"mlp_channels.gate.norm.bias", "g", B(sgu_norm_b), ALWAYS, 0},
    {"mlp_channels.gate.proj.weight", "NN", B(sgu_w), ALWAYS, GEMM},
    {"mlp_channels.gate.proj.bias", "N", B(sgu_b), ALWAYS, 0},
    {"mlp_channels.fc2.weight", "dg", B(fc2_w), ALWAYS, LINEAR},
    {"mlp_channels.fc2.bias", "d", B(fc2_b), ALWAYS, 0},
    {NULL, NULL, 0, ALWAYS, 0},
};

/* timm MixerBlock, with Mlp or (gmixer_*) GluMlp, whose fc2 takes half of
 * fc1's outputs: 'u' and 'f'. */
const gmlp_tensor_spec gmlp_mixer_block_specs[] = {
    {"norm1.weight", "d", B(norm1_w), ALWAYS, 0},
    {"norm1.bias", "d", B(norm1_b), ALWAYS, 0},
    {"mlp_tokens.fc1.weight", "tN", B(tok1_w), ALWAYS, GEMM},
    {"mlp_tokens.fc1.bias", "t", B(tok1_b), ALWAYS, 0},
    {"mlp_tokens.fc2.weight", "Nu", B(tok2_w), ALWAYS, GEMM},
    {"mlp_tokens.fc2.bias", "N", B(tok2_b), ALWAYS, 0},
    {"norm2.weight", "d", B(norm_w), ALWAYS, 0},
    {"norm2.bias", "d", B(norm_b), ALWAYS, 0},
    {"mlp_channels.fc1.weight", "hd", B(fc1_w), ALWAYS, LINEAR},
    {"mlp_channels.fc1.bias", "h", B(fc1_b), ALWAYS, 0},
    {"mlp_channels.fc2.weight", "df", B(fc2_w), ALWAYS, LINEAR},
    {"mlp_channels.fc2.bias", "d", B(fc2_b), ALWAYS, 0},
    {NULL, NULL, 0, ALWAYS, 0},
};

/* timm ResMLP's ResBlock: Affine norms, the layer scales ls1 / ls2 folded
 * in at upload where a product allows: into norm1 (its output only feeds
 * linear_tokens) and into fc2; ls1 also scales linear_tokens' bias, a
 * rank-1 term of its own (block.c). */
const gmlp_tensor_spec gmlp_resmlp_block_specs[] = {
    {"norm1.alpha", "11d", B(norm1_w), ALWAYS, GMLP_SPEC_BY_LS1},
    {"norm1.beta", "11d", B(norm1_b), ALWAYS, GMLP_SPEC_BY_LS1},
    {"linear_tokens.weight", "NN", B(tok1_w), ALWAYS, GEMM},
    {"linear_tokens.bias", "N", B(tok1_b), ALWAYS, 0},
    {"ls1", "d", B(ls1), ALWAYS, 0},
    {"norm2.alpha", "11d", B(norm_w), ALWAYS, 0},
    {"norm2.beta", "11d", B(norm_b), ALWAYS, 0},
    {"mlp_channels.fc1.weight", "hd", B(fc1_w), ALWAYS, LINEAR},
    {"mlp_channels.fc1.bias", "h", B(fc1_b), ALWAYS, 0},
    {"mlp_channels.fc2.weight", "dh", B(fc2_w), ALWAYS, LINEAR | GMLP_SPEC_BY_LS2},
    {"mlp_channels.fc2.bias", "d", B(fc2_b), ALWAYS, GMLP_SPEC_BY_LS2},
    {"ls2", "d", GMLP_NO_FIELD, ALWAYS, 0},
    {NULL, NULL, 0, ALWAYS, 0},
};

/* g-mlp-pytorch gMLP(num_tokens=...). */
const gmlp_tensor_spec gmlp_lm_model_specs[] = {
    {"to_embed.weight", "Vd", M(embed_w), ALWAYS, 0},
    {"to_logits.0.weight", "d", M(norm_w), ALWAYS, 0},
    {"to_logits.0.bias", "d", M(norm_b), ALWAYS, 0},
    {"to_logits.1.weight", "Vd", M(head_w), ALWAYS, LINEAR},
    {"to_logits.1.bias", "V", M(head_b), ALWAYS, 0},
    {NULL, NULL, 0, ALWAYS, 0},
};

/* g-mlp-pytorch gMLPVision: the patch embedding (Rearrange to (c p1 p2), then
 * Linear: the timm stem's weight flattened) and LayerNorm, mean, Linear. */
const gmlp_tensor_spec gmlp_vision_model_specs[] = {
    {"to_patch_embed.1.weight", "dP", M(stem_w), ALWAYS, LINEAR},
    {"to_patch_embed.1.bias", "d", M(stem_b), ALWAYS, 0},
    {"to_logits.0.weight", "d", M(norm_w), ALWAYS, 0},
    {"to_logits.0.bias", "d", M(norm_b), ALWAYS, 0},
    {"to_logits.2.weight", "kd", M(head_w), GMLP_IF_HEAD, LINEAR},
    {"to_logits.2.bias", "k", M(head_b), GMLP_IF_HEAD, 0},
    {NULL, NULL, 0, ALWAYS, 0},
};

/* g-mlp-pytorch's layers, '$' standing for the gMLPBlock's path: the LM's
 * Residual(PreNorm(PreShiftTokens(gMLPBlock))), gMLPVision's
 * Residual(PreNorm(gMLPBlock)). */
const gmlp_tensor_spec gmlp_layer_block_specs[] = {
    {"fn.norm.weight", "d", B(norm_w), ALWAYS, 0},
    {"fn.norm.bias", "d", B(norm_b), ALWAYS, 0},
    {"$proj_in.0.weight", "hd", B(fc1_w), ALWAYS, LINEAR},
    {"$proj_in.0.bias", "h", B(fc1_b), ALWAYS, 0},
    {"$attn.to_qkv.weight", "Ad", B(qkv_w), GMLP_IF_ATTN, LINEAR},
    {"$attn.to_out.weight", "ga", B(attn_out_w), GMLP_IF_ATTN, LINEAR},
    {"$attn.to_out.bias", "g", B(attn_out_b), GMLP_IF_ATTN, 0},
    {"$sgu.norm.weight", "g", B(sgu_norm_w), ALWAYS, 0},
    {"$sgu.norm.bias", "g", B(sgu_norm_b), ALWAYS, 0},
    {"$sgu.weight", "HNN", GMLP_NO_FIELD, GMLP_IF_DENSE, GEMM},
    {"$sgu.weight", "HN", GMLP_NO_FIELD, GMLP_IF_CIRCULANT, GEMM},
    {"$sgu.circulant_pos_x", "HN", GMLP_NO_FIELD, GMLP_IF_CIRCULANT, 0},
    {"$sgu.circulant_pos_y", "HN", GMLP_NO_FIELD, GMLP_IF_CIRCULANT, 0},
    {"$sgu.bias", "HN", B(sgu_b), ALWAYS, 0},
    {"$proj_out.weight", "dg", B(fc2_w), ALWAYS, LINEAR},
    {"$proj_out.bias", "d", B(fc2_b), ALWAYS, 0},
    {NULL, NULL, 0, ALWAYS, 0},
};

const gmlp_tensor_spec *gmlp_model_specs(const gmlp_config *cfg)
{
    return gmlp_arch_of(cfg)->model_specs;
}

const gmlp_tensor_spec *gmlp_block_specs(const gmlp_config *cfg)
{
    return gmlp_arch_of(cfg)->block_specs;
}

const char *gmlp_spec_scale(const gmlp_tensor_spec *spec)
{
    return spec->flags & GMLP_SPEC_BY_LS1 ? "ls1" : spec->flags & GMLP_SPEC_BY_LS2 ? "ls2" : NULL;
}

int gmlp_spec_present(const gmlp_config *cfg, const gmlp_tensor_spec *spec)
{
    const gmlp_norm_kind norm = gmlp_arch_of(cfg)->norm;
    switch (spec->cond) {
    case GMLP_IF_HEAD: return cfg->num_classes > 0;
    case GMLP_IF_ATTN: return cfg->attn_dim > 0;
    case GMLP_IF_DENSE: return !cfg->circulant;
    case GMLP_IF_CIRCULANT: return cfg->circulant;
    case GMLP_IF_LAYERNORM: return norm == GMLP_NORM_LAYERNORM;
    case GMLP_IF_AFFINE: return norm == GMLP_NORM_AFFINE;
    case GMLP_IF_STEM_LAYERNORM: return cfg->stem_norm && norm == GMLP_NORM_LAYERNORM;
    case GMLP_IF_STEM_AFFINE: return cfg->stem_norm && norm == GMLP_NORM_AFFINE;
    case GMLP_IF_ALWAYS: break;
    }
    return 1;
}

void gmlp_tensor_name(const gmlp_config *cfg, char *buf, size_t size, int l, const char *leaf)
{
    const gmlp_arch_desc *a = gmlp_arch_of(cfg);
    int dollar = leaf[0] == '$';
    if (l < 0)
        snprintf(buf, size, "%s", leaf);
    else
        snprintf(buf, size, "%s.%d.%s%s", a->layers ? "layers" : "blocks", l, dollar ? a->block_path : "",
                 leaf + dollar);
}

long long gmlp_spec_dim(const gmlp_config *cfg, char s)
{
    switch (s) {
    case 'd': return cfg->dim;
    case 'h': return cfg->ffn_dim;
    case 'g': return cfg->ffn_dim / 2;
    case 'N': return cfg->seq_len;
    case 't': return cfg->token_dim;
    case 'u': return gmlp_arch_of(cfg)->halves ? cfg->token_dim / 2 : cfg->token_dim;
    case 'f': return gmlp_arch_of(cfg)->halves ? cfg->ffn_dim / 2 : cfg->ffn_dim;
    case 'C': return cfg->in_chans;
    case 'p': return cfg->patch_h;
    case 'q': return cfg->patch_w;
    case 'P': return (long long)cfg->in_chans * cfg->patch_h * cfg->patch_w;
    case 'k': return cfg->num_classes;
    case 'V': return cfg->vocab_size;
    case 'H': return cfg->heads;
    case 'a': return cfg->attn_dim;
    case 'A': return 3LL * cfg->attn_dim;
    case '1': return 1;
    }
    return -1;
}
