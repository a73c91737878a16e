/* gmlp-classify: classify image files with a gMLP / MLP-Mixer model.
 * Images are decoded with stb_image and preprocessed by the library
 * (gmlp_preprocess_rgb8, timm's eval transform); without --model the bundled
 * Fashion-MNIST gMLP is used. */
#include <errno.h>
#include <getopt.h>
#include <gmlp.h>
#include <jansson.h>
#include <math.h>
#include <stb/stb_image.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "imagenet_labels.h"

#define DEFAULT_MODEL "fashion-mnist-gmlp.safetensors"
#define MAX_PIXELS (1 << 26) /* refuse larger images before decoding them: 4 bytes each */
#define BAR_WIDTH 20
#define REASON_SIZE 256 /* bytes of one image's error message */

typedef struct options {
    const char *model, *labels_file, *device;
    int top, batch, json, bench, list_devices, fp16;
    /* preprocessing overrides, parsed up front so that a malformed value is a
     * usage error; 0 / -1 when not given */
    int img_h, img_w, n_mean, n_std, interpolation;
    float mean[3], std[3], crop_pct;
} options;

typedef struct app {
    options opt;
    gmlp_context *ctx;
    gmlp_model *model;
    gmlp_config cfg;
    char **labels; /* from --labels */
    int n_labels;
    json_t *json; /* array of results with --json */
    int failures, classified;
    double model_s; /* seconds in gmlp_classify */
} app;

static void usage(FILE *f)
{
    fputs("usage: gmlp-classify [options] IMAGE...\n"
          "       gmlp-classify --list-devices\n"
          "Classifies images (PNG, JPEG, BMP, GIF, TGA, PSD, HDR, PIC, PNM) with a gMLP or MLP-Mixer model.\n\n"
          "  -m, --model FILE          safetensors model (default: $GMLP_MODEL, else the bundled Fashion-MNIST gMLP)\n"
          "  -l, --labels FILE         class names, one per line (default: the model's, ImageNet-1k for 1000 classes)\n"
          "  -k, --top K               classes to print per image (default 5)\n"
          "  -d, --device D            OpenCL device: index, gpu, cpu or a name substring (default $GMLP_DEVICE)\n"
          "  -b, --batch N             images per forward pass, 1..4096 (default 32)\n"
          "  -j, --json                one JSON document on stdout\n"
          "      --fp16                store the weights as half: half the device memory, fp32 arithmetic\n"
          "      --bench               print images/s on stderr (always with 16 or more images)\n"
          "      --list-devices        list OpenCL devices and exit\n"
          "  preprocessing overrides (default: the model's metadata):\n"
          "      --img-size S|H,W      must equal the model's input size\n"
          "      --mean a[,b,c]  --std a[,b,c]  --crop-pct F\n"
          "      --interpolation bicubic|bilinear|nearest\n"
          "  -h, --help\n"
          "Exit status: 0 all classified, 1 an image or the model failed, 2 usage error.\n"
          "Environment: GMLP_MODEL, GMLP_DEVICE, GMLP_CACHE_DIR, GMLP_LOG.\n",
          f);
}

static int list_devices(void)
{
    size_t n = gmlp_list_devices(NULL, 0);
    if (n == 0) {
        fprintf(stderr, "gmlp-classify: %s\n", gmlp_last_error(NULL));
        return 1;
    }
    char *buf = malloc(n + 1);
    if (!buf)
        return 1;
    gmlp_list_devices(buf, n + 1);
    /* each device, its limits and whether the library's kernels build there */
    int index = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"), index++) {
        char spec[16], report[16384];
        snprintf(spec, sizeof spec, "%d", index);
        if (gmlp_device_report(spec, report, sizeof report))
            fputs(report, stdout);
        else
            printf("%s\n   %s\n", line, gmlp_last_error(NULL));
    }
    free(buf);
    return 0;
}

/* A comma-separated list of 1..max numbers; returns the count, 0 if malformed. */
static int parse_int(const char *s, int lo, int hi, int *out)
{
    long long v;
    if (!app_parse_int(s, lo, hi, &v))
        return 0;
    *out = (int)v;
    return 1;
}

/* --img-size S or H,W */
static int parse_img_size(const char *s, options *o)
{
    double v[2];
    int n = app_parse_numbers(s, v, 2);
    for (int i = 0; i < n; i++)
        if (v[i] != floor(v[i]) || v[i] < 1 || v[i] > 65536)
            return 0;
    if (n) {
        o->img_h = (int)v[0];
        o->img_w = (int)v[n - 1];
    }
    return n != 0;
}

