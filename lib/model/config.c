/* From a parsed safetensors file to a validated gmlp_config: sizes come from
 * tensor shapes, the rest from __metadata__ or timm's defaults. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "model/model.h"
#include "model/tensors.h"

#define MAX_DIM (1 << 20) /* keeps every size product far from overflow */

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

/* Strict decimal: the whole string, finite. */
int gmlp_parse_float(const char *s, float *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v) || fabs(v) > 1e30)
        return 0;
    while (*end == ' ')
        end++;
    if (*end)
        return 0;
    *out = (float)v;
    return 1;
}

/* Comma-separated floats; returns the count, or -1 if malformed or > max. */
static int parse_floats(const char *s, float *out, int max)
{
    int n = 0;
    char buf[64];
    while (1) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        if (n == max || len == 0 || len >= sizeof buf)
            return -1;
        memcpy(buf, s, len);
        buf[len] = 0;
        if (!gmlp_parse_float(buf, &out[n++]))
            return -1;
        if (!comma)
            return n;
        s = comma + 1;
    }
}

/* "S" or "H,W" with positive integers into hw; 0 if malformed or too large. */
static int parse_size(const char *s, int hw[2])
{
    float v[2];
    int n = parse_floats(s, v, 2);
    for (int k = 0; k < n; k++)
        if (!(v[k] >= 1 && v[k] <= MAX_DIM && v[k] == floorf(v[k])))
            n = -1;
    if (n < 1)
        return 0;
    hw[0] = (int)v[0];
    hw[1] = (int)v[n - 1];
    return 1;
}

const char *const gmlp_preproc_keys[GMLP_PK_COUNT] = {
    [GMLP_PK_IMG_SIZE] = "img_size",   [GMLP_PK_MEAN] = "mean",
    [GMLP_PK_STD] = "std",             [GMLP_PK_CROP_PCT] = "crop_pct",
    [GMLP_PK_CROP_MODE] = "crop_mode", [GMLP_PK_INTERPOLATION] = "interpolation",
    [GMLP_PK_LABELS] = "labels",
};

/* What `value` means for preprocessing key `key` of a model whose sizes are
 * known: an image size must give the patch grid the weights were made for. */
gmlp_status gmlp_cfg_set_preproc(gmlp_config *cfg, gmlp_preproc_key key, const char *value, const char *what,
                                 gmlp_status st, gmlp_error *err)
{
    float v[3];
    int n, k, hw[2];
    switch (key) {
    case GMLP_PK_IMG_SIZE:
        if (!parse_size(value, hw))
            return gmlp_fail(err, st, "%s '%s' is not \"S\" or \"H,W\" with positive integers", what, value);
        if (hw[0] % cfg->patch_h || hw[1] % cfg->patch_w)
            return gmlp_fail(err, st, "%s %dx%d is not a multiple of the %dx%d patch", what, hw[0], hw[1],
                             cfg->patch_h, cfg->patch_w);
        long long ntok = (long long)(hw[0] / cfg->patch_h) * (hw[1] / cfg->patch_w);
        if (ntok != cfg->seq_len)
            return gmlp_fail(err, st,
                             "%s: image %dx%d with %dx%d patches gives %lld tokens, but the spatial weights are for "
                             "%d tokens", what, hw[0], hw[1], cfg->patch_h, cfg->patch_w, ntok, cfg->seq_len);
        cfg->img_h = hw[0];
        cfg->img_w = hw[1];
        return GMLP_OK;
    case GMLP_PK_MEAN:
    case GMLP_PK_STD:
        n = parse_floats(value, v, 3);
        if (n != cfg->in_chans)
            return gmlp_fail(err, st, "%s '%s' must hold %d comma-separated decimal(s), one per input channel", what,
                             value, cfg->in_chans);
        for (k = 0; k < n; k++)
            if (key == GMLP_PK_STD && !(v[k] > 0))
                return gmlp_fail(err, st, "%s '%s' must be positive", what, value);
        memcpy(key == GMLP_PK_MEAN ? cfg->mean : cfg->std, v, (size_t)n * sizeof *v);
        return GMLP_OK;
    case GMLP_PK_CROP_PCT:
        /* above 1, torchvision's CenterCrop pads the resized image */
        if (!(gmlp_parse_float(value, &v[0]) && v[0] > 0 && v[0] <= 4))
            return gmlp_fail(err, st, "%s '%s' must be a decimal in (0, 4]", what, value);
        cfg->crop_pct = v[0];
        return GMLP_OK;
    case GMLP_PK_CROP_MODE: {
        static const char *const names[] = {"center", "squash", "border", NULL};
        if ((k = gmlp_cfg_choice(value, names)) < 0)
            return gmlp_fail(err, st, "%s '%s' is not center, squash or border", what, value);
        cfg->crop_mode = k;
        return GMLP_OK;
    }
    case GMLP_PK_INTERPOLATION: {
        static const char *const names[] = {"bicubic", "bilinear", "nearest", "box", "hamming", "lanczos", NULL};
        if ((k = gmlp_cfg_choice(value, names)) < 0)
            return gmlp_fail(err, st, "%s '%s' is not bicubic, bilinear, nearest, box, hamming or lanczos", what,
                             value);
        cfg->interpolation = k;
        return GMLP_OK;
    }
    default:
        return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT, "%s: not a preprocessing value", what);
    }
}

