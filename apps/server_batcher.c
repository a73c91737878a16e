#include "server_batcher.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "server_metrics.h"

/* A request waiting for its rows: the batches name it by id (app_blob's
 * owner), so that rows which come after it was answered (503) are dropped. */
typedef struct request request;
struct request {
    size_t id, n, done;
    srv_row_fn row;
    const void *ctx;
    json_t *rows; /* n entries, JSON null until classified */
    unsigned status;
    const char *why;
    pthread_cond_t cond;
    request *prev, *next; /* the requests waiting */
};

struct srv_batcher {
    app_pipeline *p;
    srv_metrics *m;
    size_t batch, queue;
    double max_delay_s;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* the open batch changed, or stop */
    app_batch *open;     /* gathering images */
    double deadline;     /* when the open batch goes, full or not */
    size_t next_batch, next_request, depth;
    request *waiting;
    int stop, dead;
    pthread_t flusher, collector;
    int threads;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static request *find_request(srv_batcher *b, size_t id)
{
    request *r = b->waiting;
    while (r && r->id != id)
        r = r->next;
    return r;
}

static void unlink_request(srv_batcher *b, request *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else if (b->waiting == r)
        b->waiting = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->prev = r->next = NULL;
}

/* Every waiting request answered 503 (lock held). */
static void fail_all(srv_batcher *b, const char *why)
{
    for (request *r; (r = b->waiting);) {
        unlink_request(b, r);
        b->depth -= r->n - r->done;
        r->status = 503;
        r->why = why;
        pthread_cond_signal(&r->cond);
    }
}

/* The open batch to the pipeline (lock held). */
static void send_open(srv_batcher *b)
{
    srv_metrics_batch(b->m, b->open->n);
    app_pipeline_push(b->p, b->open);
    b->open = NULL;
}

static void *flusher_main(void *arg)
{
    srv_batcher *b = arg;
    pthread_mutex_lock(&b->lock);
    while (!b->stop) {
        if (b->open && now() >= b->deadline) {
            send_open(b);
            continue;
        }
        if (!b->open) {
            pthread_cond_wait(&b->cond, &b->lock);
            continue;
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        long long ns = until.tv_nsec + (long long)((b->deadline - now()) * 1e9);
        until.tv_sec += (time_t)(ns / 1000000000);
        until.tv_nsec = (long)(ns % 1000000000);
        pthread_cond_timedwait(&b->cond, &b->lock, &until);
    }
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

/* The row of an image that could not be given its own. */
static json_t *memory_row(const request *r, const char *name, size_t slot)
{
    return r->row(name, &(app_result){.error = "out of host memory"}, slot, r->ctx);
}

/* A classified batch's results to their requests, as rows (lock held). */
static void deliver(srv_batcher *b, app_batch *batch)
{
    for (size_t i = 0; i < batch->n; i++) {
        request *r = find_request(b, batch->blobs[i].owner);
        if (!r)
            continue;
        const size_t slot = batch->blobs[i].slot;
        json_t *row = r->row(batch->paths[i], &batch->results[i], slot, r->ctx);
        json_array_set_new(r->rows, slot, row ? row : memory_row(r, batch->paths[i], slot));
        b->depth--;
        if (++r->done == r->n) {
            unlink_request(b, r);
            r->status = 200;
            pthread_cond_signal(&r->cond);
        }
    }
    srv_metrics_images(b->m, batch->n);
}

static void *collector_main(void *arg)
{
    srv_batcher *b = arg;
    for (;;) {
        app_batch *batch = app_pipeline_pop(b->p, 0.1);
        pthread_mutex_lock(&b->lock);
        if (batch)
            deliver(b, batch);
        else if (app_pipeline_failed(b->p) && !b->dead) {
            b->dead = 1;
            fail_all(b, "no device is left");
        }
        const int stop = b->stop;
        pthread_mutex_unlock(&b->lock);
        app_batch_free(batch);
        if (stop && !batch)
            return NULL;
    }
}

srv_batcher *srv_batcher_start(app_pipeline *p, srv_metrics *m, int batch, double max_delay_s, size_t queue)
{
    srv_batcher *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    *b = (srv_batcher){.p = p, .m = m, .batch = (size_t)batch, .queue = queue, .max_delay_s = max_delay_s};
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->cond, NULL);
    if (!pthread_create(&b->flusher, NULL, flusher_main, b) && ++b->threads &&
        !pthread_create(&b->collector, NULL, collector_main, b) && ++b->threads)
        return b;
    srv_batcher_stop(b);
    srv_batcher_free(b);
    return NULL;
}

/* The request's images into the open batch and the batches after it (lock held); 0 when out of memory. */
static int add_images(srv_batcher *b, request *r, char *const *names, app_blob *blobs)
{
    int ok = 1;
    for (size_t i = 0; i < r->n; i++) {
        if (!b->open) {
            b->open = app_batch_new_blobs(b->next_batch++, b->batch);
            b->deadline = now() + b->max_delay_s;
            pthread_cond_signal(&b->cond);
        }
        blobs[i].owner = r->id;
        blobs[i].slot = i;
        if (!b->open || !app_batch_add_blob(b->open, names[i], blobs[i])) {
            /* the images before are on their way: this one and the rest get their error rows */
            for (size_t j = i + (b->open != NULL); j < r->n; j++) /* add_blob freed its own */
                free(blobs[j].data);
            for (size_t j = i; j < r->n; j++)
                json_array_set_new(r->rows, j, memory_row(r, names[j], j));
            r->done += r->n - i;
            ok = 0;
            break;
        }
        b->depth++;
        if (b->open->n == b->batch)
            send_open(b);
    }
    if (b->open && b->max_delay_s <= 0)
        send_open(b);
    return ok;
}

unsigned srv_batcher_classify(srv_batcher *b, char *const *names, app_blob *blobs, size_t n, srv_row_fn row,
                              const void *ctx, json_t **rows, const char **why)
{
    *rows = NULL;
    request r = {.n = n, .row = row, .ctx = ctx, .rows = json_array()};
    for (size_t i = 0; r.rows && i < n; i++)
        if (json_array_append_new(r.rows, json_null()))
            json_decref(r.rows), r.rows = NULL;
    pthread_mutex_lock(&b->lock);
    const char *refused = !r.rows                               ? "out of host memory"
                          : b->stop                             ? "the server is stopping"
                          : b->dead                             ? "no device is left"
                          : b->depth && b->depth + n > b->queue ? "the queue is full"
                                                                : NULL;
    if (refused) {
        pthread_mutex_unlock(&b->lock);
        for (size_t i = 0; i < n; i++)
            free(blobs[i].data);
        json_decref(r.rows);
        *why = refused;
        return 503;
    }
    pthread_cond_init(&r.cond, NULL);
    r.id = b->next_request++;
    r.next = b->waiting;
    if (r.next)
        r.next->prev = &r;
    b->waiting = &r;
    if (!add_images(b, &r, names, blobs) && r.done == r.n) {
        unlink_request(b, &r);
        r.status = 200;
    }
    while (!r.status)
        pthread_cond_wait(&r.cond, &b->lock);
    pthread_mutex_unlock(&b->lock);
    pthread_cond_destroy(&r.cond);
    if (r.status != 200) {
        json_decref(r.rows);
        *why = r.why;
        return r.status;
    }
    *rows = r.rows;
    return 200;
}

size_t srv_batcher_depth(srv_batcher *b)
{
    pthread_mutex_lock(&b->lock);
    size_t d = b->depth;
    pthread_mutex_unlock(&b->lock);
    return d;
}

void srv_batcher_stop(srv_batcher *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&b->lock);
    b->stop = 1;
    fail_all(b, "the server is stopping");
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->lock);
    if (b->threads > 0)
        pthread_join(b->flusher, NULL);
    if (b->threads > 1)
        pthread_join(b->collector, NULL);
    b->threads = 0;
}

void srv_batcher_free(srv_batcher *b)
{
    if (!b)
        return;
    app_batch_free(b->open);
    pthread_cond_destroy(&b->cond);
    pthread_mutex_destroy(&b->lock);
    free(b);
}