static int parse_norm(const char *s, float *dst, int *count)
{
    double v[3];
    *count = app_parse_numbers(s, v, 3);
    for (int i = 0; i < *count; i++)
        dst[i] = (float)v[i];
    return *count != 0;
}

static int parse_interpolation(const char *s, int *out)
{
    static const char *const names[] = {"bicubic", "bilinear", "nearest"};
    for (int k = 0; k < 3; k++)
        if (!strcmp(s, names[k])) {
            *out = k;
            return 1;
        }
    return 0;
}

/* One grey pixel through the library's checks: a bad combination (e.g. a
 * crop_pct that resizes to nothing) is reported once, not for every image. */
static int check_preprocessing(const gmlp_config *c)
{
    const uint8_t pixel = 128;
    float *out = malloc(sizeof *out * (size_t)c->in_chans * (size_t)c->img_h * (size_t)c->img_w);
    if (!out) {
        fprintf(stderr, "gmlp-classify: out of host memory\n");
        return 0;
    }
    gmlp_status st = gmlp_preprocess_rgb8(c, &pixel, 1, 1, 1, out);
    free(out);
    if (st != GMLP_OK)
        fprintf(stderr, "gmlp-classify: %s\n", gmlp_last_error(NULL));
    return st == GMLP_OK;
}

/* Applies the overrides to the preprocessing config once the model is known. */
static int apply_overrides(app *a)
{
    gmlp_config *c = &a->cfg;
    const options *o = &a->opt;
    if (o->img_h && (o->img_h != c->img_h || o->img_w != c->img_w)) {
        fprintf(stderr,
                "gmlp-classify: --img-size %dx%d does not fit the model, whose input is %dx%d (its token count and "
                "weights fix it)\n",
                o->img_h, o->img_w, c->img_h, c->img_w);
        return 0;
    }
    const int counts[2] = {o->n_mean, o->n_std};
    const float *src[2] = {o->mean, o->std};
    float *dst[2] = {c->mean, c->std};
    for (int i = 0; i < 2; i++) {
        if (!counts[i])
            continue;
        if (counts[i] != 1 && counts[i] != c->in_chans) {
            fprintf(stderr, "gmlp-classify: --%s needs %s for this %d-channel model\n", i ? "std" : "mean",
                    c->in_chans == 1 ? "1 value" : "1 or 3 values", c->in_chans);
            return 0;
        }
        for (int k = 0; k < c->in_chans; k++)
            dst[i][k] = src[i][counts[i] == 1 ? 0 : k];
    }
    if (o->crop_pct > 0)
        c->crop_pct = o->crop_pct;
    if (o->interpolation >= 0)
        c->interpolation = o->interpolation;
    return check_preprocessing(c);
}

/* --labels: one class name per line, any length. */
static int load_labels(app *a, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "gmlp-classify: cannot open labels file %s: %s\n", path, strerror(errno));
        return 0;
    }
    char *line = NULL;
    size_t cap = 0;
    int ok = 1;
    while (ok && getline(&line, &cap, f) != -1) {
        line[strcspn(line, "\r\n")] = 0;
        char **grown = realloc(a->labels, sizeof *grown * ((size_t)a->n_labels + 1));
        if (grown)
            a->labels = grown;
        ok = grown && (grown[a->n_labels] = strdup(line)) != NULL;
        a->n_labels += ok;
    }
    free(line);
    fclose(f);
    if (!ok)
        fprintf(stderr, "gmlp-classify: out of memory reading %s\n", path);
    else if (a->n_labels != a->cfg.num_classes)
        fprintf(stderr, "gmlp-classify: warning: %s has %d labels for %d classes\n", path, a->n_labels,
                a->cfg.num_classes);
    return ok;
}

static const char *label(const app *a, int i, char *buf, size_t size)
{
    /* a --labels file short of lines gives indices, not names from elsewhere */
    const int own = a->opt.labels_file != NULL;
    const char *l = own ? (i < a->n_labels ? a->labels[i] : NULL) : gmlp_model_label(a->model, i);
    if (!l && !own && a->cfg.num_classes == 1000)
        l = gmlp_imagenet_labels[i];
    if (l)
        return l;
    snprintf(buf, size, "class %d", i);
    return buf;
}