/* gmlp.KEY of the file, if present, over the default already in cfg. */
static gmlp_status metadata_preproc(const gmlp_st_file *f, gmlp_config *cfg, gmlp_preproc_key key, gmlp_error *err)
{
    char name[64], what[80];
    snprintf(name, sizeof name, "gmlp.%s", gmlp_preproc_keys[key]);
    const char *s = gmlp_st_meta(f, name);
    snprintf(what, sizeof what, "metadata %s", name);
    return s ? gmlp_cfg_set_preproc(cfg, key, s, what, GMLP_ERR_FORMAT, err) : GMLP_OK;
}

/* config.json's value of key, if present, over what cfg holds (validated
 * even where the metadata will override it). */
static gmlp_status hf_preproc(const gmlp_hf_config *hf, gmlp_config *cfg, gmlp_preproc_key key, gmlp_error *err)
{
    char what[80];
    if (!hf || !hf->value[key])
        return GMLP_OK;
    snprintf(what, sizeof what, "config.json %s", hf->key[key]);
    return gmlp_cfg_set_preproc(cfg, key, hf->value[key], what, GMLP_ERR_FORMAT, err);
}

/* Defaults, then config.json, then the gmlp.* metadata: each overrides the one before. */
static gmlp_status parse_metadata(const gmlp_st_file *f, const gmlp_hf_config *hf, gmlp_config *cfg,
                                  gmlp_error *err)
{
    /* timm's gMLP and Google Mixer cfgs; its gmixer_* and resmlp_* cfgs are ImageNet's */
    static const float half[3] = {0.5f, 0.5f, 0.5f}, imagenet_mean[3] = {0.485f, 0.456f, 0.406f},
                       imagenet_std[3] = {0.229f, 0.224f, 0.225f};
    const int vision = cfg->arch == GMLP_ARCH_GMLP_VISION, resmlp = cfg->arch == GMLP_ARCH_RESMLP;
    const int imagenet = resmlp || cfg->arch == GMLP_ARCH_GMIXER;
    memcpy(cfg->mean, imagenet ? imagenet_mean : half, sizeof cfg->mean);
    memcpy(cfg->std, imagenet ? imagenet_std : half, sizeof cfg->std);
    cfg->crop_pct = 0.875f;
    cfg->crop_mode = GMLP_CROP_CENTER;
    cfg->interpolation = GMLP_INTERP_BICUBIC;
    /* timm: 1e-6 in the blocks, the SGU's 1e-5; g-mlp-pytorch: nn.LayerNorm's 1e-5 throughout;
     * ResMLP has no LayerNorm */
    cfg->norm_eps = resmlp ? 0.0f : vision ? 1e-5f : 1e-6f;
    cfg->sgu_eps = gmlp_arch_mixer(cfg) || resmlp ? 0.0f : 1e-5f;
    const gmlp_preproc_key keys[] = {GMLP_PK_MEAN, GMLP_PK_STD, GMLP_PK_CROP_PCT, GMLP_PK_CROP_MODE,
                                     GMLP_PK_INTERPOLATION};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        GMLP_TRY(hf_preproc(hf, cfg, keys[i], err));
        GMLP_TRY(metadata_preproc(f, cfg, keys[i], err));
    }
    return gmlp_cfg_parse_eps(f, cfg, err);
}

int gmlp_cfg_choice(const char *s, const char *const *names)
{
    for (int k = 0; names[k]; k++)
        if (!strcmp(s, names[k]))
            return k;
    return -1;
}

gmlp_status gmlp_cfg_parse_eps(const gmlp_st_file *f, gmlp_config *cfg, gmlp_error *err)
{
    static const char *const eps_keys[] = {"gmlp.norm_eps", "gmlp.sgu_eps"};
    float *eps[] = {&cfg->norm_eps, &cfg->sgu_eps};
    const char *s;
    for (int i = 0; i < 2; i++)
        if ((s = gmlp_st_meta(f, eps_keys[i])) && !(gmlp_parse_float(s, eps[i]) && *eps[i] > 0 && *eps[i] < 1))
            return gmlp_fail(err, GMLP_ERR_FORMAT, "metadata %s '%s' must be a decimal in (0, 1)",
                             eps_keys[i], s);
    return GMLP_OK;
}

