/* gmlp-classify: classify images, folders of images or lists of them with a
 * gMLP / MLP-Mixer model, on one device, every device of the machine, or many
 * machines under mpirun.  Images are decoded with stb_image and preprocessed
 * by the library (timm's eval transform); without --model the bundled
 * Fashion-MNIST gMLP is used.  This file: the options; classify_run.c,
 * inputs.c, batch.c, scheduler.c, sink.c, format.c, output.c, mpi_run.c do the rest. */
#include <errno.h>
#include <getopt.h>
#include <gmlp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classify.h"
#include "eval.h"
#include "common.h"
#include "devices.h"
#include "portable.h"

#define MAX_TOP (1 << 20)
#define MAX_BATCH 4096
#define MAX_THREADS 256

static void usage(FILE *f)
{
    fputs("usage: gmlp-classify [options] IMAGE|FOLDER...\n"
          "       gmlp-classify [options] --files-from LIST --output OUT.jsonl|OUT.csv\n"
          "       gmlp-classify --features [options] --output OUT.npy|OUT.jsonl|OUT.csv IMAGE|FOLDER...\n"
          "       gmlp-classify --eval [options] [--svg OUT.svg] [--output OUT.jsonl|OUT.csv] TREE|LABELS.csv...\n"
          "       mpirun -n N gmlp-classify [options] --output OUT.jsonl IMAGE|FOLDER...\n"
          "       gmlp-classify --list-devices | --version | --help\n"
          "Classifies images (PNG, JPEG, WebP, BMP, GIF, TGA, PSD, HDR, PIC, PNM) with a gMLP, MLP-Mixer or ResMLP model.\n\n"
          "  -m, --model PATH          safetensors model or model folder (default: $GMLP_MODEL, else the bundled\n"
          "                            Fashion-MNIST gMLP)\n"
          "  -l, --labels FILE         class names, one per line (default: the model's, ImageNet-1k for 1000 classes)\n"
          "  -k, --top K               classes per image, 1..1048576 (default 5)\n"
          "  -d, --device D[,D...]     OpenCL device(s): index, gpu, cpu or a name substring, comma-separated, or\n"
          "                            'all' (default: $GMLP_DEVICE, else the first GPU)\n"
          "  -b, --batch N             images per batch and forward pass, 1..4096 (default 32)\n"
          "  -t, --threads N           host threads decoding and preprocessing, 1..256 (default: the cores)\n"
          "  -r, --recursive           descend into subfolders (default: off; symlinked folders are not followed)\n"
          "      --files-from FILE     also classify the paths in FILE, one per line ('-' = stdin)\n"
          "  -o, --output FILE         write one row per image to FILE ('-' = stdout; default: text on stdout);\n"
          "                            format by extension .jsonl or .csv; an existing FILE is refused\n"
          "      --format jsonl|csv    the output format (default: FILE's extension; jsonl for '-')\n"
          "      --resume              continue an existing --output: skip the images it holds\n"
          "      --retry-errors        with --resume: classify again the images that failed (default: off)\n"
          "  -j, --json                one JSON document on stdout (default: text)\n"
          "      --features            each image's pooled features (the embedding: timm's forward_head(pre_logits=True),\n"
          "                            the model's dim floats) instead of its classes (default: off); also for models\n"
          "                            without a classifier head.  Written as .npy (float32, shape (n, dim); the rows'\n"
          "                            files in OUT.paths.txt, one a line; failed images have no row and --resume\n"
          "                            tries them again: it keeps the rows both files hold and rewrites the shape),\n"
          "                            .jsonl ({\"file\", \"embedding\"}) or .csv (file,error,0,1,...); jsonl on stdout\n"
          "      --eval                score the model on labelled images: each argument an ImageFolder tree (an image's\n"
          "                            class is the name of the folder holding it; classes in timm's natural order of\n"
          "                            the names) or a CSV of path,label lines (path relative to the CSV, label a class\n"
          "                            index or name); prints top-1 and top-5 accuracy (timm.utils.accuracy), per-class\n"
          "                            precision and recall and the most confused pairs as Markdown (-j: JSON, with the\n"
          "                            whole confusion matrix); --output keeps each image's row, for --resume\n"
          "      --class-map FILE      --eval's classes: one name a line, line i class i (timm's class_map; images of\n"
          "                            other folders are left out)\n"
          "      --svg FILE            --eval's confusion matrix as an SVG picture (over 100 classes: the 100 with the\n"
          "                            most errors)\n"
          "  -q, --quiet               no progress line, summary or notes on stderr (default: off)\n"
          "      --fp16                store the weights as half: half the device memory, fp32 arithmetic (default: off)\n"
          "      --precision P         fp32, tf32, fp16 or bf16: the format the operands of every matrix product are\n"
          "                            rounded to, accumulated in fp32 (default: $GMLP_PRECISION, else fp32)\n"
          "      --bench               print the summary (images/s) even for fewer than 16 images (default: off)\n"
          "      --list-devices        list OpenCL devices and exit\n"
          "  preprocessing overrides (default: the model's metadata or config.json, else timm's defaults):\n"
          "      --img-size S|H,W      must give the model's token count\n"
          "      --mean a[,b,c]        --std a[,b,c] (positive)\n"
          "      --crop-pct F          in (0, 4]\n"
          "      --interpolation bicubic|bilinear|nearest|box|hamming|lanczos\n"
          "  -V, --version             print the version and exit\n"
          "  -h, --help                print this help and exit\n"
          "Exit status: 0 every image classified, 1 an image, a device or the model failed, 2 usage error.\n"
          "Environment: GMLP_MODEL, GMLP_DEVICE, GMLP_PRECISION, GMLP_CACHE_DIR, GMLP_LOG; GMLP_TEST_FAIL=DEVICE:N\n"
          "(tests: the device at position DEVICE of --device fails its N-th batch).\n",
          f);
}

