#include "scheduler.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "imagenet_labels.h"
#include "strbuf.h"

typedef struct queue {
    app_batch *head, *tail;
} queue;

typedef struct device {
    app_pipeline *p;
    int index; /* in the --device list */
    gmlp_context *ctx;
    gmlp_model *model;
    pthread_t thread;
    int started, dead;
    size_t batches, images;
    double model_s;
    double open_s, load_s; /* gmlp_context_create, gmlp_model_load_ex */
} device;

struct app_pipeline {
    app_pipeline_config c;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* any change of the queues or flags below; broadcast */
    queue todo, ready, done;
    size_t undecoded; /* batches in todo or being decoded */
    size_t n_ready, ready_cap; /* decoded batches waiting for a device, and their bound (host memory) */
    int closed, stop, failed, alive;
    device *dev;
    int n_dev;
    pthread_t *decoders;
    int n_decoders;
    gmlp_config cfg;
    const char **labels; /* one per class: the model's, ImageNet's, or "class N" */
    char **own_labels;
    char names[1024];
    const char *mode; /* the precision, and each device's engine */
    char engines[1024];
};

static void push_back(queue *q, app_batch *b)
{
    b->next = NULL;
    if (q->tail)
        q->tail->next = b;
    else
        q->head = b;
    q->tail = b;
}

/* In id order: the devices take the oldest batch first, so the reorder window drains. */
static void push_sorted(queue *q, app_batch *b)
{
    app_batch **at = &q->head;
    while (*at && (*at)->id < b->id)
        at = &(*at)->next;
    b->next = *at;
    *at = b;
    if (!b->next)
        q->tail = b;
}

static app_batch *pop_front(queue *q)
{
    app_batch *b = q->head;
    if (b && !(q->head = b->next))
        q->tail = NULL;
    return b;
}

