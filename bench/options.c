/* gmlp-bench's command line: every option as one table (options[]): a new one
 * is a line there and a case in bench_parse(); --help is written from it. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "common.h"

#define MAX_BATCH 65536
#define MAX_RUNS 100000

const char *const bench_weight_names[] = {[GMLP_WEIGHTS_F32] = "f32", [GMLP_WEIGHTS_F16] = "f16",
                                          [GMLP_WEIGHTS_BF16] = "bf16"};
const char *const bench_gemm_names[] = {
    [GMLP_GEMM_KERNEL] = "kernel", [GMLP_GEMM_CLBLAST] = "clblast", [GMLP_GEMM_AUTO] = "auto"};
#define N_NAMES(a) ((int)(sizeof a / sizeof *a))

/* A comma list of distinct names (index i of names is value i) into *out;
 * 0 (after saying why) on anything else. */
static int parse_names(char *arg, const char *option, const char *const *names, int count, int *out, int *n)
{
    *n = 0; /* the last --weights or --gemm counts */
    for (char *s = strtok(arg, ","); s; s = strtok(NULL, ",")) {
        int v = 0, seen = 0;
        while (v < count && (!names[v] || strcmp(s, names[v])))
            v++;
        for (int j = 0; j < *n; j++)
            seen |= out[j] == v;
        if (v == count || seen) {
            fprintf(stderr, BENCH_PROGRAM ": %s takes", option);
            for (int i = 0, k = 0; i < count; i++)
                if (names[i])
                    fprintf(stderr, "%s %s", k++ ? "," : "", names[i]);
            fprintf(stderr, " or a comma list of them, each once; not '%s'\n", s);
            return 0;
        }
        out[(*n)++] = v;
    }
    return 1;
}

enum { OPT_WARMUP = 256, OPT_MD, OPT_VERSION, OPT_PROFILE, OPT_TUNE, OPT_PRECISION, OPT_CONFIG };

/* Every option: getopt's entry (a val below 256 is also the short option), the
 * argument's name and the help text with the default ('\n' continues it). */
static const struct {
    struct option o;
    const char *arg, *help;
} options[] = {
    {{"device", required_argument, 0, 'd'}, "D",
     "OpenCL device: index, gpu, cpu, a name substring, or all: every device\n"
     "(default: $GMLP_DEVICE, else the first GPU, else the first device)"},
    {{"model", required_argument, 0, 'm'}, "FILE",
     "time this .safetensors model (image or language model) instead of the\n"
     "random-weight configurations (default: gMLP Ti/S/B 16 224, Mixer B/16 224,\n"
     "language models at seq_len 256 and 768)"},
    {{"config", required_argument, 0, OPT_CONFIG}, "NAME,...",
     "of the random-weight configurations (the standard or --tiny set), only\n"
     "these, by name: gmlp_s16_224, gmlp_lm_seq256, ... (default all)"},
    {{"tiny", no_argument, 0, 't'}, NULL,
     "tiny random-weight configurations, batches 1,8, --runs 3, --warmup 1,\n"
     "SGEMM 256^3: a check that everything runs (default off)"},
    {{"batch", required_argument, 0, 'b'}, "N,...",
     "image batch sizes, up to 16 of 1 to 65536 (default 1,64; --tiny 1,8)"},
    {{"runs", required_argument, 0, 'r'}, "N",
     "timed runs per row, 1 to 100000: their median and spread\n(default 10; --tiny 3)"},
    {{"warmup", required_argument, 0, OPT_WARMUP}, "N",
     "untimed runs before them, 0 to 100000 (default 3; --tiny 1)"},
    {{"weights", required_argument, 0, 'w'}, "W",
     "weight storage of image models: f32, f16, bf16 or a comma list (default f32; the bf16 precision\n"
     "stores f32 as bf16)"},
    {{"gemm", required_argument, 0, 'g'}, "G",
     "GEMM backend of image models: kernel, clblast, auto (what a program\n"
     "gets by default: the device's tuned choice per shape, else the kernel)\n"
     "or a comma list of them (default kernel); half weights always use the\n"
     "kernel (with its tuned tilings)"},
    {{"precision", required_argument, 0, OPT_PRECISION}, "P",
     "precision of the matrix products, image and language models: fp32,\n"
     "tf32, fp16, bf16 or a comma list of them, rows for each (default:\n"
     "$GMLP_PRECISION, else fp32); CLBlast runs fp32 only"},
    {{"json", required_argument, 0, 'j'}, "FILE", "every row as JSON (default none)"},
    {{"csv", required_argument, 0, 'c'}, "FILE", "every row as CSV (default none)"},
    {{"md", required_argument, 0, OPT_MD}, "FILE", "the tables as markdown (default none)"},
    {{"svg", required_argument, 0, 's'}, "FILE", "images/s against batch size as an SVG chart (default none)"},
    {{"compare", required_argument, 0, 'C'}, "FILE",
     "images/s beside those in tools/bench_torch.py's JSON for the same\n"
     "models, batches and precisions (default none)"},
    {{"profile", no_argument, 0, OPT_PROFILE}, NULL,
     "per image row, one more forward with queue profiling: device time per\n"
     "kernel, its share, the bytes its operands move and at what rate, the\n"
     "GEMMs' GFLOP/s, the forward's bytes (default off)"},
    {{"tune", no_argument, 0, OPT_TUNE}, NULL,
     "tune the GEMMs instead of timing: each kernel tiling of the library's set\n"
     "and CLBlast (fp32) on the shapes of --model (default gmlp_ti16_224 random,\n"
     "--tiny gmlp_tiny) at each --batch (default 8) per --weights and\n"
     "--precision; the winners go to the cache directory, used from then on\n"
     "(default off)"},
    {{"help", no_argument, 0, 'h'}, NULL, "this text"},
    {{"version", no_argument, 0, OPT_VERSION}, NULL,
     "the versions of the program and the library, the OpenCL platforms"},
};
#define N_OPTIONS (sizeof options / sizeof *options)

