/* libFuzzer target: arbitrary bytes as a model folder's config.json, through
 * its reader and into the config inference of a small non-square gMLP (with
 * and without the file's gmlp.* metadata, so that config.json's values both
 * lose to it and stand alone).  No OpenCL device needed. */
#include <stdint.h>
#include <stdlib.h>

#include "format/safetensors.h"
#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static void *weights;
    static size_t weights_size;
    static gmlp_st_file f;
    gmlp_error err = {.msg = ""};
    if (!weights) {
        const gmlp_config c = {.arch = GMLP_ARCH_GMLP, .in_chans = 3, .img_h = 24, .img_w = 40, .patch_h = 8,
                               .patch_w = 8, .seq_len = 15, .depth = 1, .dim = 8, .ffn_dim = 16, .num_classes = 4,
                               .heads = 1};
        if (gmlp_random_model(&c, 1, &weights, &weights_size, &err) != GMLP_OK ||
            gmlp_st_parse(weights, weights_size, &f, &err) != GMLP_OK)
            abort();
    }
    gmlp_hf_config hf;
    if (gmlp_hf_config_parse(data, size, &hf, &err) != GMLP_OK)
        return 0;
    gmlp_config cfg = {.size = sizeof cfg};
    gmlp_config_infer(&f, &hf, &cfg, &err);
    size_t n_meta = f.n_meta;
    f.n_meta = 0; /* the same weights without their metadata (gmlp.img_size among it) */
    gmlp_config_infer(&f, &hf, &cfg, &err);
    f.n_meta = n_meta;
    gmlp_hf_config_free(&hf);
    return 0;
}
