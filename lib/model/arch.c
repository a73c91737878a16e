/* The architecture table: one row per GMLP_ARCH_*, what the rest of the
 * library asks of an architecture. */
#include "model/arch.h"

#include <string.h>

#include "model/config.h"

/* timm's gMLP and Google Mixer cfgs normalise with 0.5; its gmixer_* and
 * resmlp_* cfgs with ImageNet's statistics */
static const char half[] = "0.5", imagenet_mean[] = "0.485,0.456,0.406", imagenet_std[] = "0.229,0.224,0.225";

/* eps: timm's 1e-6 in the blocks, the SGU's 1e-5; g-mlp-pytorch's
 * nn.LayerNorm default 1e-5 throughout */
static const gmlp_arch_desc archs[GMLP_ARCHS] = {
    [GMLP_ARCH_GMLP] = {.name = "gmlp", .what = "timm gMLP", .timm_prefix = "gmlp_", .mix = GMLP_MIX_SGU,
                        .halves = 1, .norm = GMLP_NORM_LAYERNORM, .mlp_act = GMLP_GATE_GELU, .block = gmlp_block,
                        .infer = gmlp_timm_config_infer, .stem = "stem.proj.weight", .head = "head", .mean = half,
                        .std = half, .norm_eps = 1e-6f, .sgu_eps = 1e-5f, .model_specs = gmlp_timm_model_specs,
                        .block_specs = gmlp_sgu_block_specs},
    [GMLP_ARCH_MIXER] = {.name = "mixer", .what = "timm MLP-Mixer", .timm_prefix = "mixer_", .mix = GMLP_MIX_MLP,
                         .norm = GMLP_NORM_LAYERNORM, .mlp_act = GMLP_GATE_GELU, .block = gmlp_mixer_block,
                         .infer = gmlp_timm_config_infer, .stem = "stem.proj.weight", .head = "head", .mean = half,
                         .std = half, .norm_eps = 1e-6f, .model_specs = gmlp_timm_model_specs,
                         .block_specs = gmlp_mixer_block_specs},
    [GMLP_ARCH_LM] = {.name = "gmlp_lm", .what = "g-mlp-pytorch LM", .lm = 1, .layers = 1,
                      .block_path = "fn.fn.fn.", /* Residual(PreNorm(PreShiftTokens(gMLPBlock))) */
                      .mix = GMLP_MIX_SGU, .halves = 1, .norm = GMLP_NORM_LAYERNORM, .mlp_act = GMLP_GATE_GELU,
                      .block = gmlp_block, .infer = gmlp_lm_config_infer, .norm_eps = 1e-5f, .sgu_eps = 1e-5f,
                      .model_specs = gmlp_lm_model_specs, .block_specs = gmlp_layer_block_specs},
    [GMLP_ARCH_GMLP_VISION] = {.name = "gmlp_vision", .what = "g-mlp-pytorch gMLPVision", .layers = 1,
                               .block_path = "fn.fn.", /* Residual(PreNorm(gMLPBlock)) */
                               .mix = GMLP_MIX_SGU, .halves = 1, .norm = GMLP_NORM_LAYERNORM,
                               .mlp_act = GMLP_GATE_GELU, .block = gmlp_block, .infer = gmlp_vision_config_infer,
                               .stem = "to_patch_embed.1.weight", .head = "to_logits.2", .patch_in_metadata = 1,
                               .mean = half, .std = half, .norm_eps = 1e-5f, .sgu_eps = 1e-5f,
                               .model_specs = gmlp_vision_model_specs, .block_specs = gmlp_layer_block_specs},
    [GMLP_ARCH_GMIXER] = {.name = "gmixer", .what = "timm gMixer (GluMlp)", .timm_prefix = "gmixer_",
                          .mix = GMLP_MIX_MLP, .halves = 1, .norm = GMLP_NORM_LAYERNORM, .gate_act = GMLP_GATE_SILU,
                          .mlp_act = GMLP_GATE_IDENTITY, .block = gmlp_mixer_block, .infer = gmlp_timm_config_infer,
                          .stem = "stem.proj.weight", .head = "head", .mean = imagenet_mean, .std = imagenet_std,
                          .norm_eps = 1e-6f, .model_specs = gmlp_timm_model_specs,
                          .block_specs = gmlp_mixer_block_specs},
    [GMLP_ARCH_RESMLP] = {.name = "resmlp", .what = "timm ResMLP", .timm_prefix = "resmlp_", .mix = GMLP_MIX_LINEAR,
                          .norm = GMLP_NORM_AFFINE, .mlp_act = GMLP_GATE_GELU, .block = gmlp_resmlp_block,
                          .infer = gmlp_timm_config_infer, .stem = "stem.proj.weight", .head = "head",
                          .mean = imagenet_mean, .std = imagenet_std, .model_specs = gmlp_timm_model_specs,
                          .block_specs = gmlp_resmlp_block_specs},
};

const gmlp_arch_desc *gmlp_arch_get(int arch)
{
    return arch >= 0 && arch < GMLP_ARCHS ? &archs[arch] : NULL;
}

const gmlp_arch_desc *gmlp_arch_of(const gmlp_config *cfg)
{
    return &archs[cfg->arch];
}

int gmlp_arch_by_name(const char *name)
{
    for (int k = 0; k < GMLP_ARCHS; k++)
        if (!strcmp(name, archs[k].name))
            return k;
    return -1;
}
