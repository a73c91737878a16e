/* Image files through gmlp-classify's decoder (apps/image.c) and
 * gmlp_preprocess_rgb8 against timm's eval transform on PIL images
 * (tools/make_preprocess_refs.py): PNG and JPEG (4:4:4, 4:2:0, progressive
 * 4:2:2, grey, CMYK) decode to PIL's pixels, so the tensors match to within
 * float rounding (1e-6 in pixel units, difference x std).  Then its batch
 * form, and gmlp_softmax_topk against a float64 softmax. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "image.h"

static int parse3(const char *s, float *v)
{
    return sscanf(s, "%f,%f,%f", &v[0], &v[1], &v[2]);
}

static const char *interp_names[] = {"bicubic", "bilinear", "nearest", "box", "hamming", "lanczos"};

/* Returns 0 for a line that is not a case. */
static int run_case(const char *dir, const char *line)
{
    char image[256], interp[32], mean[64], stdv[64], expected[256];
    gmlp_config cfg = {.size = sizeof cfg};
    if (sscanf(line, "%255s %d %d %d %31s %f %63s %63s %255s", image, &cfg.in_chans, &cfg.img_h, &cfg.img_w, interp,
               &cfg.crop_pct, mean, stdv, expected) != 9)
        return 0;
    cfg.interpolation = -1; /* an unknown name fails the case */
    for (int i = 0; i < (int)(sizeof interp_names / sizeof *interp_names); i++)
        if (!strcmp(interp, interp_names[i]))
            cfg.interpolation = i;
    parse3(mean, cfg.mean);
    parse3(stdv, cfg.std);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, image);
    int w, h, ch;
    char why[APP_IMAGE_REASON_SIZE];
    unsigned char *px = app_image_decode(path, &w, &h, &ch, why);
    CHECK(px != NULL, "%s: %s", path, why);
    if (!px)
        return 1;
    size_t n = (size_t)cfg.in_chans * cfg.img_h * cfg.img_w;
    float *got = calloc(n, sizeof *got), *want = calloc(n, sizeof *want);
    snprintf(path, sizeof path, "%s/%s", dir, expected);
    FILE *f = fopen(path, "rb");
    int read_ok = got && want && f && fread(want, sizeof *want, n, f) == n;
    CHECK(read_ok, "%s: unreadable", path);
    if (f)
        fclose(f);
    gmlp_status st = read_ok ? gmlp_preprocess_rgb8(&cfg, px, w, h, ch, got) : GMLP_ERR_IO;
    CHECK(st == GMLP_OK, "%s: %s", image, gmlp_last_error(NULL));
    double maxd = st == GMLP_OK ? 0 : INFINITY;
    size_t plane = (size_t)cfg.img_h * cfg.img_w;
    for (size_t i = 0; st == GMLP_OK && i < n; i++)
        maxd = fmax(maxd, fabs((double)got[i] - want[i]) * cfg.std[i / plane]);
    const double tol = 1e-6;
    printf("%-24s -> %-28s max |diff| %.2g px-units (bound %g)\n", image, expected, maxd, tol);
    CHECK(maxd <= tol, "%s %s: max difference %.5f > %.5f", image, expected, maxd, tol);
    free(got);
    free(want);
    app_image_free(px);
    return 1;
}

