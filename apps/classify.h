/* gmlp-classify's options and the steps its one-process and MPI runs share. */
#ifndef APP_CLASSIFY_H
#define APP_CLASSIFY_H

#include <signal.h>
#include <stddef.h>

#include "inputs.h"
#include "output.h"
#include "scheduler.h"
#include "sink.h"

typedef struct app_options {
    const char *model, *labels_file, *device, *output, *files_from;
    int top, batch, threads, json, bench, list_devices, fp16, quiet, recursive, resume, retry_errors;
    int features, top_given; /* --features: pooled features instead of classes; -k was given */
    int eval;                        /* --eval: the arguments are labelled images (eval.h) */
    const char *class_map, *svg;     /* --class-map, --svg */
    const app_writer *format; /* --format, the output's extension, -j or the default */
    const char *format_name;  /* --format's value */
    gmlp_precision precision; /* --precision; GMLP_PRECISION_AUTO: the library's default */
    /* preprocessing overrides for gmlp_model_override, parsed up front so that
     * a malformed value is a usage error */
    const char *override_keys[7], *override_values[7];
    int n_overrides;
    char *labels; /* --labels read, newline-separated */
    /* --device split: one spec per device */
    char **devices;
    int n_devices;
    int fail_device, fail_batch; /* GMLP_TEST_FAIL */
} app_options;

/* Set by SIGINT / SIGTERM: the run stops handing out batches and ends after
 * writing the rows that are in order. */
extern volatile sig_atomic_t app_interrupted;

/* The images of this run: the inputs enumerated (--eval: the labelled images,
 * their set handed to the sink with an earlier run's results on --resume),
 * minus those the output already holds (--resume); the output opened and the
 * sink ready.  Returns APP_EXIT_OK or the exit status to end with. */
int app_open_run(const app_options *o, char **args, int n_args, size_t window, app_inputs *in, app_sink *sink,
                 char ***pending, size_t *n_pending);
/* The pipeline configuration of the options. */
app_pipeline_config app_pipeline_config_of(const app_options *o);
/* The model path used (the option, $GMLP_MODEL or the bundled model). */
const char *app_model_path(const app_options *o);
/* The precision's name: --precision, else app_precision_default().  The run
 * file needs it before any model is loaded (and rank 0 of an MPI run loads
 * none). */
const char *app_precision_name(const app_options *o);
/* The whole run in this process (no MPI). */
int app_run_local(const app_options *o, char **args, int n_args);
/* The exit status of a finished run. */
int app_finish(app_sink *s, int complete);

#ifdef APP_HAVE_MPI
/* Under mpirun: rank 0 hands out batches and writes, the others classify. */
int app_mpi_detected(void);
int app_mpi_main(const app_options *o, char **args, int n_args);
#endif

#endif