static int list_devices(void)
{
    size_t n = gmlp_list_devices(NULL, 0);
    if (n == 0) {
        fprintf(stderr, "gmlp-classify: %s\n", gmlp_last_error(NULL));
        return APP_EXIT_FAIL;
    }
    char *buf = malloc(n + 1);
    if (!buf)
        return APP_EXIT_FAIL;
    gmlp_list_devices(buf, n + 1);
    /* each device, its limits and whether the library's kernels build there */
    int index = 0;
    char *rest; /* strtok_r: gmlp_device_report must not end this loop's strtok */
    for (char *line = strtok_r(buf, "\n", &rest); line; line = strtok_r(NULL, "\n", &rest), index++) {
        char spec[16], report[16384];
        snprintf(spec, sizeof spec, "%d", index);
        if (gmlp_device_report(spec, report, sizeof report))
            fputs(report, stdout);
        else
            printf("%s\n   %s\n", line, gmlp_last_error(NULL));
    }
    free(buf);
    return APP_EXIT_OK;
}

enum {
    OPT_BENCH = 256, OPT_LIST, OPT_IMG, OPT_MEAN, OPT_STD, OPT_CROP, OPT_INTERP, OPT_FP16, OPT_FILES_FROM,
    OPT_FORMAT, OPT_RESUME, OPT_RETRY, OPT_PRECISION, OPT_FEATURES, OPT_EVAL, OPT_CLASS_MAP, OPT_SVG,
};

static const struct option longopts[] = {
    {"model", required_argument, 0, 'm'},        {"labels", required_argument, 0, 'l'},
    {"top", required_argument, 0, 'k'},          {"device", required_argument, 0, 'd'},
    {"batch", required_argument, 0, 'b'},        {"threads", required_argument, 0, 't'},
    {"json", no_argument, 0, 'j'},               {"help", no_argument, 0, 'h'},
    {"version", no_argument, 0, 'V'},            {"quiet", no_argument, 0, 'q'},
    {"recursive", no_argument, 0, 'r'},          {"output", required_argument, 0, 'o'},
    {"files-from", required_argument, 0, OPT_FILES_FROM}, {"format", required_argument, 0, OPT_FORMAT},
    {"resume", no_argument, 0, OPT_RESUME},      {"retry-errors", no_argument, 0, OPT_RETRY},
    {"bench", no_argument, 0, OPT_BENCH},        {"list-devices", no_argument, 0, OPT_LIST},
    {"img-size", required_argument, 0, OPT_IMG}, {"mean", required_argument, 0, OPT_MEAN},
    {"std", required_argument, 0, OPT_STD},      {"crop-pct", required_argument, 0, OPT_CROP},
    {"interpolation", required_argument, 0, OPT_INTERP}, {"fp16", no_argument, 0, OPT_FP16},
    {"precision", required_argument, 0, OPT_PRECISION}, {"features", no_argument, 0, OPT_FEATURES},
    {"eval", no_argument, 0, OPT_EVAL},          {"class-map", required_argument, 0, OPT_CLASS_MAP},
    {"svg", required_argument, 0, OPT_SVG},
    {0, 0, 0, 0},
};

static const char *option_name(int c)
{
    const struct option *l = longopts;
    while (l->name && l->val != c)
        l++;
    return l->name ? l->name : "?";
}

static int parse_count(const char *s, int hi, int *out)
{
    long long v;
    if (!app_parse_int(s, 1, hi, &v))
        return 0;
    *out = (int)v;
    return 1;
}

