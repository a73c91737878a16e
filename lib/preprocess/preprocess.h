/* timm's eval transform for 8-bit images (gmlp_preprocess_rgb8). */
#ifndef GMLP_PREPROCESS_H
#define GMLP_PREPROCESS_H

#include <stdint.h>

#include "core/error.h"

/* Into *sh, *sw: floor(img_size / crop_pct), the size an image is resized
 * to before the crop; 0 when outside [1, 65536], which no preprocess takes. */
int gmlp_preprocess_resize_size(const gmlp_config *cfg, int *sh, int *sw);
gmlp_status gmlp_preprocess_image(const gmlp_config *cfg, const uint8_t *pixels, int width, int height, int channels,
                                  float *out, gmlp_error *err);

#endif
