/* timm's eval transform for 8-bit images (gmlp_preprocess_rgb8). */
#ifndef GMLP_PREPROCESS_H
#define GMLP_PREPROCESS_H

#include <stdint.h>

#include "core/error.h"

gmlp_status gmlp_preprocess_image(const gmlp_config *cfg, const uint8_t *pixels, int width, int height, int channels,
                                  float *out, gmlp_error *err);

#endif
