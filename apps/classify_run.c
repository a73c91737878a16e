/* gmlp-classify's run in one process, and the steps an MPI run shares with it
 * (classify.h): the inputs and the output opened, the pipeline's
 * configuration, the batches through it to the sink, the exit status. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "common.h"
#include "portable.h"

#define DEFAULT_MODEL "fashion-mnist-gmlp.safetensors"

volatile sig_atomic_t app_interrupted;

const char *app_model_path(const app_options *o)
{
    return o->model ? o->model : app_default_model("GMLP_MODEL", DEFAULT_MODEL);
}

const char *app_precision_name(const app_options *o)
{
    return gmlp_precision_name(o->precision ? o->precision : app_precision_default());
}

app_pipeline_config app_pipeline_config_of(const app_options *o)
{
    return (app_pipeline_config){
        .program = "gmlp-classify",
        .model = app_model_path(o),
        .weights = o->fp16 ? GMLP_WEIGHTS_F16 : GMLP_WEIGHTS_F32,
        .precision = o->precision,
        .devices = (const char *const *)o->devices,
        .n_devices = o->n_devices,
        .threads = o->threads,
        .top = o->features ? 0 : o->top,
        .features = o->features,
        .headless = o->features,
        .headless_hint = " (--features writes its pooled features)",
        .override_keys = o->override_keys,
        .override_values = o->override_values,
        .n_overrides = o->n_overrides,
        .quiet = o->quiet,
        .fail_device = o->fail_device,
        .fail_batch = o->fail_batch,
    };
}

static int open_inputs(const app_options *o, char **args, int n_args, app_inputs *in, app_eval *eval,
                       size_t window, app_sink *sink, char ***pending, size_t *n_pending);

/* --eval: the labelled images into in, and the set for the sink; NULL with a message. */
static app_eval *open_eval(const app_options *o, char **args, int n_args, app_inputs *in)
{
    app_eval *e = calloc(1, sizeof *e);
    if (!e)
        fprintf(stderr, "gmlp-classify: out of host memory\n");
    else if (!app_eval_open(e, args, n_args, o->class_map, in))
        app_eval_free(e), free(e), e = NULL;
    else if (!e->n) {
        fprintf(stderr, "gmlp-classify: --eval: no labelled images (an ImageFolder tree holds them in a folder per "
                        "class)\n");
        app_eval_free(e), free(e), e = NULL;
    } else if (e->outside && !o->quiet)
        fprintf(stderr, "gmlp-classify: --eval: %zu images left out: in no class folder%s\n", e->outside,
                o->class_map ? " or in a class --class-map does not name" : "");
    return e;
}

int app_open_run(const app_options *o, char **args, int n_args, size_t window, app_inputs *in, app_sink *sink,
                 char ***pending, size_t *n_pending)
{
    in->recursive = o->recursive;
    app_eval *eval = o->eval ? open_eval(o, args, n_args, in) : NULL;
    if (o->eval && !eval)
        return APP_EXIT_FAIL;
    int st = open_inputs(o, o->eval ? NULL : args, o->eval ? 0 : n_args, in, eval, window, sink, pending, n_pending);
    if (st == APP_EXIT_OK) {
        sink->eval = eval;
        sink->eval_svg = o->svg;
        sink->eval_json = o->json;
    } else if (eval)
        app_eval_free(eval), free(eval);
    return st;
}

