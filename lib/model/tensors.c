#include "tensors.h"

#include <string.h>

#include "model/model.h"

#define B(f) offsetof(gmlp_block_weights, f)
#define M(f) offsetof(gmlp_model, f)

static const gmlp_tensor_spec model_specs[] = {
    {"stem.proj.weight", "dCpq", M(stem_w)}, {"stem.proj.bias", "d", M(stem_b)},
    {"norm.weight", "d", M(norm_w)},         {"norm.bias", "d", M(norm_b)},
    {"head.weight", "kd", M(head_w)},        {"head.bias", "k", M(head_b)},
    {NULL, NULL, 0},
};

static const gmlp_tensor_spec gmlp_blocks[] = {
    {"norm.weight", "d", B(norm_w)},
    {"norm.bias", "d", B(norm_b)},
    {"mlp_channels.fc1.weight", "hd", B(fc1_w)},
    {"mlp_channels.fc1.bias", "h", B(fc1_b)},
    {"mlp_channels.gate.norm.weight", "g", B(sgu_norm_w)},
    {"mlp_channels.gate.norm.bias", "g", B(sgu_norm_b)},
    {"mlp_channels.gate.proj.weight", "NN", B(sgu_w)},
    {"mlp_channels.gate.proj.bias", "N", B(sgu_b)},
    {"mlp_channels.fc2.weight", "dg", B(fc2_w)},
    {"mlp_channels.fc2.bias", "d", B(fc2_b)},
    {NULL, NULL, 0},
};

static const gmlp_tensor_spec mixer_blocks[] = {
    {"norm1.weight", "d", B(norm1_w)},
    {"norm1.bias", "d", B(norm1_b)},
    {"mlp_tokens.fc1.weight", "tN", B(tok1_w)},
    {"mlp_tokens.fc1.bias", "t", B(tok1_b)},
    {"mlp_tokens.fc2.weight", "Nt", B(tok2_w)},
    {"mlp_tokens.fc2.bias", "N", B(tok2_b)},
    {"norm2.weight", "d", B(norm_w)},
    {"norm2.bias", "d", B(norm_b)},
    {"mlp_channels.fc1.weight", "hd", B(fc1_w)},
    {"mlp_channels.fc1.bias", "h", B(fc1_b)},
    {"mlp_channels.fc2.weight", "dh", B(fc2_w)},
    {"mlp_channels.fc2.bias", "d", B(fc2_b)},
    {NULL, NULL, 0},
};

const gmlp_tensor_spec *gmlp_model_specs(void)
{
    return model_specs;
}

int gmlp_spec_present(const gmlp_config *cfg, const gmlp_tensor_spec *spec)
{
    return cfg->num_classes > 0 || !strchr(spec->dims, 'k');
}

const gmlp_tensor_spec *gmlp_block_specs(const gmlp_config *cfg)
{
    return cfg->arch == GMLP_ARCH_MIXER ? mixer_blocks : gmlp_blocks;
}

long long gmlp_spec_dim(const gmlp_config *cfg, char s)
{
    switch (s) {
    case 'd': return cfg->dim;
    case 'h': return cfg->ffn_dim;
    case 'g': return cfg->ffn_dim / 2;
    case 'N': return cfg->seq_len;
    case 't': return cfg->token_dim;
    case 'C': return cfg->in_chans;
    case 'p': return cfg->patch_h;
    case 'q': return cfg->patch_w;
    case 'k': return cfg->num_classes;
    }
    return -1;
}
