/* Whole models against references computed by real timm in float64
 * (tools/make_fixtures.py): every NAME.ref.safetensors in the folder given
 * holds the input images and the expected logits and pooled features of
 * NAME.safetensors.  Tolerance relative to the largest |value|: 1e-4 with
 * float weights, 2e-3 with weights stored as half (their rounding, 2^-11
 * relative, is the error that dominates).  Then the precision modes TF32,
 * FP16 and BF16 (fixture.h's fixture_modes): against the same references
 * (2e-3, 2e-3, 1.5e-2), and tightly against float64 references that round
 * every product's operands the same way (../precision/NAME.prec.safetensors,
 * tools/precision_ref.py).  With GMLP_GEMM_SPLIT (e2e-split: every product
 * split along k, on linear weights as the file stores them: GMLP_PACK=0),
 * each image's batch-1 logits also against a context's that splits none.
 *
 * The quick tier (check_quick_tier): e2e itself runs every mode; its twins
 * e2e-plain (GMLP_FUSE=1, plain enqueues) and e2e-split (GMLP_GEMM_SPLIT)
 * run FP32 and BF16 alone, as gemm-fused's quick sample does
 * (each mode there builds fused or split programs of its own, cold builds of
 * a minute or more on PoCL): the fused and split paths on whole models in
 * float and in the mode with 16-bit activations, TF32 and FP16 on whole
 * models in e2e and lm, split in every mode in gemm-split; the full tier
 * runs every mode in each twin.  And in the quick tier the modes run with
 * the weights as stored alone (fixture_mode_storage_runs), half weights in
 * FP32. */
#include <string.h>

#include "cl/context.h"
#include "fixture.h"

/* e2e-split's context without the split; NULL: none. */
static gmlp_context *unsplit;

static void run_case(gmlp_context *ctx, const char *dir, const char *name, int storage)
{
    gmlp_st_file ref;
    unsigned char *buf = fixture_ref(dir, name, &ref);
    if (!buf)
        return;
    const gmlp_st_tensor *images = gmlp_st_find(&ref, "images"), *logits = gmlp_st_find(&ref, "logits"),
                         *features = gmlp_st_find(&ref, "features");
    gmlp_model *model = fixture_load(ctx, dir, name, storage);
    if (model && images && features) {
        gmlp_config cfg = {.size = sizeof cfg};
        gmlp_model_config(model, &cfg);
        size_t batch = (size_t)images->shape[0];
        CHECK(images->shape[1] == cfg.in_chans && images->shape[2] == cfg.img_h && images->shape[3] == cfg.img_w,
              "%s: config %dx%dx%d does not match the reference images", name, cfg.in_chans, cfg.img_h, cfg.img_w);
        CHECK((logits != NULL) == (cfg.num_classes > 0), "%s: num_classes %d", name, cfg.num_classes);
        float *out = malloc(batch * (size_t)(cfg.dim > cfg.num_classes ? cfg.dim : cfg.num_classes) * sizeof *out);
        const float *img = (const float *)images->data;
        CHECK(gmlp_features(model, img, batch, out) == GMLP_OK, "%s: features: %s", name, gmlp_last_error(ctx));
        CHECK(cfg.weights == fixture_storages[storage].weights, "%s: cfg.weights %d", name, (int)cfg.weights);
        fixture_compare(name, storage, "features", out, features, "");
        if (logits) {
            CHECK(gmlp_classify(model, img, batch, out) == GMLP_OK, "%s: classify: %s", name, gmlp_last_error(ctx));
            fixture_compare(name, storage, "logits", out, logits, "");
            /* one image at a time must give the same as the whole batch */
            size_t per = (size_t)cfg.in_chans * cfg.img_h * cfg.img_w;
            float *one = malloc((size_t)cfg.num_classes * sizeof *one), *plain = malloc((size_t)cfg.num_classes * sizeof *plain);
            gmlp_model *m2 = unsplit ? fixture_load(unsplit, dir, name, storage) : NULL;
            double maxd = 0, split_d = 0;
            for (size_t b = 0; b < batch; b++) {
                gmlp_classify(model, img + b * per, 1, one);
                for (int c = 0; c < cfg.num_classes; c++)
                    maxd = fmax(maxd, fabs(one[c] - out[b * cfg.num_classes + c]));
                if (m2 && gmlp_classify(m2, img + b * per, 1, plain) == GMLP_OK)
                    for (int c = 0; c < cfg.num_classes; c++)
                        split_d = fmax(split_d, fabs(one[c] - plain[c]));
            }
            CHECK(maxd < 1e-4, "%s: batch-1 logits differ from the batched ones by %g", name, maxd);
            if (unsplit) {
                printf("%-24s %s batch-1 split vs unsplit: max abs diff %.2e\n", name,
                       fixture_storages[storage].name, split_d);
                CHECK(m2 && split_d < 1e-5, "%s: split batch-1 logits differ from unsplit ones by %g", name, split_d);
            }
            gmlp_model_free(m2);
            free(one), free(plain);
        }
        free(out);
    }
    gmlp_model_free(model);
    gmlp_st_free(&ref);
    free(buf);
}

/* GMLP_GEMM=clblast: the precision modes are refused (CLBlast runs fp32 only). */
static int clblast_run;

/* The modes run_modes runs (fixture_modes' indices as bits): all, or in the quick tier's twins BF16 alone. */
static unsigned modes_run = (1u << FIXTURE_MODES) - 1;

