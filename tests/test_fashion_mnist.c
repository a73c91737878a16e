/* The bundled model over the Fashion-MNIST test set through the public API:
 * top-1 accuracy must equal the PyTorch accuracy recorded in the model's
 * gmlp.test_accuracy within 0.1 percentage point, and the predictions must
 * agree with PyTorch's (models/fashion-mnist-gmlp.predictions.txt) on at
 * least 99.9% of the images.
 * usage: test_fashion_mnist MODEL PREDICTIONS [DATASET_DIR [LIMIT]]
 * LIMIT (first N images, for slow sanitizer runs; $GMLP_TEST_IMAGES caps it,
 * for the slower OpenCL implementations in CI) checks agreement only.
 * GMLP_TEST_WEIGHTS=f16 loads the model with its weights stored as half.
 * GMLP_TEST_PRECISION=tf32,fp16,bf16 (any of them): then the same images in
 * each of those precision modes: the predictions must agree with the FP32
 * pass's on at least 99.8% of them and, over the whole set, the accuracy be
 * within 0.1 point of gmlp.test_accuracy.  GMLP_TEST_LONG=1: the whole set
 * whatever LIMIT says (the model suite's long mode). */
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "check.h"

#define BATCH 500

/* IDX file: big-endian magic, dims, then uint8 data. */
static uint8_t *read_idx(const char *path, uint32_t magic, int ndim, size_t *count)
{
    gzFile f = gzopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t head[16];
    size_t hlen = 4 + 4 * (size_t)ndim, n = 1;
    uint8_t *data = NULL;
    if (gzread(f, head, (unsigned)hlen) == (int)hlen &&
        (uint32_t)(head[0] << 24 | head[1] << 16 | head[2] << 8 | head[3]) == magic) {
        for (int i = 0; i < ndim; i++)
            n *= (size_t)(head[4 + 4 * i] << 24 | head[5 + 4 * i] << 16 | head[6 + 4 * i] << 8 | head[7 + 4 * i]);
        *count = (size_t)(head[4] << 24 | head[5] << 16 | head[6] << 8 | head[7]);
        data = malloc(n);
        if (data && gzread(f, data, (unsigned)n) != (int)n) {
            free(data);
            data = NULL;
        }
    }
    gzclose(f);
    return data;
}

static int *read_predictions(const char *path, size_t n)
{
    FILE *f = fopen(path, "r");
    int *p = malloc(n * sizeof *p);
    size_t i = 0;
    while (f && p && i < n && fscanf(f, "%d", &p[i]) == 1)
        i++;
    if (f)
        fclose(f);
    if (i != n) {
        free(p);
        return NULL;
    }
    return p;
}

/* The first n images classified in batches: each one's class into pred,
 * the number right (labels) returned; -1 with a failure printed. */
static long classify_all(gmlp_context *ctx, gmlp_model *model, const gmlp_config *cfg, const uint8_t *images,
                         const uint8_t *labels, size_t n, int *pred)
{
    float *x = malloc(sizeof *x * 784 * BATCH), *logits = malloc(sizeof *logits * 10 * BATCH);
    long correct = 0;
    for (size_t i = 0; i < n && correct >= 0; i += BATCH) {
        size_t b = n - i < BATCH ? n - i : BATCH;
        /* pixel / 255, normalised as the training script does */
        for (size_t k = 0; k < b * 784; k++)
            x[k] = ((float)images[i * 784 + k] / 255.0f - cfg->mean[0]) / cfg->std[0];
        if (gmlp_classify(model, x, b, logits) != GMLP_OK) {
            printf("FAIL: classify: %s\n", gmlp_last_error(ctx));
            correct = -1;
            break;
        }
        for (size_t j = 0; j < b; j++) {
            int best = 0;
            for (int c = 1; c < 10; c++)
                if (logits[j * 10 + c] > logits[j * 10 + best])
                    best = c;
            pred[i + j] = best;
            correct += best == labels[i + j];
        }
    }
    free(x), free(logits);
    return correct;
}

/* The same n images in each precision mode of the comma list modes, against
 * the FP32 pass's predictions (fp32) and, over the whole set, the recorded
 * accuracy. */
