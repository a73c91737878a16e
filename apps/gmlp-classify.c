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

#include "imagenet_labels.h"

#ifndef GMLP_DATADIR
#define GMLP_DATADIR "/usr/local/share/gmlp-cl"
#endif
#ifndef GMLP_SOURCE_ROOT
#define GMLP_SOURCE_ROOT "."
#endif
#define DEFAULT_MODEL "/models/fashion-mnist-gmlp.safetensors"
#define MAX_PIXELS (1L << 26) /* refuse larger images before decoding them */
#define BAR_WIDTH 20

typedef struct options {
    const char *model, *labels_file, *device;
    int top, batch, json, bench;
    const char *img_size, *mean, *std, *crop_pct, *interpolation;
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
} app;

static void usage(FILE *f)
{
    fputs("usage: gmlp-classify [options] IMAGE...\n"
          "       gmlp-classify --list-devices\n"
          "Classifies images (PNG, JPEG, BMP, GIF, TGA, PSD, HDR, PIC, PNM) with a gMLP or MLP-Mixer model.\n\n"
          "  -m, --model FILE          safetensors model (default: the bundled Fashion-MNIST gMLP)\n"
          "  -l, --labels FILE         class names, one per line\n"
          "  -k, --top K               classes to print per image (default 5)\n"
          "  -d, --device D            OpenCL device: index, gpu, cpu or a name substring\n"
          "  -b, --batch N             images per forward pass (default 32)\n"
          "  -j, --json                machine-readable output\n"
          "      --bench               print images/s\n"
          "      --list-devices        list OpenCL devices and exit\n"
          "  overrides for metadata the model file lacks:\n"
          "      --img-size S|H,W      must equal the model's input size\n"
          "      --mean a[,b,c]  --std a[,b,c]  --crop-pct F  --interpolation bicubic|bilinear|nearest\n"
          "  -h, --help\n"
          "Environment: GMLP_MODEL (default model), GMLP_DEVICE, GMLP_CACHE_DIR, GMLP_LOG.\n",
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
    fputs(buf, stdout);
    free(buf);
    return 0;
}

static int parse_floats(const char *s, float *v, int max)
{
    int n = 0;
    char *end;
    while (n < max) {
        v[n++] = strtof(s, &end);
        if (end == s)
            return -1;
        if (*end != ',')
            return *end ? -1 : n;
        s = end + 1;
    }
    return -1;
}

/* Applies the metadata overrides to the preprocessing config. */
static int apply_overrides(app *a)
{
    gmlp_config *c = &a->cfg;
    const options *o = &a->opt;
    if (o->img_size) {
        float v[2];
        int n = parse_floats(o->img_size, v, 2);
        int h = n > 0 ? (int)v[0] : -1, w = n > 0 ? (int)v[n - 1] : -1;
        if (h != c->img_h || w != c->img_w) {
            fprintf(stderr, "gmlp-classify: --img-size %s does not match the model's %dx%d input (the token count fixes it)\n",
                    o->img_size, c->img_h, c->img_w);
            return 0;
        }
    }
    const char *norm[2] = {o->mean, o->std};
    float *dst[2] = {c->mean, c->std};
    for (int i = 0; i < 2; i++) {
        float v[3];
        if (!norm[i])
            continue;
        int n = parse_floats(norm[i], v, 3);
        if (n != 1 && n != c->in_chans) {
            fprintf(stderr, "gmlp-classify: --%s needs 1 or %d comma-separated values\n", i ? "std" : "mean",
                    c->in_chans);
            return 0;
        }
        for (int k = 0; k < c->in_chans; k++)
            dst[i][k] = v[n == 1 ? 0 : k];
    }
    if (o->crop_pct && (parse_floats(o->crop_pct, &c->crop_pct, 1) != 1 || !(c->crop_pct > 0) || c->crop_pct > 1)) {
        fprintf(stderr, "gmlp-classify: --crop-pct must be a decimal in (0, 1]\n");
        return 0;
    }
    if (o->interpolation) {
        static const char *const names[] = {"bicubic", "bilinear", "nearest"};
        int k = 0;
        while (k < 3 && strcmp(o->interpolation, names[k]))
            k++;
        if (k == 3) {
            fprintf(stderr, "gmlp-classify: --interpolation must be bicubic, bilinear or nearest\n");
            return 0;
        }
        c->interpolation = k;
    }
    return 1;
}

static int load_labels(app *a, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "gmlp-classify: cannot open labels file %s\n", path);
        return 0;
    }
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        char **grown = realloc(a->labels, sizeof *grown * (size_t)(a->n_labels + 1));
        if (!grown || !(grown[a->n_labels] = strdup(line))) {
            free(grown);
            fclose(f);
            return 0;
        }
        a->labels = grown;
        a->n_labels++;
    }
    fclose(f);
    if (a->n_labels != a->cfg.num_classes)
        fprintf(stderr, "gmlp-classify: warning: %s has %d labels for %d classes\n", path, a->n_labels,
                a->cfg.num_classes);
    return 1;
}