/* Indexed by GMLP_ARCH_*: the gmlp.arch value (also timm's name prefix for
 * its families) and what it is, for messages. */
static const char *const arch_names[] = {"gmlp", "mixer", "gmlp_lm", "gmlp_vision", "gmixer", "resmlp", NULL};
static const char *const arch_descs[] = {"timm gMLP",           "timm MLP-Mixer", "g-mlp-pytorch LM", "g-mlp-pytorch gMLPVision",
                                         "timm gMixer (GluMlp)", "timm ResMLP"};

const char *gmlp_arch_name(int arch)
{
    return arch >= 0 && arch < (int)(sizeof arch_descs / sizeof *arch_descs) ? arch_names[arch] : "?";
}

/* The architecture a tensor name gives away (and that name), or -1.  The
 * g-mlp-pytorch heads are second witnesses so that a model missing its
 * embedding still reads as what it is. */
static int sniff_arch(const gmlp_st_file *f, const char **witness)
{
    static const struct {
        const char *name;
        int arch;
    } keys[] = {
        {"blocks.0.mlp_tokens.fc1.weight", GMLP_ARCH_MIXER},
        {"blocks.0.mlp_channels.gate.proj.weight", GMLP_ARCH_GMLP},
        {"blocks.0.linear_tokens.weight", GMLP_ARCH_RESMLP},
        {"to_embed.weight", GMLP_ARCH_LM},
        {"to_logits.1.weight", GMLP_ARCH_LM},
        {"to_patch_embed.1.weight", GMLP_ARCH_GMLP_VISION},
        {"to_logits.2.weight", GMLP_ARCH_GMLP_VISION},
    };
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const gmlp_st_tensor *t = gmlp_st_find(f, keys[i].name);
        if (!t)
            continue;
        *witness = keys[i].name;
        if (keys[i].arch != GMLP_ARCH_MIXER)
            return keys[i].arch;
        /* GluMlp's fc2 takes half of fc1's outputs, Mlp's all of them */
        const gmlp_st_tensor *fc2 = gmlp_st_find(f, "blocks.0.mlp_tokens.fc2.weight");
        int glu = t->ndim == 2 && fc2 && fc2->ndim == 2 && fc2->shape[1] * 2 == t->shape[0];
        return glu ? GMLP_ARCH_GMIXER : GMLP_ARCH_MIXER;
    }
    return -1;
}

static gmlp_status infer_arch(const gmlp_st_file *f, gmlp_config *cfg, gmlp_error *err)
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
    int k = gmlp_cfg_choice(arch, arch_names);
    if (k < 0)
        return gmlp_fail(err, GMLP_ERR_UNSUPPORTED,
                         "metadata gmlp.arch '%s' is not supported (this loader runs 'gmlp', 'mixer', 'gmixer', "
                         "'resmlp', 'gmlp_lm' and 'gmlp_vision')",
                         arch);
    /* otherwise the first tensor of the wrong family would be reported missing */
    if (sniffed >= 0 && sniffed != k)
        return gmlp_fail(err, GMLP_ERR_FORMAT,
                         "metadata gmlp.arch '%s' contradicts the tensors, which are a %s state_dict ('%s')", arch,
                         arch_descs[sniffed], witness);
    cfg->arch = k;
    return GMLP_OK;
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
        if (*end == '.' && l < MAX_DIM && l + 1 > depth)
            depth = l + 1;
    }
    return (int)depth;
}

gmlp_status gmlp_cfg_check_dim(long long v, const char *what, const char *tensor, gmlp_error *err)
{
    if (v < 1 || v > MAX_DIM)
        return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s' gives %s = %lld, outside [1, %d]", tensor,
                         what, v, MAX_DIM);
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

