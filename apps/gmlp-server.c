/* gmlp-server: the image model (and a language model) resident behind HTTP.
 * It listens first (GET /health says 503 while the models load), then loads,
 * then serves until SIGTERM or SIGINT: it stops accepting, lets what is in
 * flight finish within --grace-s, and exits 0. */
#include <getopt.h>
#include <gmlp.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "devices.h"
#include "server.h"
#include "server_batcher.h"
#include "server_lm.h"
#include "server_metrics.h"

#define DEFAULT_MODEL "fashion-mnist-gmlp.safetensors"
#define MAX_THREADS   256

static void usage(FILE *f)
{
    char routes[512];
    srv_routes_list(routes, sizeof routes);
    fprintf(f,
            "usage: " SERVER_PROGRAM " [options]\n"
            "Serves an image classifier (and a language model) over HTTP (docs/server.md):\n"
            "%s.\n"
            "  -m, --model PATH|FOLDER  the image model (default: $GMLP_MODEL, else the bundled Fashion-MNIST model)\n"
            "      --lm PATH            also serve this byte-level language model (completions)\n"
            "      --host HOST          the address to listen on (default 127.0.0.1: this machine only)\n"
            "  -p, --port N             the port, 0 for a free one, printed on stderr (default 8080)\n"
            "  -d, --device D[,D...]    OpenCL device(s) of the image model, or all; the LM runs on the first\n"
            "  -b, --batch N            images per batch at most, 1..4096 (default 32)\n"
            "      --max-delay-ms MS    how long a batch waits for more images, 0..10000 (default 2)\n"
            "  -t, --threads N          decoding and preprocessing threads (default: the cores, at most 256)\n"
            "      --parallel N         completions generated at once, 1..64 (default 2)\n"
            "      --queue N            images, and completions, waiting at most before 503 (default 1024)\n"
            "      --max-tokens N       the largest max_tokens a request may ask, 1..1048576 (default 4096)\n"
            "      --max-body-mb N      the largest request body, 1..4096 MiB (default 16)\n"
            "      --max-connections N  connections at once, 1..10000 (default 256)\n"
            "      --timeout-s S        a connection's idle timeout, 1..3600 (default 30)\n"
            "      --grace-s S          on SIGTERM/SIGINT, how long requests in flight may take, 0..3600 (default 10)\n"
            "      --api-key KEY        requests must carry Authorization: Bearer KEY (all but /health)\n"
            "      --tls-cert PATH      serve HTTPS with this PEM certificate (chain), with --tls-key\n"
            "      --tls-key PATH       the certificate's PEM private key (unencrypted)\n"
            "      --fp16               store the weights as half (fp32 arithmetic)\n"
            "      --precision P        fp32, tf32, fp16 or bf16: the format the operands of every matrix product\n"
            "                           are rounded to, accumulated in fp32 (default: $GMLP_PRECISION, else fp32)\n"
            "  -v, --verbose            an access log line per request on stderr\n"
            "  -q, --quiet              no start-up notes\n"
            "  -h, --help               this text\n"
            "      --version            the versions of the program and the library, the OpenCL platforms\n"
            "Exit status: 0 stopped by a signal, 1 a model, device, address or TLS file failed, 2 a usage error.\n"
            "Environment: GMLP_MODEL, GMLP_DEVICE, GMLP_PRECISION, GMLP_CACHE_DIR, GMLP_LOG; GMLP_TEST_FAIL=DEVICE:N (tests: the\n"
            "device at position DEVICE of --device fails its N-th batch).\n",
            routes);
}

enum {
    OPT_LM = 256,
    OPT_HOST,
    OPT_DELAY,
    OPT_PARALLEL,
    OPT_QUEUE,
    OPT_MAX_TOKENS,
    OPT_BODY,
    OPT_CONNECTIONS,
    OPT_TIMEOUT,
    OPT_GRACE,
    OPT_KEY,
    OPT_TLS_CERT,
    OPT_TLS_KEY,
    OPT_FP16,
    OPT_PRECISION,
    OPT_VERSION
};

static const struct option longopts[] = {
    {"model", required_argument, 0, 'm'},
    {"lm", required_argument, 0, OPT_LM},
    {"host", required_argument, 0, OPT_HOST},
    {"port", required_argument, 0, 'p'},
    {"device", required_argument, 0, 'd'},
    {"batch", required_argument, 0, 'b'},
    {"max-delay-ms", required_argument, 0, OPT_DELAY},
    {"threads", required_argument, 0, 't'},
    {"parallel", required_argument, 0, OPT_PARALLEL},
    {"queue", required_argument, 0, OPT_QUEUE},
    {"max-tokens", required_argument, 0, OPT_MAX_TOKENS},
    {"max-body-mb", required_argument, 0, OPT_BODY},
    {"max-connections", required_argument, 0, OPT_CONNECTIONS},
    {"timeout-s", required_argument, 0, OPT_TIMEOUT},
    {"grace-s", required_argument, 0, OPT_GRACE},
    {"api-key", required_argument, 0, OPT_KEY},
    {"tls-cert", required_argument, 0, OPT_TLS_CERT},
    {"tls-key", required_argument, 0, OPT_TLS_KEY},
    {"fp16", no_argument, 0, OPT_FP16},
    {"precision", required_argument, 0, OPT_PRECISION},
    {"verbose", no_argument, 0, 'v'},
    {"quiet", no_argument, 0, 'q'},
    {"help", no_argument, 0, 'h'},
    {"version", no_argument, 0, OPT_VERSION},
    {0, 0, 0, 0},
};

