/* The calls that need no device: version and status names, preprocessing,
 * sampling and the softmax/top-k helper.  Their failures go to the calling
 * thread's error (gmlp_last_error(NULL)). */
#include <stdio.h>

#include "api/api.h"
#include "preprocess/preprocess.h"
#include "sample/sample.h"

const char *gmlp_version(void)
{
    return GMLP_VERSION_STRING;
}

const char *gmlp_status_string(gmlp_status status)
{
    switch (status) {
    case GMLP_OK: return "success";
    case GMLP_ERR_INVALID_ARGUMENT: return "invalid argument";
    case GMLP_ERR_IO: return "I/O error";
    case GMLP_ERR_FORMAT: return "malformed model file";
    case GMLP_ERR_UNSUPPORTED: return "unsupported model";
    case GMLP_ERR_NO_DEVICE: return "no OpenCL device";
    case GMLP_ERR_OPENCL: return "OpenCL error";
    case GMLP_ERR_BUILD: return "OpenCL kernel build failed";
    case GMLP_ERR_HOST_MEMORY: return "out of host memory";
    case GMLP_ERR_DEVICE_MEMORY: return "out of device memory";
    case GMLP_ERR_WRONG_MODEL: return "operation does not fit this model";
    }
    return "unknown status";
}

void gmlp_config_default(gmlp_config *cfg)
{
    if (cfg)
        *cfg = (gmlp_config){.size = sizeof *cfg, .in_chans = 3, .img_h = 224, .img_w = 224,
                             .mean = {0.5f, 0.5f, 0.5f}, .std = {0.5f, 0.5f, 0.5f}, .crop_pct = 0.875f,
                             .interpolation = GMLP_INTERP_BICUBIC, .crop_mode = GMLP_CROP_CENTER};
}

/* The caller's config over the defaults (the fields its size holds). */
static gmlp_status config_in(const gmlp_config *given, gmlp_config *cfg, const char *fn, gmlp_error *err)
{
    gmlp_config_default(cfg);
    if (!gmlp_sized_in(cfg, sizeof *cfg, GMLP_CONFIG_MIN_SIZE, given))
        return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT,
                         "%s: cfg->size is %zu: set it to sizeof(gmlp_config) (gmlp_config_default does)", fn,
                         given->size);
    return GMLP_OK;
}

gmlp_status gmlp_preprocess_rgb8(const gmlp_config *given, const uint8_t *pixels, int width, int height,
                                 int channels, float *out)
{
    gmlp_error *err = gmlp_api_error();
    gmlp_config cfg;
    if (!given)
        return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT, "gmlp_preprocess_rgb8: cfg is NULL");
    GMLP_TRY(config_in(given, &cfg, "gmlp_preprocess_rgb8", err));
    return gmlp_preprocess_image(&cfg, pixels, width, height, channels, out, err);
}

gmlp_status gmlp_preprocess_rgb8_batch(const gmlp_config *given, const uint8_t *const *pixels, const int *width,
                                       const int *height, const int *channels, size_t n, float *out)
{
    gmlp_error *err = gmlp_api_error();
    if (!given || (n && (!pixels || !width || !height || !channels || !out)))
        return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT, "gmlp_preprocess_rgb8_batch: NULL argument");
    gmlp_config c;
    GMLP_TRY(config_in(given, &c, "gmlp_preprocess_rgb8_batch", err));
    const gmlp_config *cfg = &c;
    const size_t per = (size_t)cfg->in_chans * (size_t)cfg->img_h * (size_t)cfg->img_w;
    for (size_t i = 0; i < n; i++) {
        gmlp_status st = gmlp_preprocess_image(cfg, pixels[i], width[i], height[i], channels[i], out + i * per, err);
        if (st != GMLP_OK) {
            char where[64];
            snprintf(where, sizeof where, "image %zu", i);
            gmlp_error_prefix(err, where);
            return st;
        }
    }
    return GMLP_OK;
}

void gmlp_generate_options_default(gmlp_generate_options *o)
{
    if (o)
        *o = (gmlp_generate_options){
            .size = sizeof *o, .temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .seed = 0, .max_tokens = 256};
}

gmlp_status gmlp_sample(const float *logits, int vocab, const gmlp_generate_options *opts, uint64_t *rng,
                        int32_t *token)
{
    gmlp_error *err = gmlp_api_error();
    gmlp_generate_options o;
    gmlp_generate_options_default(&o);
    if (opts && !gmlp_options_in(&o, sizeof o, opts))
        return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT,
                         "gmlp_sample: gmlp_generate_options.size is %zu: fill the options with "
                         "gmlp_generate_options_default", opts->size);
    return gmlp_sample_token(logits, vocab, opts ? &o : NULL, rng, token, err);
}

gmlp_status gmlp_softmax_topk(const float *logits, int n, int k, int32_t *index, float *prob)
{
    return gmlp_sample_topk(logits, n, k, index, prob, gmlp_api_error());
}