static void add_override(app_options *o, const char *key, const char *value)
{
    for (int i = 0; i < o->n_overrides; i++)
        if (!strcmp(o->override_keys[i], key)) { /* the last one given wins */
            o->override_values[i] = value;
            return;
        }
    o->override_keys[o->n_overrides] = key;
    o->override_values[o->n_overrides++] = value;
}

/* One option's value; 0 (with a message naming the valid values) when malformed. */
static int parse_value(int c, const char *arg, app_options *o)
{
    double v[3];
    int n, ok;
    const char *valid;
    switch (c) {
    case 'k': ok = parse_count(arg, MAX_TOP, &o->top), o->top_given = 1, valid = "an integer in 1..1048576"; break;
    case 'b': ok = parse_count(arg, MAX_BATCH, &o->batch), valid = "an integer in 1..4096"; break;
    case 't': ok = parse_count(arg, MAX_THREADS, &o->threads), valid = "an integer in 1..256"; break;
    case OPT_FORMAT: /* read once --features is known (parse_args) */
        o->format_name = arg;
        ok = 1;
        break;
    case OPT_IMG:
        n = app_parse_numbers(arg, v, 2);
        ok = n > 0;
        for (int i = 0; i < n; i++)
            ok = ok && v[i] == (int)v[i] && v[i] >= 1 && v[i] <= 65536;
        valid = "S or H,W with integers in 1..65536";
        if (ok)
            add_override(o, "img_size", arg);
        break;
    case OPT_MEAN:
    case OPT_STD:
        n = app_parse_numbers(arg, v, 3);
        ok = n == 1 || n == 3;
        for (int i = 0; c == OPT_STD && i < n; i++)
            ok = ok && v[i] > 0;
        valid = c == OPT_STD ? "1 or 3 comma-separated positive decimals" : "1 or 3 comma-separated decimals";
        if (ok)
            add_override(o, c == OPT_MEAN ? "mean" : "std", arg);
        break;
    case OPT_CROP:
        /* > 1 is allowed: the centre crop then pads, as torchvision's does */
        ok = app_parse_numbers(arg, v, 1) == 1 && v[0] > 0 && v[0] <= 4;
        valid = "a decimal in (0, 4]";
        if (ok)
            add_override(o, "crop_pct", arg);
        break;
    case OPT_INTERP:
        ok = 0;
        for (size_t i = 0; i < sizeof app_interpolations / sizeof *app_interpolations; i++)
            ok |= !strcmp(arg, app_interpolations[i]);
        valid = "bicubic, bilinear, nearest, box, hamming or lanczos";
        if (ok)
            add_override(o, "interpolation", arg);
        break;
    default: ok = 0, valid = "none";
    }
    if (!ok) {
        char option[32];
        snprintf(option, sizeof option, "--%s", option_name(c));
        app_bad_value("gmlp-classify", option, arg, valid);
    }
    return ok;
}

/* --labels: one class name per line, any length, joined for gmlp_model_override. */
static int read_labels(app_options *o)
{
    FILE *f = fopen(o->labels_file, "r");
    if (!f) {
        fprintf(stderr, "gmlp-classify: cannot open labels file %s: %s\n", o->labels_file, strerror(errno));
        return 0;
    }
    app_buf b = {0};
    char *line = NULL;
    size_t cap = 0;
    while (app_getline(&line, &cap, f) != -1) {
        line[strcspn(line, "\r\n")] = 0;
        app_buf_printf(&b, "%s%s", b.len ? "\n" : "", line);
    }
    free(line);
    fclose(f);
    o->labels = b.s ? b.s : calloc(1, 1);
    if (b.oom || !o->labels) {
        fprintf(stderr, "gmlp-classify: out of memory reading %s\n", o->labels_file);
        return 0;
    }
    add_override(o, "labels", o->labels);
    return 1;
}

/* GMLP_TEST_FAIL=DEVICE:N, the test hook for a device failing mid-run. */
static void read_test_hook(app_options *o)
{
    const char *e = getenv("GMLP_TEST_FAIL");
    o->fail_device = o->fail_batch = -1;
    if (e && sscanf(e, "%d:%d", &o->fail_device, &o->fail_batch) != 2)
        o->fail_device = o->fail_batch = -1;
}

