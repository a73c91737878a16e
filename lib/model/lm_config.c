/* gmlp_config for a g-mlp-pytorch gMLP language model: sizes from tensor
 * shapes, what the weights cannot tell (causal, gate activation, token
 * shift) from __metadata__, with g-mlp-pytorch's defaults; and the layers'
 * sizes, which the LM and gMLPVision share. */
#include <string.h>

#include "core/act.h"
#include "model/config.h"
#include "model/model.h"
#include "model/tensors.h"

#define BLOCK "$" /* the gMLPBlock (gmlp_tensor_name) */

static gmlp_status parse_bool(const gmlp_st_file *f, const char *key, int *out, gmlp_error *err)
{
    const char *s = gmlp_st_meta(f, key);
    if (!s)
        return GMLP_OK;
    if (!strcmp(s, "true") || !strcmp(s, "false")) {
        *out = s[0] == 't';
        return GMLP_OK;
    }
    return gmlp_fail(err, GMLP_ERR_FORMAT, "metadata %s '%s' must be \"true\" or \"false\"", key, s);
}

/* A count in metadata: decimal digits and nothing else (no sign, no spaces), at most max. */
static gmlp_status parse_count(const gmlp_st_file *f, const char *key, long max, int *out, gmlp_error *err)
{
    const char *s = gmlp_st_meta(f, key), *end;
    long v;
    if (!s)
        return GMLP_OK;
    if (!(end = gmlp_parse_digits(s, max, &v)) || *end)
        return gmlp_fail(err, GMLP_ERR_FORMAT, "metadata %s '%s' must be an integer from 0 to %ld", key, s, max);
    *out = (int)v;
    return GMLP_OK;
}

static gmlp_status parse_settings(const gmlp_st_file *f, gmlp_config *cfg, gmlp_error *err)
{
    GMLP_TRY(gmlp_cfg_parse_eps(f, cfg, err));
    GMLP_TRY(parse_bool(f, "gmlp.causal", &cfg->causal, err));
    const char *s = gmlp_st_meta(f, "gmlp.act");
    if (s) {
        int k = gmlp_cfg_choice(s, gmlp_act_names);
        char list[128];
        if (k < 0)
            return gmlp_fail(err, GMLP_ERR_FORMAT, "metadata gmlp.act '%s' is not %s", s,
                             gmlp_cfg_choices(gmlp_act_names, list, sizeof list));
        cfg->gate_act = k;
    }
    GMLP_TRY(parse_count(f, "gmlp.shift_tokens", 1000000, &cfg->shift_tokens, err));
    /* a front end reading bytes would feed ids the embedding does not have */
    if ((s = gmlp_st_meta(f, "gmlp.tokenizer")) && !strcmp(s, "bytes") && cfg->vocab_size < 256)
        return gmlp_fail(err, GMLP_ERR_FORMAT,
                         "metadata gmlp.tokenizer 'bytes' needs a vocabulary of at least 256 tokens (one per byte); "
                         "to_embed.weight has %d",
                         cfg->vocab_size);
    /* PreShiftTokens splits the channels into one segment per shift */
    long segments = cfg->causal ? cfg->shift_tokens + 1L : 2L * cfg->shift_tokens + 1;
    if (cfg->shift_tokens && segments > cfg->dim)
        return gmlp_fail(err, GMLP_ERR_FORMAT,
                         "metadata gmlp.shift_tokens %d needs %ld channel segments, more than dim %d",
                         cfg->shift_tokens, segments, cfg->dim);
    return GMLP_OK;
}

gmlp_status gmlp_layers_config_infer(const gmlp_st_file *f, gmlp_config *cfg, gmlp_error *err)
{
    const gmlp_st_tensor *t;
    cfg->depth = gmlp_cfg_count_blocks(f, "layers.");
    if (cfg->depth == 0)
        return gmlp_fail(err, GMLP_ERR_FORMAT, "no 'layers.0.*' tensors: the model has no layers");
    if (!(t = gmlp_cfg_need(f, cfg, 0, BLOCK "proj_in.0.weight", 2, err)))
        return GMLP_ERR_FORMAT;
    GMLP_TRY(gmlp_cfg_check_dim(t->shape[0], "ffn_dim", t->name, err));
    cfg->ffn_dim = (int)t->shape[0];
    if (cfg->ffn_dim % 2)
        return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s': ffn_dim %d is odd, the SGU splits it in two",
                         t->name, cfg->ffn_dim);
    /* heads and seq_len from sgu.weight, [heads, seq_len, seq_len] or circulant [heads, seq_len] (its rank
     * against the form is checked with every shape): a wrong sgu.bias is then named as such */
    char name[256];
    gmlp_tensor_name(cfg, name, sizeof name, 0, BLOCK "sgu.weight");
    const gmlp_st_tensor *w = gmlp_st_find(f, name);
    if (!(t = gmlp_cfg_need(f, cfg, 0, BLOCK "sgu.weight", w && w->ndim == 2 ? 2 : 3, err)))
        return GMLP_ERR_FORMAT;
    GMLP_TRY(gmlp_cfg_check_dim(t->shape[0], "heads", t->name, err));
    GMLP_TRY(gmlp_cfg_check_dim(t->shape[1], "seq_len", t->name, err));
    cfg->heads = (int)t->shape[0];
    cfg->seq_len = (int)t->shape[1];
    if ((cfg->ffn_dim / 2) % cfg->heads)
        return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s': %d heads do not divide the gate width %d",
                         t->name, cfg->heads, cfg->ffn_dim / 2);
    if ((size_t)cfg->seq_len * (size_t)cfg->seq_len * (size_t)cfg->heads > (size_t)1 << 32)
        return gmlp_fail(err, GMLP_ERR_UNSUPPORTED, "tensor '%s': %d heads x seq_len %d squared is too large",
                         t->name, cfg->heads, cfg->seq_len);
    gmlp_tensor_name(cfg, name, sizeof name, 0, BLOCK "sgu.circulant_pos_x");
    cfg->circulant = gmlp_st_find(f, name) != NULL;
    gmlp_tensor_name(cfg, name, sizeof name, 0, BLOCK "attn.to_qkv.weight");
    if (gmlp_st_find(f, name)) {
        if (!(t = gmlp_cfg_need(f, cfg, 0, BLOCK "attn.to_qkv.weight", 2, err)))
            return GMLP_ERR_FORMAT;
        GMLP_TRY(gmlp_cfg_check_dim(t->shape[0], "3 x attn_dim", t->name, err));
        if (t->shape[0] % 3)
            return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s': %lld rows are not 3 x attn_dim", t->name,
                             (long long)t->shape[0]);
        cfg->attn_dim = (int)(t->shape[0] / 3);
    }
    return GMLP_OK;
}

gmlp_status gmlp_lm_config_infer(const gmlp_st_file *f, gmlp_config *cfg, gmlp_error *err)
{
    const gmlp_st_tensor *t;
    if (!(t = gmlp_cfg_need(f, cfg, -1, "to_embed.weight", 2, err)))
        return GMLP_ERR_FORMAT;
    GMLP_TRY(gmlp_cfg_check_dim(t->shape[0], "vocab_size", t->name, err));
    GMLP_TRY(gmlp_cfg_check_dim(t->shape[1], "dim", t->name, err));
    cfg->vocab_size = (int)t->shape[0];
    cfg->dim = (int)t->shape[1];
    GMLP_TRY(gmlp_layers_config_infer(f, cfg, err));
    return parse_settings(f, cfg, err);
}
