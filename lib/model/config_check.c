/* A file's tensors against its inferred config: each one the layout
 * (tensors.c) implies, with that shape and a float dtype, and no other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "model/arch.h"
#include "model/model.h"
#include "model/tensors.h"

static gmlp_status check_one(const gmlp_st_file *f, const gmlp_config *cfg, int l, const gmlp_tensor_spec *spec,
                             size_t *count, gmlp_error *err)
{
    char name[256];
    gmlp_tensor_name(cfg, name, sizeof name, l, spec->leaf);
    const gmlp_st_tensor *t = gmlp_st_find(f, name);
    if (!t)
        return gmlp_fail(err, GMLP_ERR_FORMAT, "missing tensor '%s'", name);
    if (t->dtype != GMLP_DT_F32 && t->dtype != GMLP_DT_F16 && t->dtype != GMLP_DT_BF16)
        return gmlp_fail(err, GMLP_ERR_UNSUPPORTED,
                         "tensor '%s' has dtype %s; only F32, F16 and BF16 weights are supported", name,
                         gmlp_dtype_name(t->dtype));
    int ndim = (int)strlen(spec->dims), ok = t->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++)
        ok = t->shape[i] == gmlp_spec_dim(cfg, spec->dims[i]);
    if (!ok) {
        char got[128] = "", want[128] = "";
        for (int i = 0; i < t->ndim; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? ", " : "", (long long)t->shape[i]);
        for (int i = 0; i < ndim; i++)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", i ? ", " : "",
                     gmlp_spec_dim(cfg, spec->dims[i]));
        /* the rank of sgu.weight hangs on another tensor: name it */
        const char *why = t->ndim == ndim                 ? ""
                          : spec->cond == GMLP_IF_CIRCULANT ? " (circulant: layers.0 has sgu.circulant_pos_x)"
                          : spec->cond == GMLP_IF_DENSE     ? " (dense: layers.0 has no sgu.circulant_pos_x)"
                                                            : "";
        return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s' has shape [%s], expected [%s]%s", name, got, want,
                         why);
    }
    (*count)++;
    return GMLP_OK;
}

gmlp_status gmlp_config_check_tensors(const gmlp_st_file *f, const gmlp_config *cfg, gmlp_error *err)
{
    const gmlp_arch_desc *a = gmlp_arch_of(cfg);
    size_t count = 0;
    for (const gmlp_tensor_spec *s = gmlp_model_specs(cfg); s->leaf; s++)
        if (gmlp_spec_present(cfg, s))
            GMLP_TRY(check_one(f, cfg, -1, s, &count, err));
    for (int l = 0; l < cfg->depth; l++)
        for (const gmlp_tensor_spec *s = gmlp_block_specs(cfg); s->leaf; s++)
            if (gmlp_spec_present(cfg, s))
                GMLP_TRY(check_one(f, cfg, l, s, &count, err));
    if (count != f->n_tensors) {
        /* name the first tensor no spec claimed */
        for (size_t i = 0; i < f->n_tensors; i++) {
            const char *n = f->tensors[i].name;
            int known = 0;
            for (const gmlp_tensor_spec *s = gmlp_model_specs(cfg); s->leaf && !known; s++)
                known = gmlp_spec_present(cfg, s) && !strcmp(n, s->leaf);
            const char *prefix = a->layers ? "layers." : "blocks.";
            size_t plen = strlen(prefix);
            if (!strncmp(n, prefix, plen)) {
                char *end;
                long l = strtol(n + plen, &end, 10);
                for (const gmlp_tensor_spec *s = gmlp_block_specs(cfg); s->leaf && !known && *end == '.'; s++) {
                    char name[256];
                    gmlp_tensor_name(cfg, name, sizeof name, (int)l, s->leaf);
                    known = l >= 0 && l < cfg->depth && gmlp_spec_present(cfg, s) && !strcmp(n, name);
                }
            }
            /* g-mlp-pytorch's per-layer options come from layers.0 alone: say what it chose */
            if (!known && a->layers)
                return gmlp_fail(err, GMLP_ERR_FORMAT,
                                 "unexpected tensor '%s' for a %s laid out like layers.0 (%s, %s sgu.weight)", n,
                                 a->what, cfg->attn_dim ? "tiny attention" : "no tiny attention",
                                 cfg->circulant ? "circulant" : "dense");
            if (!known)
                return gmlp_fail(err, GMLP_ERR_FORMAT, "unexpected tensor '%s' for a %s model", n,
                                 a->what);
        }
    }
    return GMLP_OK;
}