static int parse_args(int argc, char **argv, app_options *o)
{
    o->top = 5;
    o->batch = 32;
    int cores = app_cpu_count();
    o->threads = cores > MAX_THREADS ? MAX_THREADS : cores;
    for (int c; (c = getopt_long(argc, argv, "m:l:k:d:b:t:o:jqrhV", longopts, NULL)) != -1;) {
        switch (c) {
        case 'm': o->model = optarg; break;
        case 'l': o->labels_file = optarg; break;
        case 'd': o->device = optarg; break;
        case 'o': o->output = optarg; break;
        case 'j': o->json = 1; break;
        case 'q': o->quiet = 1; break;
        case 'r': o->recursive = 1; break;
        case 'h': usage(stdout); exit(APP_EXIT_OK);
        case 'V': app_print_version("gmlp-classify"); exit(APP_EXIT_OK);
        case OPT_FILES_FROM: o->files_from = optarg; break;
        case OPT_RESUME: o->resume = 1; break;
        case OPT_RETRY: o->retry_errors = 1; break;
        case OPT_BENCH: o->bench = 1; break;
        case OPT_LIST: o->list_devices = 1; break;
        case OPT_FP16: o->fp16 = 1; break;
        case OPT_FEATURES: o->features = 1; break;
        case OPT_EVAL: o->eval = 1; break;
        case OPT_CLASS_MAP: o->class_map = optarg; break;
        case OPT_SVG: o->svg = optarg; break;
        case OPT_PRECISION:
            if (!app_parse_precision("gmlp-classify", optarg, &o->precision))
                return 0;
            break;
        case '?': return 0; /* getopt said why */
        default:
            if (!parse_value(c, optarg, o))
                return 0;
        }
    }
    const char *conflict = o->json && o->output && !o->eval ? "--json and --output"
                           : o->eval && o->features ? "--eval with --features (it scores classes)"
                           : o->eval && o->files_from ? "--eval with --files-from (give a CSV of path,label lines)"
                           : o->eval && o->output && !strcmp(o->output, "-") ? "--eval with --output - (the report "
                                                                               "goes to stdout)"
                           : (o->class_map || o->svg) && !o->eval ? "--class-map or --svg without --eval"
                           : o->resume && !o->output ? "--resume without --output"
                           : o->retry_errors && !o->resume ? "--retry-errors without --resume"
                           : o->format_name && !o->output ? "--format without --output"
                           : o->features && o->top_given ? "--top with --features (it writes features, not classes)"
                           : NULL;
    if (conflict) {
        fprintf(stderr, "gmlp-classify: %s\n", conflict);
        return 0;
    }
    const unsigned carries = o->features ? APP_FEATURES : APP_CLASSES;
    char names[128];
    if (o->format_name && !(o->format = app_writer_named(o->format_name, 1, carries))) {
        app_writer_file_names("", carries, names, sizeof names);
        return app_bad_value("gmlp-classify", "--format", o->format_name, names);
    }
    if (o->output && !o->format && strcmp(o->output, "-") && !(o->format = app_writer_of_path(o->output, carries))) {
        app_writer_file_names(".", carries, names, sizeof names);
        fprintf(stderr, "gmlp-classify: --output %s: the name must end in %s%s (or give --format)%s\n", o->output,
                names, o->features ? " with --features" : "",
                !o->features && app_writer_of_path(o->output, APP_FEATURES) ? "; that one holds features: --features" : "");
        return 0;
    }
    if (!o->format)
        o->format = app_writer_named(o->eval            ? "none"
                                     : o->output || (o->features && !o->json) ? "jsonl"
                                     : o->json        ? "json"
                                                      : "text",
                                     0, carries);
    if (o->eval && o->top < APP_EVAL_TOP) /* top-5 accuracy needs them */
        o->top = APP_EVAL_TOP;
    read_test_hook(o);
    return 1;
}

static void on_signal(int sig)
{
    (void)sig;
    app_interrupted = 1;
}

int main(int argc, char **argv)
{
    app_options o = {0};
    if (!parse_args(argc, argv, &o)) {
        fputs("Try 'gmlp-classify --help'.\n", stderr);
        return APP_EXIT_USAGE;
    }
    if (o.list_devices)
        return list_devices();
    if (optind >= argc && !o.files_from) {
        usage(stderr);
        return APP_EXIT_USAGE;
    }
    app_on_stop_signals(on_signal);
    int st = o.labels_file && !read_labels(&o) ? APP_EXIT_FAIL : app_split_devices("gmlp-classify", o.device, &o.devices, &o.n_devices);
    if (st == APP_EXIT_OK) {
#ifdef APP_HAVE_MPI
        if (app_mpi_detected())
            st = app_mpi_main(&o, argv + optind, argc - optind);
        else
#endif
            st = app_run_local(&o, argv + optind, argc - optind);
    }
    for (int i = 0; i < o.n_devices; i++)
        free(o.devices[i]);
    free(o.devices);
    free(o.labels);
    return st;
}