static void *decoder_main(void *arg)
{
    app_pipeline *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        /* decoding stops ahead of the devices once ready_cap batches wait for them */
        while (!p->stop && !p->failed && (p->todo.head ? p->n_ready >= p->ready_cap : !p->closed))
            pthread_cond_wait(&p->cond, &p->lock);
        app_batch *b = p->stop || p->failed ? NULL : pop_front(&p->todo);
        if (!b)
            break;
        pthread_mutex_unlock(&p->lock);
        if (!app_batch_decode(b, &p->cfg))
            b->oom = 1; /* the device fails it: out of host memory */
        pthread_mutex_lock(&p->lock);
        p->undecoded--;
        p->n_ready++;
        push_sorted(&p->ready, b);
        pthread_cond_broadcast(&p->cond);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* What image i of a batch asks for: its top classes (0: none; at most the model's), its features. */
static int top_of(const app_pipeline *p, const app_batch *b, size_t i)
{
    const int top = b->blobs ? b->blobs[i].top : p->c.top;
    return top < p->cfg.num_classes ? top : p->cfg.num_classes;
}

static int features_of(const app_pipeline *p, const app_batch *b, size_t i)
{
    return b->blobs ? b->blobs[i].features : p->c.features;
}

/* Whether any decoded image of the batch asks for classes (want(...) > 0), or for features. */
static int any_decoded(const app_pipeline *p, const app_batch *b, int (*want)(const app_pipeline *, const app_batch *, size_t))
{
    for (size_t i = 0; i < b->n; i++)
        if (!b->why[i] && want(p, b, i) > 0)
            return 1;
    return 0;
}

/* Room for the batch's results, the features' included (the forward writes them there); 0 when out of memory. */
static int results_room(app_pipeline *p, app_batch *b, int features)
{
    size_t k = 0;
    for (size_t i = 0; i < b->n; i++)
        k += b->why[i] ? 0 : (size_t)top_of(p, b, i);
    b->dim = p->cfg.dim;
    return app_batch_results(b, k, features ? b->n_ok * (size_t)p->cfg.dim : 0);
}

/* The results of a batch through the forward: logits holds one row per decoded image (NULL: no image asked for
 * classes), b->features one where any asked for features. */
static int make_results(app_pipeline *p, app_batch *b, const float *logits)
{
    const int nc = p->cfg.num_classes;
    size_t k = 0;
    for (size_t i = 0, j = 0; i < b->n; i++) {
        app_result *r = &b->results[i];
        if (b->why[i]) {
            r->error = b->why[i];
            continue;
        }
        const size_t row = j++;
        *r = (app_result){.k = top_of(p, b, i), .index = b->index + k, .prob = b->prob + k, .labels = b->labels + k};
        if (features_of(p, b, i)) {
            r->dim = p->cfg.dim;
            r->features = b->features + row * (size_t)p->cfg.dim;
        }
        if (!r->k)
            continue;
        if (gmlp_softmax_topk(logits + row * nc, nc, r->k, b->index + k, b->prob + k) != GMLP_OK) {
            if (!(r->error = b->errors[i] = strdup(gmlp_last_error(NULL))))
                return 0;
            continue;
        }
        for (int c = 0; c < r->k; c++)
            b->labels[k + (size_t)c] = p->labels[b->index[k + (size_t)c]];
        k += (size_t)r->k;
    }
    return 1;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A device's failure: reported; its batch goes back for the others. */
static void device_failed(device *d, app_batch *b, const char *why)
{
    app_pipeline *p = d->p;
    d->dead = 1;
    p->alive--;
    fprintf(stderr, "%s: device %d (%s) failed: %s; %s\n", p->c.program, d->index, gmlp_context_device_name(d->ctx),
            why, p->alive ? "its batch goes to the other devices" : "no device is left");
    p->n_ready++;
    push_sorted(&p->ready, b);
    if (!p->alive)
        p->failed = 1;
    pthread_cond_broadcast(&p->cond);
}

static void *device_main(void *arg)
{
    device *d = arg;
    app_pipeline *p = d->p;
    float *logits = NULL;
    size_t logits_cap = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->stop && !p->failed && !p->ready.head && !(p->closed && !p->undecoded && !p->todo.head))
            pthread_cond_wait(&p->cond, &p->lock);
        app_batch *b = p->stop || p->failed ? NULL : pop_front(&p->ready);
        if (!b)
            break;
        p->n_ready--;
        pthread_cond_broadcast(&p->cond); /* a decoder may wait for the room */
        pthread_mutex_unlock(&p->lock);
        d->batches++;
        /* one forward for what the images ask: the logits, the pooled features, or both */
        const int want_logits = any_decoded(p, b, top_of), want_features = any_decoded(p, b, features_of);
        const size_t need = want_logits ? b->n_ok * (size_t)p->cfg.num_classes : 0;
        if (need > logits_cap) {
            free(logits);
            logits_cap = need;
            logits = malloc(sizeof *logits * need);
        }
        char why[512] = "";
        double model_s = 0;
        if (b->oom || (need && !logits) || !results_room(p, b, want_features)) {
            snprintf(why, sizeof why, "out of host memory");
        } else if (d->index == p->c.fail_device && (int)d->batches == p->c.fail_batch) {
            snprintf(why, sizeof why, "injected failure (GMLP_TEST_FAIL=%d:%d)", p->c.fail_device, p->c.fail_batch);
        } else if (want_logits || want_features) {
            const double t0 = now();
            if (gmlp_classify_features(d->model, b->images, b->n_ok, want_logits ? logits : NULL,
                                       want_features ? b->features : NULL) != GMLP_OK)
                snprintf(why, sizeof why, "%s", gmlp_last_error(d->ctx));
            model_s = now() - t0;
        }
        if (!*why && !make_results(p, b, want_logits ? logits : NULL))
            snprintf(why, sizeof why, "out of host memory");
        pthread_mutex_lock(&p->lock);
        d->model_s += model_s;
        if (*why) {
            app_batch_drop_results(b);
            device_failed(d, b, why);
            break;
        }
        d->images += b->n_ok;
        app_batch_drop_images(b);
        push_back(&p->done, b);
        pthread_cond_broadcast(&p->cond);
    }
    pthread_mutex_unlock(&p->lock);
    free(logits);
    return NULL;
}

/* Class names once for all devices (their models are the same file). */
static int make_labels(app_pipeline *p, gmlp_model *m)
{
    const int nc = p->cfg.num_classes;
    p->labels = calloc((size_t)nc + 1, sizeof *p->labels); /* + 1: a feature extractor has none */
    p->own_labels = calloc((size_t)nc + 1, sizeof *p->own_labels);
    if (!p->labels || !p->own_labels)
        return 0;
    for (int i = 0; i < nc; i++) {
        const char *l = gmlp_model_label(m, i);
        if (!l && nc == 1000 && gmlp_model_config_source(m, "labels") == GMLP_SOURCE_DEFAULT)
            l = gmlp_imagenet_labels[i];
        if (l && !(p->own_labels[i] = strdup(l)))
            return 0;
        if (!l) {
            char buf[32];
            snprintf(buf, sizeof buf, "class %d", i);
            if (!(p->own_labels[i] = strdup(buf)))
                return 0;
        }
        p->labels[i] = p->own_labels[i];
    }
    return 1;
}

/* How note_defaults writes each preprocessing key's value, after its name. */
static void note_floats(app_buf *b, const float *v, int n)
{
    for (int i = 0; i < n; i++)
        app_buf_printf(b, "%s%g", i ? "," : "", (double)v[i]);
}

static void note_img_size(app_buf *b, const gmlp_config *c)
{
    app_buf_printf(b, "%dx%d", c->img_h, c->img_w);
}

static void note_mean(app_buf *b, const gmlp_config *c)
{
    note_floats(b, c->mean, c->in_chans);
}

static void note_std(app_buf *b, const gmlp_config *c)
{
    note_floats(b, c->std, c->in_chans);
}

static void note_crop_pct(app_buf *b, const gmlp_config *c)
{
    app_buf_printf(b, "%g", (double)c->crop_pct);
}

static void note_crop_mode(app_buf *b, const gmlp_config *c)
{
    app_buf_printf(b, "%s", app_crop_modes[c->crop_mode]);
}

static void note_interpolation(app_buf *b, const gmlp_config *c)
{
    app_buf_printf(b, "%s", app_interpolations[c->interpolation]);
}

static const struct preprocessing_key {
    const char *key; /* as gmlp_model_config_source names it */
    void (*note)(app_buf *b, const gmlp_config *c);
} preprocessing_keys[] = {
    {"img_size", note_img_size}, {"mean", note_mean},           {"std", note_std},
    {"crop_pct", note_crop_pct}, {"crop_mode", note_crop_mode}, {"interpolation", note_interpolation},
};
enum { N_PREPROCESSING_KEYS = sizeof preprocessing_keys / sizeof *preprocessing_keys };

/* One line when the model says nothing of its preprocessing: the defaults applied. */
static void note_defaults(const char *program, const gmlp_model *m, const gmlp_config *c, const char *path)
{
    for (size_t i = 0; i < N_PREPROCESSING_KEYS; i++) {
        gmlp_source s = gmlp_model_config_source(m, preprocessing_keys[i].key);
        if (s == GMLP_SOURCE_METADATA || s == GMLP_SOURCE_CONFIG_JSON)
            return;
    }
    app_buf b = {0};
    for (size_t i = 0; i < N_PREPROCESSING_KEYS; i++) {
        if (gmlp_model_config_source(m, preprocessing_keys[i].key) != GMLP_SOURCE_DEFAULT)
            continue; /* the user's */
        app_buf_printf(&b, "%s%s ", b.len ? ", " : "", preprocessing_keys[i].key);
        preprocessing_keys[i].note(&b, c);
    }
    if (b.len)
        fprintf(stderr,
                "%s: note: %s has no preprocessing metadata (gmlp.*) or config.json; assuming %s\n",
                program, path, b.s);
    app_buf_free(&b);
}

/* The model on device d, with the overrides; 0 with a message (*status set). */
static int load_model(app_pipeline *p, device *d, int *status)
{
    const app_pipeline_config *c = &p->c;
    double t0 = now();
    if (gmlp_context_create(c->devices[d->index], &d->ctx) != GMLP_OK) {
        fprintf(stderr, "%s: device '%s': %s\n", c->program, c->devices[d->index] ? c->devices[d->index] : "default",
                gmlp_last_error(NULL));
        return 0;
    }
    d->open_s = now() - t0;
    gmlp_load_options lo;
    gmlp_load_options_default(&lo);
    lo.weights = c->weights;
    lo.precision = c->precision;
    t0 = now();
    char engine[64];
    if (gmlp_model_load_ex(d->ctx, c->model, &lo, &d->model) != GMLP_OK ||
        !app_model_precision(d->model, &p->mode, engine, sizeof engine)) {
        fprintf(stderr, "%s: %s\n", c->program, gmlp_last_error(d->ctx));
        return 0;
    }
    d->load_s = now() - t0;
    snprintf(p->engines + strlen(p->engines), sizeof p->engines - strlen(p->engines), "%s%s",
             d->index ? ", " : "", engine);
    gmlp_config cfg = {.size = sizeof cfg};
    gmlp_model_config(d->model, &cfg);
    if (cfg.arch == GMLP_ARCH_LM) {
        fprintf(stderr, "%s: %s is a language model (use gmlp-generate)\n", c->program, c->model);
        return 0;
    }
    if (cfg.num_classes == 0 && !c->headless) {
        fprintf(stderr, "%s: %s has no classifier head (a feature extractor): nothing to classify%s\n", c->program,
                c->model, c->headless_hint ? c->headless_hint : "");
        return 0;
    }
    /* the file's gmlp.* metadata wins over config.json; say where they differ (once, a warning: also with -q) */
    static const char *const conflict_keys[] = {"img_size", "mean", "std", "interpolation", "crop_pct", "crop_mode",
                                                "labels"};
    for (size_t i = 0; d == p->dev && i < sizeof conflict_keys / sizeof *conflict_keys; i++) {
        const char *why = gmlp_model_config_conflict(d->model, conflict_keys[i]);
        if (why)
            fprintf(stderr, "%s: warning: %s: %s\n", c->program, c->model, why);
    }
    for (int i = 0; i < c->n_overrides; i++) {
        const char *key = c->override_keys[i], *value = c->override_values[i];
        char expanded[256];
        /* one mean or std for every channel */
        if ((!strcmp(key, "mean") || !strcmp(key, "std")) && !strchr(value, ',') && cfg.in_chans == 3 &&
            snprintf(expanded, sizeof expanded, "%s,%s,%s", value, value, value) < (int)sizeof expanded)
            value = expanded;
        if (gmlp_model_override(d->model, key, value) != GMLP_OK) {
            char option[32];
            snprintf(option, sizeof option, "--%s", key);
            for (char *u = option; *u; u++)
                *u = *u == '_' ? '-' : *u;
            fprintf(stderr, "%s: %s: %s\n", c->program, option, gmlp_last_error(d->ctx));
            *status = APP_EXIT_USAGE;
            return 0;
        }
    }
    p->cfg.size = sizeof p->cfg;
    gmlp_model_config(d->model, d == p->dev ? &p->cfg : &cfg);
    if (d == p->dev && !c->quiet)
        note_defaults(c->program, d->model, &p->cfg, c->model);
    /* the same device twice: two specs that name one device */
    for (device *o = p->dev; o < d; o++)
        if (!strcmp(gmlp_context_device_name(o->ctx), gmlp_context_device_name(d->ctx)) &&
            !(strspn(c->devices[o->index], "0123456789") == strlen(c->devices[o->index]) &&
              strspn(c->devices[d->index], "0123456789") == strlen(c->devices[d->index]))) {
            fprintf(stderr, "%s: --device names %s twice ('%s' and '%s')\n", c->program,
                    gmlp_context_device_name(d->ctx), c->devices[o->index], c->devices[d->index]);
            *status = APP_EXIT_USAGE;
            return 0;
        }
    return 1;
}

/* One grey pixel through the library's checks: a bad combination (e.g. a
 * crop_pct that resizes to nothing) is reported once, not for every image. */
static int check_preprocessing(const char *program, const gmlp_config *c, int *status)
{
    const uint8_t pixel = 128;
    float *out = malloc(sizeof *out * (size_t)c->in_chans * (size_t)c->img_h * (size_t)c->img_w);
    gmlp_status st = out ? gmlp_preprocess_rgb8(c, &pixel, 1, 1, 1, out) : GMLP_ERR_HOST_MEMORY;
    free(out);
    if (st != GMLP_OK) {
        fprintf(stderr, "%s: %s\n", program, out ? gmlp_last_error(NULL) : "out of host memory");
        *status = st == GMLP_ERR_HOST_MEMORY ? APP_EXIT_FAIL : APP_EXIT_USAGE;
    }
    return st == GMLP_OK;
}

app_pipeline *app_pipeline_start(const app_pipeline_config *c, int *status)
{
    *status = APP_EXIT_FAIL;
    app_pipeline *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->c = *c;
    p->ready_cap = 2 * (size_t)c->n_devices + 1;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);
    p->dev = calloc((size_t)c->n_devices, sizeof *p->dev);
    p->decoders = calloc((size_t)c->threads, sizeof *p->decoders);
    int ok = p->dev && p->decoders;
    for (int i = 0; ok && i < c->n_devices; i++) {
        p->dev[i] = (device){.p = p, .index = i};
        p->n_dev++;
        ok = load_model(p, &p->dev[i], status);
        snprintf(p->names + strlen(p->names), sizeof p->names - strlen(p->names), "%s%s", i ? ", " : "",
                 gmlp_context_device_name(p->dev[i].ctx));
    }
    ok = ok && check_preprocessing(c->program, &p->cfg, status) && make_labels(p, p->dev[0].model);
    p->alive = p->n_dev;
    const int loaded = ok;
    for (int i = 0; ok && i < p->n_dev; i++)
        ok = (p->dev[i].started = !pthread_create(&p->dev[i].thread, NULL, device_main, &p->dev[i]));
    for (int i = 0; ok && i < c->threads; i++)
        ok = !pthread_create(&p->decoders[p->n_decoders], NULL, decoder_main, p) && ++p->n_decoders;
    if (!ok) {
        if (loaded)
            fprintf(stderr, "%s: cannot start threads\n", c->program);
        app_pipeline_free(p);
        return NULL;
    }
    return p;
}

