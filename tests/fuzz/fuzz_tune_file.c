/* libFuzzer target: arbitrary bytes as a GEMM tuning file, through its
 * reader and validation for a made-up device (the seeds in tests/data/tune
 * name it, so that mutations reach the winners).  No OpenCL device needed. */
#include <stdint.h>
#include <stdlib.h>

#include "ops/gemm_tune.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const gmlp_devinfo dev = {.platform_name = "Fuzz Platform", .name = "Fuzz Device", .vendor = "Fuzz Vendor",
                                     .version = "OpenCL 3.0 Fuzz", .driver = "1.0", .compute_units = 4,
                                     .local_mem = 32768, .max_wg = 256, .max_wi = {256, 256, 64}};
    gmlp_tuned t;
    char why[200];
    if (gmlp_tune_parse(&dev, data, size, &t, why, sizeof why)) {
        size_t set = 0; /* a file taken holds only valid choices */
        for (size_t s = 0; s < GMLP_TUNE_SLOTS; s++)
            if (t.set[s] && !t.choice[s].clblast &&
                (!t.choice[s].tiling || !gmlp_gemm_tiling_fits(&dev, t.choice[s].tiling)))
                abort();
            else
                set += (size_t)t.set[s];
        (void)set;
    }
    return 0;
}