/* The precision modes (fixture_modes) on the same images: the features and
 * logits of each against the plain float64 reference and against the mode's
 * own (operands rounded); one image at a time as the batch; with
 * GMLP_GEMM=clblast, each mode refused. */
static void run_modes(gmlp_context *ctx, const char *dir, const char *name, int storage)
{
    gmlp_st_file ref, prec;
    unsigned char *buf = fixture_ref(dir, name, &ref), *pbuf = buf ? fixture_prec(dir, name, &prec) : NULL;
    const gmlp_st_tensor *images = buf ? gmlp_st_find(&ref, "images") : NULL,
                         *logits = buf ? gmlp_st_find(&ref, "logits") : NULL,
                         *features = buf ? gmlp_st_find(&ref, "features") : NULL;
    for (int m = 0; pbuf && images && features && fixture_mode_storage_runs(storage) && m < FIXTURE_MODES; m++) {
        if (!(modes_run & 1u << m))
            continue;
        gmlp_model *model = fixture_load_mode(ctx, dir, name, storage, fixture_modes[m].mode, clblast_run);
        const gmlp_st_tensor *tight_f = fixture_prec_find(&prec, name, m, storage, "features"),
                             *tight_l = logits ? fixture_prec_find(&prec, name, m, storage, "logits") : NULL;
        if (!model || !tight_f || (logits && !tight_l)) {
            gmlp_model_free(model);
            continue;
        }
        gmlp_config cfg = {.size = sizeof cfg};
        gmlp_model_config(model, &cfg);
        size_t batch = (size_t)images->shape[0], width = (size_t)(cfg.dim > cfg.num_classes ? cfg.dim : cfg.num_classes);
        float *out = malloc(batch * width * sizeof *out);
        const float *img = (const float *)images->data;
        CHECK(gmlp_features(model, img, batch, out) == GMLP_OK, "%s %s: features: %s", name, fixture_modes[m].name,
              gmlp_last_error(ctx));
        fixture_compare_mode(name, storage, m, "features", out, features, tight_f, "");
        if (logits) {
            CHECK(gmlp_classify(model, img, batch, out) == GMLP_OK, "%s %s: classify: %s", name,
                  fixture_modes[m].name, gmlp_last_error(ctx));
            fixture_compare_mode(name, storage, m, "logits", out, logits, tight_l, "");
            /* one image at a time: the same up to the accumulation order (other tiles), which may round an
             * operand the other way */
            size_t per = (size_t)cfg.in_chans * cfg.img_h * cfg.img_w, nc = (size_t)cfg.num_classes;
            float *one = malloc(batch * nc * sizeof *one);
            for (size_t b = 0; b < batch; b++)
                gmlp_classify(model, img + b * per, 1, one + b * nc);
            double *batched = malloc(batch * nc * sizeof *batched);
            for (size_t i = 0; i < batch * nc; i++)
                batched[i] = out[i];
            double e = rel_error(one, batched, batch * nc, 1e-6);
            printf("%-24s %s %s batch-1  max rel diff %.2e\n", name, fixture_storages[storage].name,
                   fixture_modes[m].name, e);
            CHECK(e <= fixture_modes[m].tight, "%s %s: batch-1 logits differ from the batched ones by %.3g", name,
                  fixture_modes[m].name, e);
            free(one), free(batched);
        }
        free(out);
        gmlp_model_free(model);
    }
    if (pbuf)
        gmlp_st_free(&prec);
    if (buf)
        gmlp_st_free(&ref);
    free(pbuf), free(buf);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: test_e2e DIR\n");
        return 2;
    }
    const char *gemm = getenv("GMLP_GEMM");
    if (!GMLP_HAVE_CLBLAST && gemm && !strcmp(gemm, "clblast")) { /* e2e-clblast; test_api checks the refusal */
        printf("SKIP: GMLP_GEMM=clblast: built without CLBlast (meson setup -Dclblast)\n");
        return 77;
    }
    clblast_run = gemm && !strcmp(gemm, "clblast");
    const char *fuse = getenv("GMLP_FUSE"), *split = getenv("GMLP_GEMM_SPLIT");
    if (check_quick_tier() && ((fuse && *fuse) || (split && *split))) { /* e2e-plain, e2e-split: BF16 alone */
        modes_run = 0;
        for (int m = 0; m < FIXTURE_MODES; m++)
            modes_run |= fixture_modes[m].mode == GMLP_PRECISION_BF16 ? 1u << m : 0;
        printf("quick tier: of the precision modes BF16 alone (the full tier runs each)\n");
    }
    gmlp_context *ctx = check_context();
    if (ctx->set.gemm_split > 1) {
        unsplit = check_context();
        unsplit->set.gemm_split = 0; /* the tables': none on CPUs */
    }
    int cases = fixture_each(ctx, argv[1], run_case);
    if (cases >= 0)
        fixture_each(ctx, argv[1], run_modes);
    if (cases < 0) {
        printf("FAIL: cannot open %s\n", argv[1]);
        return 1;
    }
    CHECK(cases >= 6, "only %d reference cases found in %s", cases, argv[1]);
    fixture_modes_summary("test_e2e");
    gmlp_context_destroy(ctx);
    if (unsplit)
        gmlp_context_destroy(unsplit);
    return check_summary("test_e2e");
}