void app_pipeline_push(app_pipeline *p, app_batch *b)
{
    pthread_mutex_lock(&p->lock);
    p->undecoded++;
    push_back(&p->todo, b);
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

void app_pipeline_close(app_pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    p->closed = 1;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

app_batch *app_pipeline_pop(app_pipeline *p, double timeout_s)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    long long ns = until.tv_nsec + (long long)(timeout_s * 1e9);
    until.tv_sec += (time_t)(ns / 1000000000);
    until.tv_nsec = (long)(ns % 1000000000);
    pthread_mutex_lock(&p->lock);
    while (!p->done.head && !p->failed)
        if (pthread_cond_timedwait(&p->cond, &p->lock, &until))
            break;
    app_batch *b = pop_front(&p->done);
    pthread_mutex_unlock(&p->lock);
    return b;
}

int app_pipeline_failed(app_pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    int f = p->failed;
    pthread_mutex_unlock(&p->lock);
    return f;
}

double app_pipeline_model_rate(app_pipeline *p)
{
    double rate = 0;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < p->n_dev; i++)
        if (p->dev[i].model_s > 0)
            rate += (double)p->dev[i].images / p->dev[i].model_s;
    pthread_mutex_unlock(&p->lock);
    return rate;
}

double app_pipeline_model_seconds(app_pipeline *p)
{
    double s = 0;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < p->n_dev; i++)
        s += p->dev[i].model_s;
    pthread_mutex_unlock(&p->lock);
    return s;
}