static void usage(FILE *f)
{
    fputs("usage: " BENCH_PROGRAM " [options]\n"
          "Inference speed of gMLP / MLP-Mixer image models and gMLP language models (random weights, or\n"
          "--model) on OpenCL devices: a table on stdout, progress on stderr.\n",
          f);
    for (size_t i = 0; i < N_OPTIONS; i++) {
        char left[64];
        int val = options[i].o.val;
        snprintf(left, sizeof left, "%c%c%c --%s%s%s", val < 256 ? '-' : ' ', val < 256 ? val : ' ',
                 val < 256 ? ',' : ' ', options[i].o.name, options[i].arg ? " " : "",
                 options[i].arg ? options[i].arg : "");
        fprintf(f, "  %-22s ", left);
        for (const char *h = options[i].help; *h; h++)
            if (*h == '\n')
                fprintf(f, "\n  %-22s ", "");
            else
                fputc(*h, f);
        fputc('\n', f);
    }
    fputs("Exit status: 0 done, 1 a run-time failure (a device, a model, a file, a configuration that failed),\n"
          "2 a usage error.  Environment: GMLP_DEVICE, GMLP_PRECISION, GMLP_CACHE_DIR, GMLP_LOG.\n",
          f);
}

static int bad(const char *arg, const char *opt, const char *expected)
{
    app_bad_value(BENCH_PROGRAM, opt, arg, expected);
    return APP_EXIT_USAGE;
}

/* Comma-separated batch sizes, each 1..MAX_BATCH, at most BENCH_MAX_BATCHES. */
static int parse_batches(const char *arg, bench_opts *o)
{
    static const char expected[] = "up to 16 comma-separated integers from 1 to 65536";
    o->n_batches = 0;
    for (const char *s = arg;; s++) {
        char num[32];
        size_t len = strcspn(s, ",");
        long long v;
        snprintf(num, sizeof num, "%.*s", (int)(len < 31 ? len : 31), s);
        if (len >= 31 || o->n_batches == BENCH_MAX_BATCHES || !app_parse_int(num, 1, MAX_BATCH, &v))
            return bad(arg, "--batch", expected);
        o->batches[o->n_batches++] = (int)v;
        s += len;
        if (!*s)
            return -1;
    }
}

/* The exit status when the command line is all there is to do (--help,
 * --version, a usage error), else -1. */
