/* Which architecture a file holds: the tensor names give it away, metadata
 * gmlp.arch may state it, and a model folder's config.json may name it; all
 * that are present must agree. */
#include <string.h>

#include "core/error.h"
#include "model/arch.h"
#include "model/config.h"

/* The architecture a tensor name gives away (and that name), or -1.  The
 * g-mlp-pytorch heads are second witnesses so that a model missing its
 * embedding still reads as what it is. */
static int sniff_arch(const gmlp_st_file *f, const char **witness)
{
    static const struct {
        const char *name;
        int arch;
        int glu_arch; /* the arch instead when blocks.0's token fc2 takes half of this fc1's outputs, or -1 */
    } keys[] = {
        {"blocks.0.mlp_tokens.fc1.weight", GMLP_ARCH_MIXER, GMLP_ARCH_GMIXER},
        {"blocks.0.mlp_channels.gate.proj.weight", GMLP_ARCH_GMLP, -1},
        {"blocks.0.linear_tokens.weight", GMLP_ARCH_RESMLP, -1},
        {"to_embed.weight", GMLP_ARCH_LM, -1},
        {"to_logits.1.weight", GMLP_ARCH_LM, -1},
        {"to_patch_embed.1.weight", GMLP_ARCH_GMLP_VISION, -1},
        {"to_logits.2.weight", GMLP_ARCH_GMLP_VISION, -1},
    };
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const gmlp_st_tensor *t = gmlp_st_find(f, keys[i].name);
        if (!t)
            continue;
        *witness = keys[i].name;
        if (keys[i].glu_arch < 0)
            return keys[i].arch;
        /* GluMlp's fc2 takes half of fc1's outputs, Mlp's all of them */
        const gmlp_st_tensor *fc2 = gmlp_st_find(f, "blocks.0.mlp_tokens.fc2.weight");
        int glu = t->ndim == 2 && fc2 && fc2->ndim == 2 && fc2->shape[1] * 2 == t->shape[0];
        return glu ? keys[i].glu_arch : keys[i].arch;
    }
    return -1;
}

gmlp_status gmlp_cfg_infer_arch(const gmlp_st_file *f, gmlp_config *cfg, gmlp_error *err)
{
    const char *arch = gmlp_st_meta(f, "gmlp.arch"), *witness = NULL;
    if (f->n_tensors == 0)
        return gmlp_fail(err, GMLP_ERR_FORMAT, "the file holds no tensors");
    int sniffed = sniff_arch(f, &witness);
    if (!arch && sniffed < 0 && gmlp_st_find(f, "patch_embed.proj.weight") && gmlp_st_find(f, "blocks.0.attn.weight"))
        return gmlp_fail(err, GMLP_ERR_FORMAT,
                         "a ResMLP with the names of Facebook's original code (patch_embed., blocks.N.attn, "
                         "gamma_1): tools/export_vision.py renames it to timm's, as timm does on loading");
    if (!arch && sniffed < 0)
        return gmlp_fail(err, GMLP_ERR_FORMAT,
                         "not a timm gMLP / MLP-Mixer / ResMLP or g-mlp-pytorch LM / gMLPVision state_dict: none of "
                         "'blocks.0.mlp_channels.gate.proj.weight', 'blocks.0.mlp_tokens.fc1.weight', "
                         "'blocks.0.linear_tokens.weight', "
                         "'to_embed.weight', 'to_logits.1.weight', 'to_patch_embed.1.weight' and "
                         "'to_logits.2.weight' is present");
    if (!arch) {
        cfg->arch = sniffed;
        return GMLP_OK;
    }
    int k = gmlp_arch_by_name(arch);
    if (k < 0) {
        const char *names[GMLP_ARCHS + 1] = {NULL};
        for (int i = 0; i < GMLP_ARCHS; i++)
            names[i] = gmlp_arch_get(i)->name;
        char list[256];
        return gmlp_fail(err, GMLP_ERR_UNSUPPORTED, "metadata gmlp.arch '%s' is not supported (this loader runs %s)",
                         arch, gmlp_cfg_choices(names, list, sizeof list));
    }
    /* otherwise the first tensor of the wrong family would be reported missing */
    if (sniffed >= 0 && sniffed != k)
        return gmlp_fail(err, GMLP_ERR_FORMAT,
                         "metadata gmlp.arch '%s' contradicts the tensors, which are a %s state_dict ('%s')", arch,
                         gmlp_arch_get(sniffed)->what, witness);
    cfg->arch = k;
    return GMLP_OK;
}

gmlp_status gmlp_cfg_check_hf_arch(const gmlp_hf_config *hf, const gmlp_config *cfg, gmlp_error *err)
{
    /* gmlp.arch's own names ("gmlp_vision" is no timm gMLP), then the prefixes
     * of timm's registry names say the family; other names are left to the tensors */
    const char *a = hf->architecture;
    int named = !a ? -1 : gmlp_arch_by_name(a);
    for (int k = 0; a && named < 0 && k < GMLP_ARCHS; k++) {
        const char *prefix = gmlp_arch_get(k)->timm_prefix;
        if (prefix && !strncmp(a, prefix, strlen(prefix)))
            named = k;
    }
    if (named >= 0 && named != cfg->arch)
        return gmlp_fail(err, GMLP_ERR_FORMAT, "config.json architecture '%s' is a %s, but the weights are a %s", a,
                         gmlp_arch_get(named)->what, gmlp_arch_of(cfg)->what);
    return GMLP_OK;
}
