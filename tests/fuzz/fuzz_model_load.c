/* libFuzzer target: arbitrary bytes through gmlp_model_load_memory on the
 * default OpenCL device, and one pass when a small model loads: features of
 * an image model, logits of a language model (and the vision call on it,
 * which must be refused).  With the allocation-failure hook (run.sh builds
 * with -Dalloc_fail=true), the input's last byte picks which allocation of
 * the load and the pass fails (0: none), as dav1d's alloc_fail.c. */
#include <stdlib.h>

#include "core/alloc.h"
#include "gmlp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static gmlp_context *ctx;
    if (!ctx && gmlp_context_create(NULL, &ctx) != GMLP_OK)
        abort(); /* no device: nothing to fuzz */
    gmlp_model *m;
#ifdef GMLP_ALLOC_FAIL
    gmlp_alloc_fail_at(size ? data[size - 1] : 0);
#endif
    if (gmlp_model_load_memory(ctx, data, size, &m) != GMLP_OK)
        return 0;
    gmlp_config cfg = {.size = sizeof cfg};
    gmlp_model_config(m, &cfg);
    size_t n = (size_t)cfg.in_chans * cfg.img_h * cfg.img_w;
    if (cfg.arch == GMLP_ARCH_LM && cfg.num_params <= 100000 && cfg.seq_len <= 64) {
        int32_t *tok = calloc((size_t)cfg.seq_len, sizeof *tok);
        float *out = calloc((size_t)cfg.seq_len * (size_t)cfg.vocab_size, sizeof *out);
        if (gmlp_features(m, (const float *)tok, 1, out) != GMLP_ERR_WRONG_MODEL)
            abort();
        gmlp_lm_logits(m, tok, 1, (size_t)cfg.seq_len, out);
        free(tok);
        free(out);
    } else if (n <= 4096 && cfg.num_params <= 100000) {
        float *img = calloc(n, sizeof *img), *out = calloc((size_t)cfg.dim + (size_t)cfg.num_classes, sizeof *out);
        gmlp_features(m, img, 1, out);
        free(img);
        free(out);
    }
    gmlp_model_free(m);
    return 0;
}