static void precision_modes(gmlp_context *ctx, const char *path, const gmlp_load_options *base, const char *modes,
                            const uint8_t *images, const uint8_t *labels, size_t n, size_t n_img, const int *fp32,
                            double acc32, double torch_acc)
{
    int *pred = malloc(n * sizeof *pred);
    char list[64];
    snprintf(list, sizeof list, "%s", modes);
    for (char *save = NULL, *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        gmlp_load_options opts = *base;
        gmlp_model *model = NULL;
        CHECK(gmlp_precision_parse(name, &opts.precision) == GMLP_OK && opts.precision != GMLP_PRECISION_AUTO,
              "GMLP_TEST_PRECISION: '%s' is not a mode", name);
        if (opts.precision == GMLP_PRECISION_AUTO || gmlp_model_load_ex(ctx, path, &opts, &model) != GMLP_OK) {
            CHECK(opts.precision == GMLP_PRECISION_AUTO, "load in %s: %s", name, gmlp_last_error(ctx));
            continue;
        }
        gmlp_config cfg = {.size = sizeof cfg};
        gmlp_model_config(model, &cfg);
        long correct = classify_all(ctx, model, &cfg, images, labels, n, pred);
        size_t agree = 0;
        for (size_t i = 0; correct >= 0 && i < n; i++)
            agree += pred[i] == fp32[i];
        double acc = (double)correct / (double)n, agreement = (double)agree / (double)n;
        printf("%zu images in %s: top-1 %.4f (FP32 %.4f, recorded %.4f), agreement with FP32 %.4f (%zu differ)\n", n,
               gmlp_precision_name(opts.precision), acc, acc32, torch_acc, agreement, n - agree);
        CHECK(correct >= 0 && agreement >= 0.998, "%s: agreement with FP32 %.4f < 0.998", name, agreement);
        if (n == n_img)
            CHECK(fabs(acc - torch_acc) <= 0.001, "%s: accuracy %.4f differs from FP32's %.4f by more than 0.1 pp",
                  name, acc, torch_acc);
        gmlp_model_free(model);
    }
    free(pred);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        printf("usage: test_fashion_mnist MODEL PREDICTIONS [DATASET_DIR [LIMIT]]\n");
        return 2;
    }
    const char *dir = argc > 3 ? argv[3] : "/usr/share/datasets/fashion-mnist";
    char path[1024];
    size_t n_img, n_lab;
    snprintf(path, sizeof path, "%s/t10k-images-idx3-ubyte.gz", dir);
    uint8_t *images = read_idx(path, 0x803, 3, &n_img);
    snprintf(path, sizeof path, "%s/t10k-labels-idx1-ubyte.gz", dir);
    uint8_t *labels = read_idx(path, 0x801, 1, &n_lab);
    if (!images || !labels || n_img != n_lab) {
        printf("SKIP: the Fashion-MNIST test set is not readable in %s (apt-get install dataset-fashion-mnist)\n", dir);
        return 77;
    }
    const char *long_env = getenv("GMLP_TEST_LONG"), *cap_env = getenv("GMLP_TEST_IMAGES");
    size_t limit = argc > 4 ? (size_t)atol(argv[4]) : 0, cap = cap_env ? (size_t)atol(cap_env) : 0;
    if (cap && (!limit || cap < limit))
        limit = cap;
    if (long_env && *long_env && strcmp(long_env, "0"))
        limit = 0;
    size_t n = limit && limit < n_img ? limit : n_img;
    int *torch_pred = read_predictions(argv[2], n_img);
    CHECK(torch_pred != NULL, "cannot read %zu predictions from %s", n_img, argv[2]);

    gmlp_context *ctx = check_context();
    gmlp_model *model;
    gmlp_load_options opts;
    gmlp_load_options_default(&opts);
    const char *weights = getenv("GMLP_TEST_WEIGHTS");
    if (weights && !strcmp(weights, "f16"))
        opts.weights = GMLP_WEIGHTS_F16;
    if (gmlp_model_load_ex(ctx, argv[1], &opts, &model) != GMLP_OK) {
        printf("FAIL: %s\n", gmlp_last_error(ctx));
        return 1;
    }
    gmlp_config cfg = {.size = sizeof cfg};
    gmlp_model_config(model, &cfg);
    const char *acc_s = gmlp_model_metadata(model, "gmlp.test_accuracy");
    CHECK(acc_s != NULL, "model lacks gmlp.test_accuracy");
    CHECK(cfg.in_chans == 1 && cfg.img_h == 28 && cfg.img_w == 28 && cfg.num_classes == 10, "model geometry");

    int *pred = malloc(n * sizeof *pred);
    size_t agree = 0;
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    long right = classify_all(ctx, model, &cfg, images, labels, n, pred);
    if (right < 0)
        return 1;
    size_t correct = (size_t)right;
    for (size_t i = 0; i < n; i++)
        agree += torch_pred && pred[i] == torch_pred[i];
    clock_gettime(CLOCK_MONOTONIC, &w1);
    double secs = (double)(w1.tv_sec - w0.tv_sec) + (w1.tv_nsec - w0.tv_nsec) * 1e-9;
    double acc = (double)correct / n, agreement = (double)agree / n, torch_acc = acc_s ? atof(acc_s) : -1;
    printf("%zu images on %s, %s weights: top-1 %.4f (PyTorch %.4f), agreement with PyTorch %.4f, %.0f images/s\n",
           n, gmlp_context_device_name(ctx), opts.weights == GMLP_WEIGHTS_F16 ? "f16" : "f32", acc, torch_acc,
           agreement, n / secs);
    CHECK(agreement >= 0.999, "agreement %.4f < 0.999", agreement);
    if (n == n_img)
        CHECK(fabs(acc - torch_acc) <= 0.001, "accuracy %.4f differs from PyTorch's %.4f by more than 0.1 pp", acc,
              torch_acc);
    const char *modes = getenv("GMLP_TEST_PRECISION");
    if (modes && *modes)
        precision_modes(ctx, argv[1], &opts, modes, images, labels, n, n_img, pred, acc, torch_acc);
    free(pred), free(images), free(labels), free(torch_pred);
    gmlp_model_free(model);
    gmlp_context_destroy(ctx);
    return check_summary("test_fashion_mnist");
}
