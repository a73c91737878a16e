/* The preprocessing values of a vision model that its file, a model
 * folder's config.json or the user may set. */
#ifndef GMLP_PREPROC_KEYS_H
#define GMLP_PREPROC_KEYS_H

/* Preprocessing values and where each came from (gmlp_model_config_source). */
typedef enum gmlp_preproc_key {
    GMLP_PK_IMG_SIZE,
    GMLP_PK_MEAN,
    GMLP_PK_STD,
    GMLP_PK_CROP_PCT,
    GMLP_PK_CROP_MODE,
    GMLP_PK_INTERPOLATION,
    GMLP_PK_LABELS,
    GMLP_PK_COUNT
} gmlp_preproc_key;
extern const char *const gmlp_preproc_keys[GMLP_PK_COUNT]; /* "img_size", ...: as the gmlp.* metadata */

/* A pretrained mean / std may hold any count of values (timm averages them);
 * more than this many are refused. */
#define GMLP_MAX_NORM_VALUES 64


#endif