static gmlp_status infer_sizes(const gmlp_st_file *f, gmlp_config *cfg, gmlp_error *err)
{
    const gmlp_st_tensor *t;
    if (!(t = gmlp_cfg_need(f, cfg, -1, "stem.proj.weight", 4, err)))
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
    if (cfg->arch == GMLP_ARCH_RESMLP) {
        if (!(t = gmlp_cfg_need(f, cfg, 0, "linear_tokens.weight", 2, err)))
            return GMLP_ERR_FORMAT;
        GMLP_TRY(gmlp_cfg_check_dim(t->shape[0], "the token count", t->name, err));
        cfg->seq_len = (int)t->shape[0];
    } else if (cfg->arch == GMLP_ARCH_GMLP) {
        if (cfg->ffn_dim % 2)
            return gmlp_fail(err, GMLP_ERR_FORMAT, "tensor '%s': ffn_dim %d is odd, the SGU splits it in two",
                             t->name, cfg->ffn_dim);
        if (!(t = gmlp_cfg_need(f, cfg, 0, "mlp_channels.gate.proj.weight", 2, err)))
            return GMLP_ERR_FORMAT;
        GMLP_TRY(gmlp_cfg_check_dim(t->shape[0], "the token count", t->name, err));
        cfg->seq_len = (int)t->shape[0];
    } else {
        if (!(t = gmlp_cfg_need(f, cfg, 0, "mlp_tokens.fc1.weight", 2, err)))
            return GMLP_ERR_FORMAT;
        GMLP_TRY(gmlp_cfg_check_dim(t->shape[0], "token_dim", t->name, err));
        GMLP_TRY(gmlp_cfg_check_dim(t->shape[1], "the token count", t->name, err));
        cfg->token_dim = (int)t->shape[0];
        cfg->seq_len = (int)t->shape[1];
        if (cfg->arch == GMLP_ARCH_GMIXER) {
            if (cfg->token_dim % 2 || cfg->ffn_dim % 2)
                return gmlp_fail(err, GMLP_ERR_FORMAT, "blocks.0: GluMlp widths %d and %d must be even",
                                 cfg->token_dim, cfg->ffn_dim);
            cfg->gate_act = GMLP_GATE_SILU; /* timm's gmixer: GluMlp with nn.SiLU */
        }
    }
    return infer_head(f, cfg, "head", err);
}

/* gMLPVision's patch embedding (a Linear on patches flattened as (c p1 p2),
 * the timm stem's weight reshaped) and its layers.  The patch: metadata
 * gmlp.patch_size, else the square one that, with 1-3 channels, makes the
 * embedding's inputs: at most one does, as c p^2 = c' q^2 has no other
 * solution for c, c' in 1..3. */
