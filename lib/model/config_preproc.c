/* An image model's preprocessing values (gmlp_preproc_key): what each
 * string means, the architecture's defaults, config.json's values and the
 * gmlp.* metadata's over them; the image size; the label counts. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "model/arch.h"
#include "model/config.h"
#include "preprocess/preprocess.h"

const char *const gmlp_preproc_keys[GMLP_PK_COUNT] = {
    [GMLP_PK_IMG_SIZE] = "img_size",   [GMLP_PK_MEAN] = "mean",
    [GMLP_PK_STD] = "std",             [GMLP_PK_CROP_PCT] = "crop_pct",
    [GMLP_PK_CROP_MODE] = "crop_mode", [GMLP_PK_INTERPOLATION] = "interpolation",
    [GMLP_PK_LABELS] = "labels",
};

/* mean or std (key) for in_chans channels as timm 1.0.31's
 * resolve_input_data_config takes them: one value applies to every channel,
 * in_chans values one each; any other count is an error for the user's, and
 * for a pretrained cfg's (config.json, the architecture's default) their
 * average, as timm does with a warning (gmlp_model_create logs it).  The
 * gmlp.mean/std metadata keeps its rule: one value per channel. */
static gmlp_status set_norm(gmlp_config *cfg, gmlp_preproc_key key, const char *value, const char *what,
                            gmlp_source src, gmlp_error *err)
{
    const gmlp_status st = src == GMLP_SOURCE_USER ? GMLP_ERR_INVALID_ARGUMENT : GMLP_ERR_FORMAT;
    const int c = cfg->in_chans;
    double v[GMLP_MAX_NORM_VALUES], sum = 0;
    int n = gmlp_parse_doubles(value, v, GMLP_MAX_NORM_VALUES);
    if (n < 1)
        return gmlp_fail(err, st, "%s '%s' is not 1 to %d comma-separated decimals", what, value,
                         GMLP_MAX_NORM_VALUES);
    if (src == GMLP_SOURCE_METADATA && n != c)
        return gmlp_fail(err, st, "%s '%s' must hold %d comma-separated decimal(s), one per input channel", what,
                         value, c);
    if (src == GMLP_SOURCE_USER && n != 1 && n != c)
        return gmlp_fail(err, st, "%s '%s' must hold one value or %d (one per input channel)", what, value, c);
    for (int k = 0; k < n; k++) {
        if (key == GMLP_PK_STD && !(v[k] > 0))
            return gmlp_fail(err, st, "%s '%s' must be positive", what, value);
        sum += v[k]; /* in order, as Python's sum() */
    }
    float *dst = key == GMLP_PK_MEAN ? cfg->mean : cfg->std;
    for (int k = 0; k < c; k++)
        dst[k] = (float)(n == c ? v[k] : n == 1 ? v[0] : sum / n);
    return GMLP_OK;
}

int gmlp_cfg_norm_averaged(const gmlp_config *cfg, const char *value)
{
    double v[GMLP_MAX_NORM_VALUES];
    int n = gmlp_parse_doubles(value, v, GMLP_MAX_NORM_VALUES);
    return n > 1 && n != cfg->in_chans;
}

/* What `value` means for preprocessing key `key` of a model whose sizes are
 * known: an image size must give the patch grid the weights were made for. */
gmlp_status gmlp_cfg_set_preproc(gmlp_config *cfg, gmlp_preproc_key key, const char *value, const char *what,
                                 gmlp_source src, gmlp_error *err)
{
    const gmlp_status st = src == GMLP_SOURCE_USER ? GMLP_ERR_INVALID_ARGUMENT : GMLP_ERR_FORMAT;
    double d;
    int k, hw[2];
    switch (key) {
    case GMLP_PK_IMG_SIZE:
        if (!gmlp_parse_size(value, hw))
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
        return set_norm(cfg, key, value, what, src, err);
    case GMLP_PK_CROP_PCT:
        /* above 1, torchvision's CenterCrop pads the resized image; the range holds for the
         * double Python reads, not its float */
        if (!(gmlp_parse_double(value, &d) && d > 0 && d <= 4))
            return gmlp_fail(err, st, "%s '%s' must be a decimal in (0, 4]", what, value);
        cfg->crop_pct = (float)d;
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

gmlp_status gmlp_cfg_check_resize(const gmlp_config *cfg, gmlp_status st, gmlp_error *err)
{
    int sh, sw;
    if (!gmlp_preprocess_resize_size(cfg, &sh, &sw))
        return gmlp_fail(err, st, "image size %dx%d with crop_pct %g: floor(img_size / crop_pct) must be in [1, 65536]",
                         cfg->img_h, cfg->img_w, cfg->crop_pct);
    return GMLP_OK;
}

/* gmlp.KEY of the file, if present, over the default already in cfg. */
static gmlp_status metadata_preproc(const gmlp_st_file *f, gmlp_config *cfg, gmlp_preproc_key key, gmlp_error *err)
{
    char name[64], what[80];
    snprintf(name, sizeof name, "gmlp.%s", gmlp_preproc_keys[key]);
    const char *s = gmlp_st_meta(f, name);
    snprintf(what, sizeof what, "metadata %s", name);
    return s ? gmlp_cfg_set_preproc(cfg, key, s, what, GMLP_SOURCE_METADATA, err) : GMLP_OK;
}

/* config.json's value of key, if present, over what cfg holds (validated
 * even where the metadata will override it). */
static gmlp_status hf_preproc(const gmlp_hf_config *hf, gmlp_config *cfg, gmlp_preproc_key key, gmlp_error *err)
{
    char what[80];
    if (!hf || !hf->value[key])
        return GMLP_OK;
    snprintf(what, sizeof what, "config.json %s", hf->key[key]);
    return gmlp_cfg_set_preproc(cfg, key, hf->value[key], what, GMLP_SOURCE_CONFIG_JSON, err);
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

gmlp_status gmlp_cfg_infer_preproc(const gmlp_st_file *f, const gmlp_hf_config *hf, gmlp_config *cfg,
                                   gmlp_error *err)
{
    GMLP_TRY(infer_image(f, hf, cfg, err));
    /* the architecture's normalisation, fitted to the channels as a pretrained cfg's; timm's default crop
     * and filter */
    const gmlp_arch_desc *a = gmlp_arch_of(cfg);
    GMLP_TRY(gmlp_cfg_set_preproc(cfg, GMLP_PK_MEAN, a->mean, "default mean", GMLP_SOURCE_DEFAULT, err));
    GMLP_TRY(gmlp_cfg_set_preproc(cfg, GMLP_PK_STD, a->std, "default std", GMLP_SOURCE_DEFAULT, err));
    cfg->crop_pct = 0.875f;
    cfg->crop_mode = GMLP_CROP_CENTER;
    cfg->interpolation = GMLP_INTERP_BICUBIC;
    const gmlp_preproc_key keys[] = {GMLP_PK_MEAN, GMLP_PK_STD, GMLP_PK_CROP_PCT, GMLP_PK_CROP_MODE,
                                     GMLP_PK_INTERPOLATION};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        GMLP_TRY(hf_preproc(hf, cfg, keys[i], err));
        GMLP_TRY(metadata_preproc(f, cfg, keys[i], err));
    }
    return gmlp_cfg_check_resize(cfg, GMLP_ERR_FORMAT, err); /* or every preprocess would fail */
}

gmlp_status gmlp_cfg_check_labels(const gmlp_st_file *f, const gmlp_hf_config *hf, const gmlp_config *cfg,
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
