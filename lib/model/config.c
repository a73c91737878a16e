/* From a parsed safetensors file (and a model folder's config.json) to a
 * validated gmlp_config: the architecture, then its sizes from tensor
 * shapes, then what config.json states checked against them, then the
 * preprocessing values and settings from __metadata__ or the defaults. */
#include <string.h>

#include "core/error.h"
#include "model/arch.h"
#include "model/config.h"

/* What config.json states about the network must be what the weights are. */
static gmlp_status check_hf(const gmlp_hf_config *hf, const gmlp_config *cfg, gmlp_error *err)
{
    if (!hf)
        return GMLP_OK;
    const gmlp_arch_desc *a = gmlp_arch_of(cfg);
    for (int i = 0; i < hf->n_sizes; i++) {
        const gmlp_hf_size *z = &hf->sizes[i];
        int have = z->classes ? cfg->num_classes : cfg->in_chans;
        if (z->value != have)
            return gmlp_fail(err, GMLP_ERR_FORMAT, "config.json %s says %lld %s, but the weights have %d (%s%s)",
                             z->key, z->value, z->classes ? "classes" : "input channels", have,
                             !z->classes ? a->stem : cfg->num_classes ? a->head : "no head",
                             z->classes && cfg->num_classes ? ".weight" : "");
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