static gmlp_status infer_vision_sizes(const gmlp_st_file *f, gmlp_config *cfg, gmlp_error *err)
{
    const gmlp_st_tensor *t;
    if (!(t = gmlp_cfg_need(f, cfg, -1, "to_patch_embed.1.weight", 2, err)))
        return GMLP_ERR_FORMAT;
    GMLP_TRY(gmlp_cfg_check_dim(t->shape[0], "dim", t->name, err));
    GMLP_TRY(gmlp_cfg_check_dim(t->shape[1], "channels x patch area", t->name, err));
    cfg->dim = (int)t->shape[0];
    const long long k = t->shape[1];
    const char *s = gmlp_st_meta(f, "gmlp.patch_size");
    int hw[2];
    if (s) {
        if (!parse_size(s, hw))
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
    return infer_head(f, cfg, "to_logits.2", err);
}

/* Image size: metadata, else config.json, else the square whose patch grid has seq_len tokens. */
static gmlp_status infer_image(const gmlp_st_file *f, const gmlp_hf_config *hf, gmlp_config *cfg, gmlp_error *err)
{
    GMLP_TRY(hf_preproc(hf, cfg, GMLP_PK_IMG_SIZE, err));
    if (gmlp_st_meta(f, "gmlp.img_size"))
        return metadata_preproc(f, cfg, GMLP_PK_IMG_SIZE, err);
    if (hf && hf->value[GMLP_PK_IMG_SIZE])
        return GMLP_OK;
    int side = (int)lround(sqrt((double)cfg->seq_len));
    if (side * side != cfg->seq_len)
        return gmlp_fail(err, GMLP_ERR_FORMAT,
                         "token count %d is not a square: a non-square model needs metadata gmlp.img_size",
                         cfg->seq_len);
    cfg->img_h = side * cfg->patch_h;
    cfg->img_w = side * cfg->patch_w;
    return GMLP_OK;
}

int gmlp_cfg_count_labels(const char *s)
{
    int n = *s ? 1 : 0;
    for (const char *p = s; *p; p++)
        n += *p == '\n' && p[1]; /* a trailing newline adds no label */
    return n;
}

static gmlp_status check_labels(const gmlp_st_file *f, const gmlp_hf_config *hf, const gmlp_config *cfg,
                                gmlp_error *err)
{
    const char *s = gmlp_st_meta(f, "gmlp.labels");
    int n = s ? gmlp_cfg_count_labels(s) : cfg->num_classes;
    if (n != cfg->num_classes)
        return gmlp_fail(err, GMLP_ERR_FORMAT, "metadata gmlp.labels has %d names for %d classes", n,
                         cfg->num_classes);
    s = hf ? hf->value[GMLP_PK_LABELS] : NULL;
    n = s ? gmlp_cfg_count_labels(s) : cfg->num_classes;
    if (n != cfg->num_classes)
        return gmlp_fail(err, GMLP_ERR_FORMAT, "config.json %s has %d names, but the weights have %d classes%s",
                         hf->key[GMLP_PK_LABELS], n, cfg->num_classes, cfg->num_classes ? "" : " (no head)");
    return GMLP_OK;
}

/* What config.json states about the network must be what the weights are. */
static gmlp_status check_hf(const gmlp_hf_config *hf, const gmlp_config *cfg, gmlp_error *err)
{
    if (!hf)
        return GMLP_OK;
    const int vision = cfg->arch == GMLP_ARCH_GMLP_VISION;
    for (int i = 0; i < hf->n_sizes; i++) {
        const gmlp_hf_size *z = &hf->sizes[i];
        int have = z->classes ? cfg->num_classes : cfg->in_chans;
        if (z->value != have)
            return gmlp_fail(err, GMLP_ERR_FORMAT, "config.json %s says %lld %s, but the weights have %d (%s)",
                             z->key, z->value, z->classes ? "classes" : "input channels", have,
                             z->classes ? (cfg->num_classes ? (vision ? "to_logits.2.weight" : "head.weight") : "no head")
                                        : (vision ? "to_patch_embed.1.weight" : "stem.proj.weight"));
    }
    /* gmlp.arch's own names ("gmlp_vision" is no timm gMLP), then timm's
     * registry names NAME_... say the family; other names are left to the tensors */
    const char *a = hf->architecture;
    int named = !a ? -1 : gmlp_cfg_choice(a, arch_names);
    static const int timm_families[] = {GMLP_ARCH_GMLP, GMLP_ARCH_MIXER, GMLP_ARCH_GMIXER, GMLP_ARCH_RESMLP};
    for (size_t i = 0; a && named < 0 && i < sizeof timm_families / sizeof *timm_families; i++) {
        size_t len = strlen(arch_names[timm_families[i]]);
        if (!strncmp(a, arch_names[timm_families[i]], len) && a[len] == '_')
            named = timm_families[i];
    }
    if (named >= 0 && named != cfg->arch)
        return gmlp_fail(err, GMLP_ERR_FORMAT, "config.json architecture '%s' is a %s, but the weights are a %s", a,
                         arch_descs[named], arch_descs[cfg->arch]);
    return GMLP_OK;
}

gmlp_status gmlp_config_infer(const gmlp_st_file *f, const gmlp_hf_config *hf, gmlp_config *cfg, gmlp_error *err)
{
    memset(cfg, 0, sizeof *cfg);
    GMLP_TRY(infer_arch(f, cfg, err));
    if (cfg->arch == GMLP_ARCH_LM && (gmlp_hf_config_has_preproc(hf) || (hf && hf->n_sizes)))
        return gmlp_fail(err, GMLP_ERR_FORMAT, "config.json describes an image model, but the weights are a %s",
                         arch_descs[GMLP_ARCH_LM]);
    if (cfg->arch == GMLP_ARCH_LM)
        return gmlp_lm_config_infer(f, cfg, err);
    cfg->heads = 1;
    GMLP_TRY(cfg->arch == GMLP_ARCH_GMLP_VISION ? infer_vision_sizes(f, cfg, err) : infer_sizes(f, cfg, err));
    GMLP_TRY(check_hf(hf, cfg, err));
    GMLP_TRY(infer_image(f, hf, cfg, err));
    GMLP_TRY(parse_metadata(f, hf, cfg, err));
    return check_labels(f, hf, cfg, err);
}

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
            const char *prefix = gmlp_arch_layers(cfg) ? "layers." : "blocks.";
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
            if (!known && gmlp_arch_layers(cfg))
                return gmlp_fail(err, GMLP_ERR_FORMAT,
                                 "unexpected tensor '%s' for a %s laid out like layers.0 (%s, %s sgu.weight)", n,
                                 arch_descs[cfg->arch], cfg->attn_dim ? "tiny attention" : "no tiny attention",
                                 cfg->circulant ? "circulant" : "dense");
            if (!known)
                return gmlp_fail(err, GMLP_ERR_FORMAT, "unexpected tensor '%s' for a %s model", n,
                                 arch_descs[cfg->arch]);
        }
    }
    return GMLP_OK;
}
