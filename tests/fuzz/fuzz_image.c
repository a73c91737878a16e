/* libFuzzer target: arbitrary bytes through gmlp-classify's image decoder
 * (apps/image.c: libjpeg-turbo for JPEG, apps/pnm.c for Netpbm, stb_image
 * for the rest), then the preprocessing of what decodes into a small model
 * input, its filter and crop chosen by the last byte (stb_image is compiled
 * in: stb_image_impl.c). */
#include <stdio.h>
#include <stdlib.h>

#include "gmlp.h"
#include "image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0; /* fmemopen refuses an empty buffer */
    FILE *f = fmemopen((void *)data, size, "rb");
    if (!f)
        return 0;
    int w, h, ch;
    char why[APP_IMAGE_REASON_SIZE];
    unsigned char *px = app_image_read(f, &w, &h, &ch, why);
    fclose(f);
    /* An extreme aspect ratio resizes to up to 2^30 pixels (the shorter side to 18), which takes
     * seconds, as in PIL: correct but no use to the fuzzer, which skips those. */
    const double shorter = px ? (w < h ? w : h) : 1, resized = (double)w * h * (18 / shorter) * (18 / shorter);
    if (px && resized <= (1 << 22)) {
        gmlp_config cfg = {.size = sizeof cfg, .in_chans = 3, .img_h = 16, .img_w = 12, .crop_pct = 0.875f, .mean = {0.5f, 0.5f, 0.5f},
                           .std = {0.5f, 0.5f, 0.5f}, .interpolation = data[size - 1] % 6,
                           .crop_mode = data[size - 1] / 6 % 3};
        float out[3 * 16 * 12];
        gmlp_preprocess_rgb8(&cfg, px, w, h, ch, out);
    }
    app_image_free(px);
    return 0;
}
