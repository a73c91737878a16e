/* Built by test_install.sh against the installed library through pkg-config:
 * loads a model and classifies one image of zeros. */
#include <gmlp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    gmlp_context *ctx;
    gmlp_model *model;
    gmlp_config cfg = {.size = sizeof cfg};
    if (argc < 2 || gmlp_context_create(NULL, &ctx) != GMLP_OK) {
        fprintf(stderr, "context: %s\n", gmlp_last_error(NULL));
        return 1;
    }
    if (gmlp_model_load(ctx, argv[1], &model) != GMLP_OK) {
        fprintf(stderr, "load: %s\n", gmlp_last_error(ctx));
        return 1;
    }
    gmlp_model_config(model, &cfg);
    float *img = calloc((size_t)cfg.in_chans * cfg.img_h * cfg.img_w, sizeof *img);
    float *logits = calloc((size_t)cfg.num_classes, sizeof *logits);
    int rc = gmlp_classify(model, img, 1, logits) == GMLP_OK ? 0 : 1;
    printf("gmlp %s: %d classes, logit[0] = %g\n", gmlp_version(), cfg.num_classes, (double)logits[0]);
    free(img);
    free(logits);
    gmlp_model_free(model);
    gmlp_context_destroy(ctx);
    return rc;
}
