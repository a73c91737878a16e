/* libFuzzer target: arbitrary bytes through gmlp_model_load_memory on the
 * default OpenCL device, and one classification when a model loads. */
#include <stdlib.h>

#include "gmlp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static gmlp_context *ctx;
    if (!ctx && gmlp_context_create(NULL, &ctx) != GMLP_OK)
        abort(); /* no device: nothing to fuzz */
    gmlp_model *m;
    if (gmlp_model_load_memory(ctx, data, size, &m) != GMLP_OK)
        return 0;
    gmlp_config cfg;
    gmlp_model_config(m, &cfg);
    size_t n = (size_t)cfg.in_chans * cfg.img_h * cfg.img_w;
    if (n <= 4096 && cfg.num_params <= 100000) {
        float *img = calloc(n, sizeof *img), *out = calloc((size_t)cfg.dim + (size_t)cfg.num_classes, sizeof *out);
        gmlp_features(m, img, 1, out);
        free(img);
        free(out);
    }
    gmlp_model_free(m);
    return 0;
}