/* The integer options: where each goes and its range. */
static const struct int_option {
    int opt;
    const char *name;
    size_t offset;
    long long lo, hi;
} int_options[] = {
    {'p', "--port", offsetof(srv_options, port), 0, 65535},
    {'b', "--batch", offsetof(srv_options, batch), 1, 4096},
    {OPT_DELAY, "--max-delay-ms", offsetof(srv_options, max_delay_ms), 0, 10000},
    {'t', "--threads", offsetof(srv_options, threads), 1, MAX_THREADS},
    {OPT_PARALLEL, "--parallel", offsetof(srv_options, parallel), 1, 64},
    {OPT_QUEUE, "--queue", offsetof(srv_options, queue), 1, 1 << 20},
    {OPT_MAX_TOKENS, "--max-tokens", offsetof(srv_options, max_tokens), 1, 1 << 20},
    {OPT_BODY, "--max-body-mb", offsetof(srv_options, max_body_mb), 1, 4096},
    {OPT_CONNECTIONS, "--max-connections", offsetof(srv_options, max_connections), 1, 10000},
    {OPT_TIMEOUT, "--timeout-s", offsetof(srv_options, timeout_s), 1, 3600},
    {OPT_GRACE, "--grace-s", offsetof(srv_options, grace_s), 0, 3600},
};

/* The exit status when the command line is all there is to do, else -1. */
static int parse_args(int argc, char **argv, srv_options *o)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    *o = (srv_options){.host = "127.0.0.1",
                       .port = 8080,
                       .batch = 32,
                       .max_delay_ms = 2,
                       .parallel = 2,
                       .queue = 1024,
                       .max_tokens = 4096,
                       .max_body_mb = 16,
                       .max_connections = 256,
                       .timeout_s = 30,
                       .grace_s = 10,
                       .fail_device = -1,
                       .fail_batch = -1,
                       .threads = cores < 1             ? 1
                                  : cores > MAX_THREADS ? MAX_THREADS
                                                        : (int)cores};
    for (int c; (c = getopt_long(argc, argv, "m:p:d:b:t:vqh", longopts, NULL)) != -1;) {
        const struct int_option *io = NULL;
        for (size_t i = 0; i < sizeof int_options / sizeof *int_options; i++)
            io = int_options[i].opt == c ? &int_options[i] : io;
        if (io) {
            long long v;
            if (!app_parse_int(optarg, io->lo, io->hi, &v)) {
                char expected[64];
                snprintf(expected, sizeof expected, "an integer from %lld to %lld", io->lo, io->hi);
                app_bad_value(SERVER_PROGRAM, io->name, optarg, expected);
                return APP_EXIT_USAGE;
            }
            *(int *)((char *)o + io->offset) = (int)v;
            continue;
        }
        switch (c) {
        case 'm': o->model = optarg; break;
        case OPT_LM: o->lm = optarg; break;
        case OPT_HOST: o->host = optarg; break;
        case 'd': o->device = optarg; break;
        case OPT_KEY:
            if (!*optarg)
                return app_bad_value(SERVER_PROGRAM, "--api-key", optarg, "a non-empty key"), APP_EXIT_USAGE;
            o->api_key = optarg;
            break;
        case OPT_TLS_CERT: o->tls_cert = optarg; break;
        case OPT_TLS_KEY: o->tls_key = optarg; break;
        case OPT_FP16: o->fp16 = 1; break;
        case OPT_PRECISION:
            if (!app_parse_precision(SERVER_PROGRAM, optarg, &o->precision))
                return APP_EXIT_USAGE;
            break;
        case 'v': o->verbose = 1; break;
        case 'q': o->quiet = 1; break;
        case 'h': usage(stdout); return APP_EXIT_OK;
        case OPT_VERSION: app_print_version(SERVER_PROGRAM); return APP_EXIT_OK;
        default: return APP_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, SERVER_PROGRAM ": unexpected argument '%s' (the server takes options only)\n", argv[optind]);
        return APP_EXIT_USAGE;
    }
    if (!o->tls_cert != !o->tls_key) {
        fprintf(stderr, SERVER_PROGRAM ": %s needs %s too\n", o->tls_cert ? "--tls-cert" : "--tls-key",
                o->tls_cert ? "--tls-key" : "--tls-cert");
        return APP_EXIT_USAGE;
    }
    const char *e = getenv("GMLP_TEST_FAIL");
    if (e && sscanf(e, "%d:%d", &o->fail_device, &o->fail_batch) != 2)
        o->fail_device = o->fail_batch = -1;
    return -1;
}

