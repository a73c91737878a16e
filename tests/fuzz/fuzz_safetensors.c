/* libFuzzer target: arbitrary bytes through the safetensors parser and the
 * header-to-config inference (no OpenCL device needed). */
#include <stddef.h>
#include <stdint.h>

#include "format/safetensors.h"
#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gmlp_st_file f;
    gmlp_error err = {.msg = ""};
    if (gmlp_st_parse(data, size, &f, &err) != GMLP_OK)
        return 0;
    gmlp_config cfg = {.size = sizeof cfg};
    if (gmlp_config_infer(&f, NULL, &cfg, &err) == GMLP_OK)
        gmlp_config_check_tensors(&f, &cfg, &err);
    for (size_t i = 0; i < f.n_tensors; i++) {
        float probe[16];
        const gmlp_st_tensor *t = &f.tensors[i];
        if (t->numel <= 16)
            gmlp_st_to_f32(t, probe);
    }
    gmlp_st_free(&f);
    return 0;
}