static const char *label(const app *a, int i, char *buf, size_t size)
{
    if (a->labels)
        return i < a->n_labels ? a->labels[i] : "?";
    const char *l = gmlp_model_label(a->model, i);
    if (l)
        return l;
    if (a->cfg.num_classes == 1000)
        return gmlp_imagenet_labels[i];
    snprintf(buf, size, "class %d", i);
    return buf;
}

static const char *default_model(void)
{
    const char *env = getenv("GMLP_MODEL");
    if (env && *env)
        return env;
    static char path[4096];
    const char *roots[] = {GMLP_DATADIR, GMLP_SOURCE_ROOT};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s%s", roots[i], DEFAULT_MODEL);
        if (access(path, R_OK) == 0)
            return path;
    }
    snprintf(path, sizeof path, "%s%s", GMLP_DATADIR, DEFAULT_MODEL);
    return path;
}

static void report_error(app *a, const char *file, const char *reason)
{
    a->failures++;
    fprintf(stderr, "%s: error: %s\n", file, reason);
    if (a->json)
        json_array_append_new(a->json, json_pack("{s:s, s:s}", "file", file, "error", reason));
}

/* Softmax of one row of logits, then the top-K printed or added to the JSON. */
static void report(app *a, const char *file, const float *logits)
{
    int nc = a->cfg.num_classes, k = a->opt.top < nc ? a->opt.top : nc;
    double maxl = logits[0], sum = 0;
    for (int i = 1; i < nc; i++)
        maxl = fmax(maxl, logits[i]);
    for (int i = 0; i < nc; i++)
        sum += exp(logits[i] - maxl);
    int *order = malloc(sizeof *order * (size_t)nc);
    for (int i = 0; i < nc; i++)
        order[i] = i;
    for (int i = 0; i < k; i++) /* partial selection sort: k is small */
        for (int j = i + 1; j < nc; j++)
            if (logits[order[j]] > logits[order[i]]) {
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
    json_t *top = a->json ? json_array() : NULL;
    if (!a->json)
        printf("%s\n", file);
    for (int i = 0; i < k; i++) {
        char buf[32];
        double p = exp(logits[order[i]] - maxl) / sum;
        const char *name = label(a, order[i], buf, sizeof buf);
        if (top) {
            json_array_append_new(top, json_pack("{s:i, s:s, s:f}", "index", order[i], "label", name, "prob", p));
        } else {
            char bar[BAR_WIDTH + 1];
            int n = (int)lround(p * BAR_WIDTH);
            memset(bar, '#', (size_t)n);
            memset(bar + n, ' ', (size_t)(BAR_WIDTH - n));
            bar[BAR_WIDTH] = 0;
            printf("  %6.2f%%  %s  %s\n", 100 * p, bar, name);
        }
    }
    if (top)
        json_array_append_new(a->json, json_pack("{s:s, s:o}", "file", file, "top", top));
    free(order);
    a->classified++;
}

/* Decodes and preprocesses one file into dst; on failure says why. */
static const char *load_image(const app *a, const char *file, float *dst)
{
    int w, h, ch;
    FILE *f = fopen(file, "rb");
    if (!f)
        return strerror(errno);
    unsigned char *px = NULL;
    const char *why = NULL;
    if (!stbi_info_from_file(f, &w, &h, &ch))
        why = stbi_failure_reason();
    else if (w <= 0 || h <= 0 || (long)w * h > MAX_PIXELS)
        why = "image dimensions are zero or too large (over 2^26 pixels)";
    else if (!(px = stbi_load_from_file(f, &w, &h, &ch, 0)))
        why = stbi_failure_reason();
    fclose(f);
    if (why)
        return why;
    gmlp_status st = gmlp_preprocess_rgb8(&a->cfg, px, w, h, ch, dst);
    stbi_image_free(px);
    return st == GMLP_OK ? NULL : gmlp_last_error(NULL);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int classify_files(app *a, char **files, int n)
{
    const size_t per = (size_t)a->cfg.in_chans * a->cfg.img_h * a->cfg.img_w;
    const int batch = a->opt.batch;
    float *images = malloc(sizeof(float) * per * (size_t)batch);
    float *logits = malloc(sizeof(float) * (size_t)a->cfg.num_classes * (size_t)batch);
    const char **names = malloc(sizeof *names * (size_t)batch);
    if (!images || !logits || !names) {
        fprintf(stderr, "gmlp-classify: out of memory\n");
        free(images), free(logits), free(names);
        return 0;
    }
    int progress = isatty(2) && n > 16 && !a->opt.json;
    double t0 = now(), t_model = 0;
    for (int i = 0; i < n;) {
        int b = 0;
        for (; i < n && b < batch; i++) {
            const char *why = load_image(a, files[i], images + per * (size_t)b);
            if (why)
                report_error(a, files[i], why);
            else
                names[b++] = files[i];
        }
        if (b == 0)
            continue;
        double t1 = now();
        if (gmlp_classify(a->model, images, (size_t)b, logits) != GMLP_OK) {
            fprintf(stderr, "gmlp-classify: %s\n", gmlp_last_error(a->ctx));
            free(images), free(logits), free(names);
            return 0;
        }
        t_model += now() - t1;
        for (int j = 0; j < b; j++)
            report(a, names[j], logits + (size_t)j * a->cfg.num_classes);
        if (progress)
            fprintf(stderr, "\r%d/%d images", i, n);
    }
    if (progress)
        fputc('\n', stderr);
    double total = now() - t0;
    if ((n >= 16 || a->opt.bench) && a->classified)
        fprintf(stderr, "%d images in %.3f s: %.1f images/s end to end, %.1f images/s in the model (%s)\n",
                a->classified, total, a->classified / total, a->classified / t_model,
                gmlp_context_device_name(a->ctx));
    free(images), free(logits), free(names);
    return 1;
}

static int parse_args(int argc, char **argv, options *o, int *list)
{
    enum { OPT_BENCH = 256, OPT_LIST, OPT_IMG, OPT_MEAN, OPT_STD, OPT_CROP, OPT_INTERP };
    static const struct option longopts[] = {
        {"model", required_argument, 0, 'm'},    {"labels", required_argument, 0, 'l'},
        {"top", required_argument, 0, 'k'},      {"device", required_argument, 0, 'd'},
        {"batch", required_argument, 0, 'b'},    {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},           {"bench", no_argument, 0, OPT_BENCH},
        {"list-devices", no_argument, 0, OPT_LIST}, {"img-size", required_argument, 0, OPT_IMG},
        {"mean", required_argument, 0, OPT_MEAN}, {"std", required_argument, 0, OPT_STD},
        {"crop-pct", required_argument, 0, OPT_CROP}, {"interpolation", required_argument, 0, OPT_INTERP},
        {0, 0, 0, 0},
    };
    o->top = 5;
    o->batch = 32;
    for (int c; (c = getopt_long(argc, argv, "m:l:k:d:b:jh", longopts, NULL)) != -1;) {
        switch (c) {
        case 'm': o->model = optarg; break;
        case 'l': o->labels_file = optarg; break;
        case 'k': o->top = atoi(optarg); break;
        case 'd': o->device = optarg; break;
        case 'b': o->batch = atoi(optarg); break;
        case 'j': o->json = 1; break;
        case 'h': usage(stdout); exit(0);
        case OPT_BENCH: o->bench = 1; break;
        case OPT_LIST: *list = 1; break;
        case OPT_IMG: o->img_size = optarg; break;
        case OPT_MEAN: o->mean = optarg; break;
        case OPT_STD: o->std = optarg; break;
        case OPT_CROP: o->crop_pct = optarg; break;
        case OPT_INTERP: o->interpolation = optarg; break;
        default: return 0;
        }
    }
    if (o->top < 1 || o->batch < 1 || o->batch > 4096) {
        fprintf(stderr, "gmlp-classify: --top must be ≥ 1 and --batch in [1, 4096]\n");
        return 0;
    }
    return 1;
}

static int run(app *a, char **files, int n)
{
    const char *path = a->opt.model ? a->opt.model : default_model();
    if (gmlp_context_create(a->opt.device, &a->ctx) != GMLP_OK) {
        fprintf(stderr, "gmlp-classify: %s\n", gmlp_last_error(NULL));
        return 0;
    }
    if (gmlp_model_load(a->ctx, path, &a->model) != GMLP_OK) {
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
        json_t *doc = json_pack("{s:s, s:s, s:O}", "model", path, "device", gmlp_context_device_name(a->ctx),
                                "results", a->json);
        json_dumpf(doc, stdout, JSON_INDENT(2));
        putchar('\n');
        json_decref(doc);
    }
    return ok;
}

int main(int argc, char **argv)
{
    app a = {0};
    int list = 0;
    if (!parse_args(argc, argv, &a.opt, &list)) {
        usage(stderr);
        return 2;
    }
    if (list)
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