static void test_arguments(void)
{
    gmlp_config cfg = {.size = sizeof cfg, .in_chans = 3, .img_h = 8, .img_w = 8, .crop_pct = 1.0f, .mean = {0, 0, 0},
                       .std = {1, 1, 1}};
    uint8_t px[4 * 4 * 3] = {0};
    float out[3 * 8 * 8];
    CHECK(gmlp_preprocess_rgb8(NULL, px, 4, 4, 3, out) == GMLP_ERR_INVALID_ARGUMENT, "NULL cfg");
    CHECK(gmlp_preprocess_rgb8(&cfg, NULL, 4, 4, 3, out) == GMLP_ERR_INVALID_ARGUMENT, "NULL pixels");
    CHECK(gmlp_preprocess_rgb8(&cfg, px, 0, 4, 3, out) == GMLP_ERR_INVALID_ARGUMENT, "zero width");
    CHECK(gmlp_preprocess_rgb8(&cfg, px, 4, 4, 5, out) == GMLP_ERR_INVALID_ARGUMENT, "5 channels");
    CHECK(gmlp_preprocess_rgb8(&cfg, px, 1 << 20, 1 << 20, 3, out) == GMLP_ERR_INVALID_ARGUMENT, "huge image");
    /* 1 x 2^29 resizes to 8 x 2^32: refused before anything is allocated or read */
    CHECK(gmlp_preprocess_rgb8(&cfg, px, 1, 1 << 29, 3, out) == GMLP_ERR_INVALID_ARGUMENT, "huge resized image");
    cfg.crop_pct = 0;
    CHECK(gmlp_preprocess_rgb8(&cfg, px, 4, 4, 3, out) == GMLP_ERR_INVALID_ARGUMENT, "crop_pct 0");
    cfg.crop_pct = NAN;
    CHECK(gmlp_preprocess_rgb8(&cfg, px, 4, 4, 3, out) == GMLP_ERR_INVALID_ARGUMENT, "crop_pct NaN");
    cfg.crop_pct = 9.0f; /* floor(8 / 9) = 0 */
    CHECK(gmlp_preprocess_rgb8(&cfg, px, 4, 4, 3, out) == GMLP_ERR_INVALID_ARGUMENT, "resize to 0");
    cfg.crop_pct = 1.0f;
    cfg.std[1] = 0;
    CHECK(gmlp_preprocess_rgb8(&cfg, px, 4, 4, 3, out) == GMLP_ERR_INVALID_ARGUMENT, "std 0");
    CHECK(strstr(gmlp_last_error(NULL), "std") != NULL, "message: %s", gmlp_last_error(NULL));
    cfg.std[1] = 1;
    CHECK(gmlp_preprocess_rgb8(&cfg, px, 4, 4, 3, out) == GMLP_OK, "upscale 4x4 to 8x8");
    cfg.crop_mode = 3;
    CHECK(gmlp_preprocess_rgb8(&cfg, px, 4, 4, 3, out) == GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(NULL), "crop_mode"), "crop_mode 3: %s", gmlp_last_error(NULL));
    /* border: a 4x2 image becomes 8x4 and is padded by two rows above and below with timm's fill,
     * round(255 * mean) (127.5 and 63.75 round to even 128 and 64) */
    cfg.crop_mode = GMLP_CROP_BORDER;
    cfg.mean[0] = 0.5f;
    cfg.mean[1] = 0.25f;
    CHECK(gmlp_preprocess_rgb8(&cfg, px, 4, 2, 3, out) == GMLP_OK, "border: %s", gmlp_last_error(NULL));
    const float fill[3] = {128.0f / 255.0f - 0.5f, 64.0f / 255.0f - 0.25f, 0.0f};
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 8; y++) {
            float want = y < 2 || y >= 6 ? fill[c] : -cfg.mean[c]; /* the image is black */
            CHECK(out[(c * 8 + y) * 8 + 3] == want, "border: channel %d row %d is %g, expected %g", c, y,
                  out[(c * 8 + y) * 8 + 3], want);
        }
    /* border: a 16x1 image keeps its ratio in 8x8 as 8 x round(0.5) = 0 rows, which PIL refuses (timm
     * fails on it); 15x1 gives 8 x round(0.53) = 1 row (both checked with timm 1.0.31) */
    CHECK(gmlp_preprocess_rgb8(&cfg, px, 16, 1, 3, out) == GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(NULL), "0 pixels"), "border 16x1: %s", gmlp_last_error(NULL));
    CHECK(gmlp_preprocess_rgb8(&cfg, px, 15, 1, 3, out) == GMLP_OK, "border 15x1: %s", gmlp_last_error(NULL));
}

/* The batch call: each image as the single call writes it, one after the
 * other; a bad image stops it with its index named. */