/* The rest of app_open_run: the unlabelled inputs, the output, the sink. */
static int open_inputs(const app_options *o, char **args, int n_args, app_inputs *in, app_eval *eval,
                       size_t window, app_sink *sink, char ***pending, size_t *n_pending)
{
    for (int i = 0; i < n_args; i++)
        if (!app_inputs_add(in, args[i]))
            return APP_EXIT_FAIL;
    if (o->files_from) {
        FILE *f = strcmp(o->files_from, "-") ? fopen(o->files_from, "r") : stdin;
        if (!f) {
            fprintf(stderr, "gmlp-classify: cannot open %s: %s\n", o->files_from, strerror(errno));
            return APP_EXIT_FAIL;
        }
        int ok = app_inputs_add_list(in, f);
        if (f != stdin)
            fclose(f);
        if (!ok)
            return APP_EXIT_FAIL;
    }
    app_inputs_dedupe(in);

    if (o->format->side) /* its rows are named one a line */
        for (size_t i = 0; i < in->n; i++)
            if (strpbrk(in->paths[i], "\r\n")) {
                fprintf(stderr, "gmlp-classify: a file name holds a line break, which %s cannot list one a line "
                                "(write .jsonl or .csv instead)\n", o->format->name);
                return APP_EXIT_USAGE;
            }
    app_out out = {.f = stdout};
    app_done done = {0};
    if (o->output) {
        /* the model as a real path: a --resume names the same file however it was written */
        char real[PATH_MAX];
        const char *model = app_model_path(o);
        app_run_id id = {.model = app_realpath(model, real) ? real : model, .top = o->top,
                         .precision = app_precision_name(o), .features = o->features};
        int st = app_output_open(o->output, o->format, &id, o->resume, o->retry_errors, &done, &out);
        if (st != 1)
            return st == 2 ? APP_EXIT_USAGE : APP_EXIT_FAIL;
        if (eval && o->resume && !app_eval_resume(eval, o->output, o->format)) { /* the earlier run's results */
            app_done_free(&done);
            fclose(out.f);
            return APP_EXIT_FAIL;
        }
    }
    *pending = malloc((in->n + 1) * sizeof **pending);
    *n_pending = 0;
    for (size_t i = 0; *pending && i < in->n; i++)
        if (!app_done_has(&done, in->paths[i]))
            (*pending)[(*n_pending)++] = in->paths[i];
    if (o->resume && !o->quiet)
        fprintf(stderr, "gmlp-classify: resuming %s: %zu images done, %zu to do\n", o->output, in->n - *n_pending,
                *n_pending);
    app_done_free(&done);
    if (!*pending || !app_sink_init(sink, o->format, out, window, *n_pending)) {
        fprintf(stderr, "gmlp-classify: out of host memory\n");
        return APP_EXIT_FAIL;
    }
    sink->skipped = in->skipped;
    sink->quiet = o->quiet;
    sink->bench = o->bench;
    return APP_EXIT_OK;
}

int app_finish(app_sink *s, int complete)
{
    if (app_interrupted && !s->quiet)
        fprintf(stderr, "gmlp-classify: interrupted: %zu of %zu images written%s\n", s->images, s->total,
                s->out.f != stdout ? "; --resume continues" : "");
    FILE *files[] = {s->out.f != stdout ? s->out.f : NULL, s->out.side};
    for (int i = 0; i < 2; i++)
        if (files[i] && fclose(files[i]) && !s->write_failed) {
            perror("gmlp-classify: closing the output");
            s->write_failed = 1;
        }
    s->out.f = s->out.side = NULL;
    return complete && !app_interrupted && !s->errors && !s->write_failed ? APP_EXIT_OK : APP_EXIT_FAIL;
}

/* One process: batches of the pending paths through the pipeline, written in order. */
int app_run_local(const app_options *o, char **args, int n_args)
{
    /* the window bounds the batches in flight: enough to keep every thread and device busy */
    const size_t window = 2 * (size_t)(o->n_devices + o->threads) + 2;
    app_inputs in = {0};
    app_sink sink = {0};
    char **pending = NULL;
    size_t n = 0;
    int st = app_open_run(o, args, n_args, window, &in, &sink, &pending, &n);
    app_pipeline_config pc = app_pipeline_config_of(o);
    app_pipeline *p = st == APP_EXIT_OK ? app_pipeline_start(&pc, &st) : NULL;
    const size_t batch = (size_t)o->batch, n_batches = (n + batch - 1) / batch;
    size_t pushed = 0;
    app_sink_start(&sink);
    while (p && sink.next < n_batches && !app_interrupted) {
        for (; pushed < n_batches && pushed < sink.next + window; pushed++) {
            size_t first = pushed * batch, m = n - first < batch ? n - first : batch;
            app_batch *b = app_batch_new(pushed, pending + first, m);
            if (!b) {
                fprintf(stderr, "gmlp-classify: out of host memory\n");
                app_interrupted = 1;
                break;
            }
            app_pipeline_push(p, b);
        }
        if (pushed == n_batches)
            app_pipeline_close(p);
        app_batch *b = app_pipeline_pop(p, 0.2);
        if (b)
            app_sink_take(&sink, b);
        else if (app_pipeline_failed(p)) /* the batches done before are written */
            break;
        else
            app_sink_progress(&sink, 0);
    }
    if (p) {
        const int complete = sink.next == n_batches;
        if (complete) {
            const char *engines, *mode = app_pipeline_precision(p, &engines);
            app_sink_document(&sink, app_model_path(o), app_pipeline_device_names(p), mode, engines);
        }
        app_pipeline_startup(p, &sink.open_s, &sink.load_s);
        app_sink_summary(&sink, app_pipeline_model_rate(p), app_pipeline_device_names(p));
        st = app_finish(&sink, complete);
        app_pipeline_free(p);
    } else if (sink.out.f && sink.out.f != stdout) {
        fclose(sink.out.f);
        if (sink.out.side)
            fclose(sink.out.side);
        if (!o->resume) /* created by this run, and empty: a rerun is not refused */
            app_output_remove(o->output, o->format);
    }
    app_sink_free(&sink);
    free(pending);
    app_inputs_free(&in);
    return st;
}