/* The models, the batcher: 1 once loaded (then /health says 200). */
static int load(srv_server *s)
{
    const srv_options *o = &s->o;
    const app_pipeline_config pc = {
        .program = SERVER_PROGRAM,
        .model = o->model,
        .weights = o->fp16 ? GMLP_WEIGHTS_F16 : GMLP_WEIGHTS_F32,
        .precision = o->precision,
        .devices = (const char *const *)o->devices,
        .n_devices = o->n_devices,
        .threads = o->threads,
        .top = 5,
        .headless = 1, /* a feature extractor serves /v1/embeddings */
        .quiet = o->quiet,
        .fail_device = o->fail_device,
        .fail_batch = o->fail_batch,
    };
    int status;
    if (!(s->pipeline = app_pipeline_start(&pc, &status)))
        return 0;
    s->batcher = srv_batcher_start(s->pipeline, s->metrics, o->batch, o->max_delay_ms / 1e3, (size_t)o->queue);
    if (!s->batcher) {
        fprintf(stderr, SERVER_PROGRAM ": cannot start the batcher's threads\n");
        return 0;
    }
    if (o->lm && !(s->lm = srv_lm_start(o->lm, o->devices[0], &pc, o->parallel, (size_t)o->queue, s->metrics)))
        return 0;
    return 1;
}

/* Until SIGTERM or SIGINT (blocked in every thread, taken here). */
static int wait_signal(const sigset_t *set)
{
    int sig = 0;
    while (sigwait(set, &sig))
        ;
    return sig;
}

/* Stops accepting, waits for the requests in flight (at most grace_s), then answers what is left with 503. */
static void stop(srv_server *s, struct MHD_Daemon *d, int sig)
{
    if (!s->o.quiet)
        fprintf(stderr, SERVER_PROGRAM ": %s: finishing the requests in flight (at most %d s)\n", strsignal(sig),
                s->o.grace_s);
    const int listener = MHD_quiesce_daemon(d);
    if (listener >= 0)
        close(listener); /* now: a connection made during the drain is refused, not left in the kernel's queue */
    struct timespec t0, t, nap = {0, 20 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while (srv_http_active() > 0 && (double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 < s->o.grace_s &&
           !nanosleep(&nap, NULL));
    srv_batcher_stop(s->batcher);
    srv_lm_stop(s->lm);
    srv_http_stop(s, d);
}

int main(int argc, char **argv)
{
    srv_server s = {0};
    int rc = parse_args(argc, argv, &s.o);
    if (rc == APP_EXIT_USAGE)
        fputs("Try '" SERVER_PROGRAM " --help'.\n", stderr);
    if (rc >= 0)
        return rc;
    if (!s.o.model)
        s.o.model = app_default_model("GMLP_MODEL", DEFAULT_MODEL);
    rc = app_split_devices(SERVER_PROGRAM, s.o.device, &s.o.devices, &s.o.n_devices);
    char *model_copy = strdup(s.o.model), *lm_copy = s.o.lm ? strdup(s.o.lm) : NULL;
    s.model_id = model_copy ? basename(model_copy) : "model";
    s.lm_id = lm_copy ? basename(lm_copy) : NULL;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* before any thread starts: they inherit it */
    signal(SIGPIPE, SIG_IGN);               /* a client that left is a failed write, not the end */
    struct MHD_Daemon *d = NULL;
    unsigned port = 0;
    if (rc == APP_EXIT_OK && (!(s.metrics = srv_metrics_new(srv_routes, srv_n_routes)) || !(d = srv_http_start(&s, &port))))
        rc = APP_EXIT_FAIL;
    if (rc == APP_EXIT_OK) {
        fprintf(stderr, SERVER_PROGRAM ": listening on http%s://%s%s%s:%u\n", s.o.tls_cert ? "s" : "",
                strchr(s.o.host, ':') ? "[" : "", s.o.host,
                strchr(s.o.host, ':') ? "]" : "", port);
        if (load(&s)) {
            s.ready = 1;
            const char *engines, *mode = app_pipeline_precision(s.pipeline, &engines);
            if (!s.o.quiet)
                fprintf(stderr, SERVER_PROGRAM ": ready: %s on %s (%s: %s)%s%s\n", s.o.model,
                        app_pipeline_device_names(s.pipeline), mode, engines, s.o.lm ? ", language model " : "",
                        s.o.lm ? s.o.lm : "");
            stop(&s, d, wait_signal(&set));
        } else {
            rc = APP_EXIT_FAIL;
            srv_batcher_stop(s.batcher);
            srv_http_stop(&s, d);
        }
    }
    srv_batcher_free(s.batcher);
    srv_lm_free(s.lm);
    app_pipeline_free(s.pipeline);
    srv_metrics_free(s.metrics);
    for (int i = 0; i < s.o.n_devices; i++)
        free(s.o.devices[i]);
    free(s.o.devices);
    free(model_copy);
    free(lm_copy);
    return rc;
}