int bench_parse(int argc, char **argv, bench_opts *o)
{
    struct option lo[N_OPTIONS + 1] = {{0}};
    char shorts[2 * N_OPTIONS + 1] = "", *sp = shorts;
    for (size_t i = 0; i < N_OPTIONS; i++) {
        lo[i] = options[i].o;
        if (lo[i].val < 256) {
            *sp++ = (char)lo[i].val;
            if (lo[i].has_arg == required_argument)
                *sp++ = ':';
        }
    }
    *sp = 0;
    int runs_set = 0, warmup_set = 0;
    long long v;
    o->runs = 10;
    o->warmup = 3;
    o->sgemm_n = 1024;
    for (int c; (c = getopt_long(argc, argv, shorts, lo, NULL)) != -1;) {
        switch (c) {
        case 'd': o->device = optarg; break;
        case 'm': o->model = optarg; break;
        case OPT_CONFIG: o->configs = optarg; break;
        case 'j': o->json = optarg; break;
        case 'c': o->csv = optarg; break;
        case OPT_MD: o->md = optarg; break;
        case 't': o->tiny = 1; break;
        case OPT_PROFILE: o->profile = 1; break;
        case OPT_TUNE: o->tune = 1; break;
        case 'C': o->compare = optarg; break;
        case 's': o->svg = optarg; break;
        case 'r':
            if (!app_parse_int(optarg, 1, MAX_RUNS, &v))
                return bad(optarg, "--runs", "an integer from 1 to 100000");
            o->runs = (int)v, runs_set = 1;
            break;
        case OPT_WARMUP:
            if (!app_parse_int(optarg, 0, MAX_RUNS, &v))
                return bad(optarg, "--warmup", "an integer from 0 to 100000");
            o->warmup = (int)v, warmup_set = 1;
            break;
        case 'b': {
            int rc = parse_batches(optarg, o);
            if (rc >= 0)
                return rc;
            break;
        }
        case 'w':
            if (!parse_names(optarg, "--weights", bench_weight_names, N_NAMES(bench_weight_names), o->weights,
                             &o->n_weights))
                return APP_EXIT_USAGE;
            break;
        case 'g':
            if (!parse_names(optarg, "--gemm", bench_gemm_names, N_NAMES(bench_gemm_names), o->gemms, &o->n_gemms))
                return APP_EXIT_USAGE;
            break;
        case OPT_PRECISION: {
            const char *names[GMLP_PRECISION_BF16 + 1] = {NULL}; /* AUTO left out: not a mode */
            for (int i = GMLP_PRECISION_FP32; i <= GMLP_PRECISION_BF16; i++)
                names[i] = gmlp_precision_name((gmlp_precision)i);
            if (!parse_names(optarg, "--precision", names, N_NAMES(names), o->precisions, &o->n_precisions))
                return APP_EXIT_USAGE;
            break;
        }
        case 'h': usage(stdout); return APP_EXIT_OK;
        case OPT_VERSION: app_print_version(BENCH_PROGRAM); return APP_EXIT_OK;
        default: return APP_EXIT_USAGE; /* getopt said why */
        }
    }
    if (optind < argc) {
        fprintf(stderr, BENCH_PROGRAM ": unexpected argument '%s' (a model is given with --model FILE)\n",
                argv[optind]);
        return APP_EXIT_USAGE;
    }
    if (o->model && o->configs) {
        fprintf(stderr, BENCH_PROGRAM ": --config names random-weight configurations; --model times a file instead\n");
        return APP_EXIT_USAGE;
    }
    if (!o->n_weights)
        o->weights[o->n_weights++] = GMLP_WEIGHTS_F32;
    if (!o->n_gemms)
        o->gemms[o->n_gemms++] = GMLP_GEMM_KERNEL;
    if (!o->n_precisions)
        o->precisions[o->n_precisions++] = app_precision_default();
    if (!o->n_batches && o->tune) {
        o->batches[0] = 8;
        o->n_batches = 1;
    }
    if (!o->n_batches) {
        o->batches[0] = 1;
        o->batches[1] = o->tiny ? 8 : 64;
        o->n_batches = 2;
    }
    if (o->tiny) {
        o->runs = runs_set ? o->runs : 3;
        o->warmup = warmup_set ? o->warmup : 1;
        o->sgemm_n = 256;
    }
    return -1;
}