static void test_batch(void)
{
    gmlp_config cfg = {.size = sizeof cfg, .in_chans = 3, .img_h = 6, .img_w = 5, .crop_pct = 0.9f, .mean = {0.4f, 0.5f, 0.6f},
                       .std = {0.2f, 0.3f, 0.25f}};
    enum { N = 3, PLANE = 3 * 6 * 5 };
    static const int w[N] = {7, 3, 11}, h[N] = {4, 9, 11}, ch[N] = {3, 1, 4};
    uint8_t *px[N];
    float want[N * PLANE], got[N * PLANE];
    for (int i = 0; i < N; i++) {
        px[i] = malloc((size_t)w[i] * h[i] * ch[i]);
        for (int b = 0; b < w[i] * h[i] * ch[i]; b++)
            px[i][b] = (uint8_t)(b * 37 + i * 101);
        CHECK(gmlp_preprocess_rgb8(&cfg, px[i], w[i], h[i], ch[i], want + i * PLANE) == GMLP_OK, "image %d: %s", i,
              gmlp_last_error(NULL));
    }
    CHECK(gmlp_preprocess_rgb8_batch(&cfg, (const uint8_t *const *)px, w, h, ch, N, got) == GMLP_OK, "batch: %s",
          gmlp_last_error(NULL));
    CHECK(!memcmp(got, want, sizeof got), "batch: not the single calls' output");
    const int bad_ch[N] = {3, 1, 5};
    CHECK(gmlp_preprocess_rgb8_batch(&cfg, (const uint8_t *const *)px, w, h, bad_ch, N, got) ==
                  GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(NULL), "image 2"),
          "batch with a bad third image: %s", gmlp_last_error(NULL));
    CHECK(gmlp_preprocess_rgb8_batch(&cfg, (const uint8_t *const *)px, w, h, ch, 0, got) == GMLP_OK, "batch of 0");
    for (int i = 0; i < N; i++)
        free(px[i]);
}

/* gmlp_softmax_topk against a float64 softmax and a stable sort: ties in
 * index order, every k, extreme logits, and its refusals. */
static void test_topk(void)
{
    const float logits[] = {1.5f, -2.0f, 3.25f, 1.5f, 88.0f, -88.0f, 3.25f, 0.0f, 1.5f};
    enum { N = sizeof logits / sizeof *logits };
    double p[N], sum = 0, mx = 88.0;
    for (int i = 0; i < N; i++)
        sum += p[i] = exp((double)logits[i] - mx);
    int order[N];
    for (int i = 0; i < N; i++) {
        p[i] /= sum;
        order[i] = i;
    }
    for (int i = 1; i < N; i++) /* insertion sort: stable, descending */
        for (int j = i; j > 0 && logits[order[j]] > logits[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (int k = 1; k <= N; k++) {
        int32_t idx[N];
        float prob[N];
        CHECK(gmlp_softmax_topk(logits, N, k, idx, prob) == GMLP_OK, "k %d: %s", k, gmlp_last_error(NULL));
        for (int r = 0; r < k; r++) {
            CHECK(idx[r] == order[r], "k %d rank %d: index %d, expected %d", k, r, idx[r], order[r]);
            CHECK(fabs(prob[r] - p[order[r]]) <= 1e-6 * p[order[r]] + 1e-30, "k %d rank %d: prob %.9g, expected %.9g",
                  k, r, prob[r], p[order[r]]);
        }
    }
    int32_t idx[N];
    CHECK(gmlp_softmax_topk(logits, N, 3, idx, NULL) == GMLP_OK && idx[0] == 4 && idx[1] == 2 && idx[2] == 6,
          "prob NULL: %d %d %d", idx[0], idx[1], idx[2]);
    CHECK(gmlp_softmax_topk(logits, N, 0, idx, NULL) == GMLP_ERR_INVALID_ARGUMENT, "k 0");
    CHECK(gmlp_softmax_topk(logits, N, N + 1, idx, NULL) == GMLP_ERR_INVALID_ARGUMENT, "k > n");
    CHECK(gmlp_softmax_topk(NULL, N, 1, idx, NULL) == GMLP_ERR_INVALID_ARGUMENT, "NULL logits");
    CHECK(gmlp_softmax_topk(logits, N, 1, NULL, NULL) == GMLP_ERR_INVALID_ARGUMENT, "NULL index");
    float with_nan[N];
    memcpy(with_nan, logits, sizeof with_nan);
    with_nan[5] = NAN;
    CHECK(gmlp_softmax_topk(with_nan, N, 2, idx, NULL) == GMLP_ERR_INVALID_ARGUMENT &&
              strstr(gmlp_last_error(NULL), "NaN"),
          "a NaN logit: %s", gmlp_last_error(NULL));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: test_preprocess DIR\n");
        return 2;
    }
    char path[1024], line[1024];
    snprintf(path, sizeof path, "%s/cases.txt", argv[1]);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot open %s", path);
    int cases = 0;
    while (f && fgets(line, sizeof line, f))
        cases += run_case(argv[1], line);
    if (f)
        fclose(f);
    CHECK(cases >= 21, "only %d cases", cases);
    test_arguments();
    test_batch();
    test_topk();
    return check_summary("test_preprocess");
}
