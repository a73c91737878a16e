/* The devices of one process: one context and one model per device, host
 * threads that decode and preprocess batches (of files or of images in
 * memory), and devices that take the decoded batches as they finish (a slow
 * device takes fewer).  A device that fails is reported, its batch goes back
 * to the queue for the others.  gmlp-classify and gmlp-server share it. */
#ifndef APP_SCHEDULER_H
#define APP_SCHEDULER_H

#include <gmlp.h>

#include "batch.h"

typedef struct app_pipeline app_pipeline;

typedef struct app_pipeline_config {
    const char *program; /* in messages */
    const char *model;
    gmlp_weight_type weights;
    gmlp_precision precision;
    const char *const *devices; /* gmlp_context_create specs */
    int n_devices;
    int threads; /* decoding threads */
    int top;      /* classes per image (0: none); a blob's own top instead (batch.h) */
    int features; /* 1: each image's pooled features too; a blob's own flag instead */
    int headless; /* a model without a classifier head (num_classes 0) loads: features only */
    const char *headless_hint; /* otherwise, said after the refusal (the option that would take it) */
    /* gmlp_model_override pairs, applied to every device's model */
    const char *const *override_keys, *const *override_values;
    int n_overrides;
    int quiet; /* no note on the preprocessing defaults */
    /* test hook (GMLP_TEST_FAIL=DEVICE:N): device fail_device's fail_batch-th batch fails */
    int fail_device, fail_batch;
} app_pipeline_config;

/* Loads the model on every device and starts the threads; NULL with a message
 * on stderr and *status APP_EXIT_FAIL or APP_EXIT_USAGE (an override the
 * model refuses, a device named twice). */
app_pipeline *app_pipeline_start(const app_pipeline_config *c, int *status);
/* Queues a batch for decoding and classification; the pipeline owns it until popped. */
void app_pipeline_push(app_pipeline *p, app_batch *b);
/* No more batches: the threads end once the queue is empty. */
void app_pipeline_close(app_pipeline *p);
/* A classified batch, or NULL after timeout_s seconds or when every device failed. */
app_batch *app_pipeline_pop(app_pipeline *p, double timeout_s);
/* 1 once every device has failed (the message was printed). */
int app_pipeline_failed(app_pipeline *p);
/* Sum over devices of images / seconds in the forward (gmlp_classify_features). */
double app_pipeline_model_rate(app_pipeline *p);
/* Seconds the devices spent in the forward, summed. */
double app_pipeline_model_seconds(app_pipeline *p);
/* The model's classes (0: a feature extractor) and pooled features per image. */
int app_pipeline_classes(app_pipeline *p);
int app_pipeline_dim(app_pipeline *p);
/* The devices' names, ", "-separated. */
const char *app_pipeline_device_names(app_pipeline *p);
/* The precision in force (its name) and what runs it on each device
 * (*engines, ", "-separated as the names). */
const char *app_pipeline_precision(app_pipeline *p, const char **engines);
/* Seconds the devices took to open (gmlp_context_create) and to load the
 * model (kernels compiled or read from the cache), summed: one after another. */
void app_pipeline_startup(app_pipeline *p, double *open_s, double *load_s);
/* Stops the threads (a batch on a device finishes first) and frees what is left. */
void app_pipeline_free(app_pipeline *p);

#endif