static json_t *jstr(const char *s)
{
    return app_json_bytes(s, strlen(s));
}

static void report_error(app *a, const char *file, const char *reason)
{
    a->failures++;
    fprintf(stderr, "%s: error: %s\n", file, reason);
    if (a->json)
        json_array_append_new(a->json, json_pack("{s:o, s:o}", "file", jstr(file), "error", jstr(reason)));
}

/* order[0..k): indices of the k largest logits, largest first. */
static void top_k(const float *logits, int nc, int *order, int k)
{
    for (int i = 0; i < nc; i++)
        order[i] = i;
    for (int i = 0; i < k; i++) /* partial selection sort: k is small */
        for (int j = i + 1; j < nc; j++)
            if (logits[order[j]] > logits[order[i]]) {
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
}

static void print_line(double p, const char *name)
{
    char bar[BAR_WIDTH + 1];
    int n = (int)lround(p * BAR_WIDTH);
    memset(bar, '#', (size_t)n);
    memset(bar + n, ' ', (size_t)(BAR_WIDTH - n));
    bar[BAR_WIDTH] = 0;
    printf("  %6.2f%%  %s  %s\n", 100 * p, bar, name);
}

/* Softmax of one row of logits, then the top-K printed or added to the JSON. */
static void report(app *a, const char *file, const float *logits)
{
    int nc = a->cfg.num_classes, k = a->opt.top < nc ? a->opt.top : nc;
    int *order = malloc(sizeof *order * (size_t)nc);
    if (!order) {
        report_error(a, file, "out of host memory");
        return;
    }
    top_k(logits, nc, order, k);
    double maxl = logits[order[0]], sum = 0;
    for (int i = 0; i < nc; i++)
        sum += exp(logits[i] - maxl);
    json_t *top = a->json ? json_array() : NULL;
    if (!a->json)
        printf("%s\n", file);
    for (int i = 0; i < k; i++) {
        char buf[32];
        double p = exp(logits[order[i]] - maxl) / sum;
        const char *name = label(a, order[i], buf, sizeof buf);
        if (top)
            json_array_append_new(top, json_pack("{s:i, s:o, s:f}", "index", order[i], "label", jstr(name), "prob", p));
        else
            print_line(p, name);
    }
    if (top)
        json_array_append_new(a->json, json_pack("{s:o, s:o}", "file", jstr(file), "top", top));
    free(order);
    a->classified++;
}

/* The size a PNG declares, read from its IHDR: stb refuses PNGs over 2^30
 * decoded bytes with only "unknown image type", which hides the reason. */
static int png_size(FILE *f, unsigned long *w, unsigned long *h)
{
    unsigned char b[24];
    int ok = fread(b, 1, sizeof b, f) == sizeof b && !memcmp(b, "\x89PNG\r\n\x1a\n", 8) && !memcmp(b + 12, "IHDR", 4);
    rewind(f);
    if (ok) {
        *w = (unsigned long)b[16] << 24 | (unsigned long)b[17] << 16 | (unsigned long)b[18] << 8 | b[19];
        *h = (unsigned long)b[20] << 24 | (unsigned long)b[21] << 16 | (unsigned long)b[22] << 8 | b[23];
    }
    return ok;
}

/* Decodes the file, refusing huge images before decoding; NULL with the
 * reason in why (REASON_SIZE bytes) on failure. */
static unsigned char *decode(FILE *f, int *w, int *h, int *ch, char *why)
{
    unsigned long dw, dh;
    int known = png_size(f, &dw, &dh);
    if (!known && stbi_info_from_file(f, w, h, ch)) {
        dw = (unsigned long)*w;
        dh = (unsigned long)*h;
        known = 1;
    }
    if (known && (!dw || !dh || (double)dw * dh > MAX_PIXELS)) {
        snprintf(why, REASON_SIZE, "image dimensions %lux%lu are zero or over the limit of 2^26 pixels", dw, dh);
        return NULL;
    }
    unsigned char *px = known ? stbi_load_from_file(f, w, h, ch, 0) : NULL;
    if (!px) {
        const char *r = stbi_failure_reason();
        snprintf(why, REASON_SIZE, "%s", r ? r : "cannot decode the image");
    }
    return px;
}

/* Decodes and preprocesses one file into dst; 0 with the reason in why. */
static int load_image(const app *a, const char *file, float *dst, char *why)
{
    FILE *f = fopen(file, "rb");
    if (!f) {
        snprintf(why, REASON_SIZE, "%s", strerror(errno));
        return 0;
    }
    int w, h, ch;
    unsigned char *px = decode(f, &w, &h, &ch, why);
    fclose(f);
    if (!px)
        return 0;
    gmlp_status st = gmlp_preprocess_rgb8(&a->cfg, px, w, h, ch, dst);
    stbi_image_free(px);
    if (st != GMLP_OK)
        snprintf(why, REASON_SIZE, "%s", gmlp_last_error(NULL));
    return st == GMLP_OK;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Classifies files[0..n) (n <= batch): decoded into consecutive slots, then
 * one forward pass, then reported in input order, failures included. */
static int classify_batch(app *a, char **files, int n, float *images, float *logits, char *why)
{
    const size_t per = (size_t)a->cfg.in_chans * a->cfg.img_h * a->cfg.img_w;
    size_t b = 0;
    for (int i = 0; i < n; i++) {
        /* kept per file: stb's and the library's messages are overwritten by the next image */
        char *reason = why + (size_t)i * REASON_SIZE;
        *reason = 0;
        b += (size_t)load_image(a, files[i], images + per * b, reason);
    }
    const double t0 = now();
    if (b && gmlp_classify(a->model, images, b, logits) != GMLP_OK) {
        fprintf(stderr, "gmlp-classify: %s\n", gmlp_last_error(a->ctx));
        return 0;
    }
    a->model_s += now() - t0;
    for (int i = 0, j = 0; i < n; i++) {
        const char *reason = why + (size_t)i * REASON_SIZE;
        if (*reason)
            report_error(a, files[i], reason);
        else
            report(a, files[i], logits + (size_t)j++ * a->cfg.num_classes);
    }
    return 1;
}

static int classify_files(app *a, char **files, int n)
{
    const size_t per = (size_t)a->cfg.in_chans * a->cfg.img_h * a->cfg.img_w, batch = (size_t)a->opt.batch;
    float *images = malloc(sizeof(float) * per * batch);
    float *logits = malloc(sizeof(float) * (size_t)a->cfg.num_classes * batch);
    char *why = malloc(REASON_SIZE * batch);
    int ok = images && logits && why;
    if (!ok)
        fprintf(stderr, "gmlp-classify: out of host memory\n");
    const int progress = isatty(STDERR_FILENO) && n > 16;
    const double t0 = now();
    for (int i = 0; ok && i < n; i += a->opt.batch) {
        int m = n - i < a->opt.batch ? n - i : a->opt.batch;
        ok = classify_batch(a, files + i, m, images, logits, why);
        if (progress)
            fprintf(stderr, "\r%d/%d images", i + m, n);
    }
    if (progress)
        fputc('\n', stderr);
    const double total = now() - t0;
    if (ok && (n >= 16 || a->opt.bench) && a->classified)
        fprintf(stderr, "%d images in %.3f s: %.1f images/s end to end, %.1f images/s in the model (%s)\n",
                a->classified, total, a->classified / total, a->classified / a->model_s,
                gmlp_context_device_name(a->ctx));
    free(images);
    free(logits);
    free(why);
    return ok;
}

enum { OPT_BENCH = 256, OPT_LIST, OPT_IMG, OPT_MEAN, OPT_STD, OPT_CROP, OPT_INTERP, OPT_FP16 };

static const struct option longopts[] = {
    {"model", required_argument, 0, 'm'},    {"labels", required_argument, 0, 'l'},
    {"top", required_argument, 0, 'k'},      {"device", required_argument, 0, 'd'},
    {"batch", required_argument, 0, 'b'},    {"json", no_argument, 0, 'j'},
    {"help", no_argument, 0, 'h'},           {"bench", no_argument, 0, OPT_BENCH},
    {"list-devices", no_argument, 0, OPT_LIST}, {"img-size", required_argument, 0, OPT_IMG},
    {"mean", required_argument, 0, OPT_MEAN}, {"std", required_argument, 0, OPT_STD},
    {"crop-pct", required_argument, 0, OPT_CROP}, {"interpolation", required_argument, 0, OPT_INTERP},
    {"fp16", no_argument, 0, OPT_FP16},      {0, 0, 0, 0},
};

static const char *option_name(int c)
{
    const struct option *l = longopts;
    while (l->name && l->val != c)
        l++;
    return l->name ? l->name : "?";
}

/* One option's value; 0 (with a message) when it is malformed. */
static int parse_value(int c, const char *arg, options *o)
{
    int ok = 1;
    double v;
    switch (c) {
    case 'k': ok = parse_int(arg, 1, 1 << 20, &o->top); break;
    case 'b': ok = parse_int(arg, 1, 4096, &o->batch); break;
    case OPT_IMG: ok = parse_img_size(arg, o); break;
    case OPT_MEAN: ok = parse_norm(arg, o->mean, &o->n_mean); break;
    case OPT_STD:
        ok = parse_norm(arg, o->std, &o->n_std);
        for (int i = 0; i < o->n_std; i++)
            ok = ok && o->std[i] > 0;
        break;
    case OPT_CROP:
        /* > 1 is allowed: the centre crop then pads, as torchvision's does */
        ok = app_parse_numbers(arg, &v, 1) == 1 && v > 0;
        o->crop_pct = (float)v;
        break;
    case OPT_INTERP: ok = parse_interpolation(arg, &o->interpolation); break;
    default: ok = 0;
    }
    if (!ok)
        fprintf(stderr, "gmlp-classify: invalid value '%s' for --%s\n", arg, option_name(c));
    return ok;
}

static int parse_args(int argc, char **argv, options *o)
{
    o->top = 5;
    o->batch = 32;
    o->interpolation = -1;
    for (int c; (c = getopt_long(argc, argv, "m:l:k:d:b:jh", longopts, NULL)) != -1;) {
        switch (c) {
        case 'm': o->model = optarg; break;
        case 'l': o->labels_file = optarg; break;
        case 'd': o->device = optarg; break;
        case 'j': o->json = 1; break;
        case 'h': usage(stdout); exit(0);
        case OPT_BENCH: o->bench = 1; break;
        case OPT_LIST: o->list_devices = 1; break;
        case OPT_FP16: o->fp16 = 1; break;
        case '?': return 0; /* getopt said why */
        default:
            if (!parse_value(c, optarg, o))
                return 0;
        }
    }
    return 1;
}

static int run(app *a, char **files, int n)
{
    const char *path = a->opt.model ? a->opt.model : app_default_model("GMLP_MODEL", DEFAULT_MODEL);
    if (gmlp_context_create(a->opt.device, &a->ctx) != GMLP_OK) {
        fprintf(stderr, "gmlp-classify: %s\n", gmlp_last_error(NULL));
        return 0;
    }
    gmlp_load_options lo;
    gmlp_load_options_default(&lo);
    lo.weights = a->opt.fp16 ? GMLP_WEIGHTS_F16 : GMLP_WEIGHTS_F32;
    if (gmlp_model_load_ex(a->ctx, path, &lo, &a->model) != GMLP_OK) {
        fprintf(stderr, "gmlp-classify: %s\n", gmlp_last_error(a->ctx));
        return 0;
    }
    gmlp_model_config(a->model, &a->cfg);
    if (a->cfg.num_classes == 0) {
        fprintf(stderr, "gmlp-classify: %s has no classifier head (a feature extractor); nothing to classify\n", path);
        return 0;
    }
    if (!apply_overrides(a) || (a->opt.labels_file && !load_labels(a, a->opt.labels_file)))
        return 0;
    if (a->opt.json)
        a->json = json_array();
    int ok = classify_files(a, files, n);
    if (ok && a->json) {
        json_t *doc = json_pack("{s:o, s:o, s:O}", "model", jstr(path), "device",
                                jstr(gmlp_context_device_name(a->ctx)), "results", a->json);
        json_dumpf(doc, stdout, JSON_INDENT(2));
        putchar('\n');
        json_decref(doc);
    }
    return ok;
}

int main(int argc, char **argv)
{
    app a = {0};
    if (!parse_args(argc, argv, &a.opt)) {
        fputs("Try 'gmlp-classify --help'.\n", stderr);
        return 2;
    }
    if (a.opt.list_devices)
        return list_devices();
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    int ok = run(&a, argv + optind, argc - optind);
    json_decref(a.json);
    for (int i = 0; i < a.n_labels; i++)
        free(a.labels[i]);
    free(a.labels);
    gmlp_model_free(a.model);
    gmlp_context_destroy(a.ctx);
    if (!ok)
        return 1;
    return a.failures ? 1 : 0;
}