void app_pipeline_startup(app_pipeline *p, double *open_s, double *load_s)
{
    *open_s = *load_s = 0;
    for (int i = 0; i < p->n_dev; i++) {
        *open_s += p->dev[i].open_s;
        *load_s += p->dev[i].load_s;
    }
}

int app_pipeline_classes(app_pipeline *p)
{
    return p->cfg.num_classes;
}

int app_pipeline_dim(app_pipeline *p)
{
    return p->cfg.dim;
}

const char *app_pipeline_device_names(app_pipeline *p)
{
    return p->names;
}

const char *app_pipeline_precision(app_pipeline *p, const char **engines)
{
    *engines = p->engines;
    return p->mode;
}

void app_pipeline_free(app_pipeline *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->n_decoders; i++)
        pthread_join(p->decoders[i], NULL);
    for (int i = 0; i < p->n_dev; i++)
        if (p->dev[i].started)
            pthread_join(p->dev[i].thread, NULL);
    queue *qs[] = {&p->todo, &p->ready, &p->done};
    for (int q = 0; q < 3; q++)
        for (app_batch *b; (b = pop_front(qs[q]));)
            app_batch_free(b);
    for (int i = 0; i < p->n_dev; i++) {
        gmlp_model_free(p->dev[i].model);
        gmlp_context_destroy(p->dev[i].ctx);
    }
    for (int i = 0; p->own_labels && i < p->cfg.num_classes; i++)
        free(p->own_labels[i]);
    free(p->own_labels);
    free(p->labels);
    free(p->dev);
    free(p->decoders);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
    free(p);
}
