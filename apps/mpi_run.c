/* gmlp-classify under mpirun: rank 0 enumerates the inputs, hands batches of
 * paths to the other ranks as they ask (so faster nodes do more), receives
 * their results (classes, features) and writes the one output in input order; it does not classify.
 * Every other rank runs the one-process pipeline on its node's devices.
 * Only each rank's main thread calls MPI (MPI_THREAD_FUNNELED). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classify.h"
#include "common.h"

enum { TAG_REQUEST = 1, TAG_BATCH, TAG_NO_MORE, TAG_RESULTS, TAG_FAIL, TAG_STATS };

int app_mpi_detected(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

static void nap(void)
{
    struct timespec t = {0, 2000000};
    nanosleep(&t, NULL);
}

/* A message from src (MPI_ANY_SOURCE) if one is waiting: its bytes (malloc'd), tag and source. */
static char *poll_message(int src, int *tag, int *from, int *len)
{
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(src, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (!flag)
        return NULL;
    MPI_Get_count(&st, MPI_BYTE, len);
    char *buf = malloc((size_t)*len + 1);
    if (!buf) {
        fprintf(stderr, "gmlp-classify: out of host memory for an MPI message\n");
        MPI_Abort(MPI_COMM_WORLD, APP_EXIT_FAIL);
    }
    MPI_Recv(buf, *len, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    buf[*len] = 0;
    *tag = st.MPI_TAG;
    *from = st.MPI_SOURCE;
    return buf;
}

/* ---- rank 0 ---- */

static void send_batch(int to, size_t id, char *const *paths, size_t n)
{
    app_buf b = {0};
    uint64_t head[2] = {id, n};
    app_buf_add(&b, (const char *)head, sizeof head);
    for (size_t i = 0; i < n; i++)
        app_buf_add(&b, paths[i], strlen(paths[i]) + 1);
    if (b.oom) {
        fprintf(stderr, "gmlp-classify: out of host memory\n");
        MPI_Abort(MPI_COMM_WORLD, APP_EXIT_FAIL);
    }
    MPI_Send(b.s, (int)b.len, MPI_BYTE, to, TAG_BATCH, MPI_COMM_WORLD);
    app_buf_free(&b);
}

/* A RESULTS message (send_results) read in order, its bounds checked. */
typedef struct reader {
    const char *p, *end;
} reader;

static int take(reader *r, void *dst, size_t n)
{
    if ((size_t)(r->end - r->p) < n)
        return 0;
    memcpy(dst, r->p, n);
    r->p += n;
    return 1;
}

static const char *take_string(reader *r)
{
    const char *s = r->p, *nul = memchr(s, 0, (size_t)(r->end - s));
    r->p = nul ? nul + 1 : r->end;
    return nul ? s : NULL;
}

/* A RESULTS message into the batch of pending paths it answers, which keeps msg (its strings); NULL when out of
 * memory or malformed. */
static app_batch *results_batch(char *msg, int len, char *const *pending, size_t n_pending, size_t batch)
{
    reader rd = {msg, msg + len};
    uint64_t head[5]; /* id, images, classes in all, dim, images with features */
    if (!take(&rd, head, sizeof head) || head[1] > batch || head[0] > n_pending / batch ||
        head[0] * batch + head[1] > n_pending || head[3] > INT32_MAX || head[4] > head[1])
        return NULL;
    app_batch *b = app_batch_new(head[0], pending + head[0] * batch, head[1]);
    int ok = b && app_batch_results(b, head[2], head[3] * head[4]);
    size_t f = 0;
    if (b)
        b->dim = (int)head[3];
    for (size_t i = 0, k = 0; ok && i < b->n; i++) {
        app_result *r = &b->results[i];
        int32_t n = 0, has = 0;
        ok = take(&rd, &n, sizeof n) && n >= -1 && (n < 0 || (uint64_t)n <= head[2] - k);
        if (ok && n < 0) {
            ok = (r->error = take_string(&rd)) != NULL;
            continue;
        }
        *r = (app_result){.k = n, .index = b->index + k, .prob = b->prob + k, .labels = b->labels + k};
        ok = ok && take(&rd, b->index + k, sizeof *b->index * (size_t)n) &&
             take(&rd, b->prob + k, sizeof *b->prob * (size_t)n);
        for (int c = 0; ok && c < n; c++)
            ok = (b->labels[k++] = take_string(&rd)) != NULL;
        ok = ok && take(&rd, &has, sizeof has) && (has == 0 || (has == 1 && f < head[4]));
        if (ok && has) {
            r->dim = b->dim;
            r->features = b->features + f * head[3];
            ok = take(&rd, b->features + f++ * head[3], sizeof *b->features * head[3]);
        }
    }
    if (!ok) {
        app_batch_free(b);
        return NULL;
    }
    b->strings = msg;
    return b;
}

static int coordinate(const app_options *o, char **args, int n_args, int ranks)
{
    const int workers = ranks - 1;
    /* each rank keeps about 2 (devices + threads) batches in flight */
    const size_t window = (size_t)workers * 2 * (size_t)(o->n_devices + o->threads + 1);
    app_inputs in = {0};
    app_sink sink = {0};
    char **pending = NULL;
    size_t n = 0;
    int st = app_open_run(o, args, n_args, window, &in, &sink, &pending, &n);
    if (st != APP_EXIT_OK)
        MPI_Abort(MPI_COMM_WORLD, st);
    const size_t batch = (size_t)o->batch, n_batches = (n + batch - 1) / batch;
    size_t handed = 0;
    int *waiting = calloc((size_t)ranks, sizeof *waiting), n_waiting = 0, finished = 0;
    double model_rate = 0;
    app_buf devices = {0}, engines = {0};
    while (finished < workers && !app_interrupted) {
        int tag, from, len;
        char *msg = poll_message(MPI_ANY_SOURCE, &tag, &from, &len);
        if (!msg) {
            app_sink_progress(&sink, 0);
            nap();
            continue;
        }
        if (tag == TAG_REQUEST) {
            waiting[n_waiting++] = from;
        } else if (tag == TAG_RESULTS) {
            app_batch *b = results_batch(msg, len, pending, n, batch);
            if (!b) {
                fprintf(stderr, "gmlp-classify: rank %d's results: out of host memory, or malformed\n", from);
                MPI_Abort(MPI_COMM_WORLD, APP_EXIT_FAIL);
            }
            msg = NULL; /* the batch's */
            app_sink_take(&sink, b);
        } else if (tag == TAG_FAIL) {
            app_sink_summary(&sink, 0, "MPI");
            fprintf(stderr, "gmlp-classify: rank %d failed: %s; stopping the job (a --resume run completes it)\n",
                    from, msg);
            app_finish(&sink, 0);
            MPI_Abort(MPI_COMM_WORLD, APP_EXIT_FAIL);
        } else if (tag == TAG_STATS) {
            double rate;
            memcpy(&rate, msg, sizeof rate);
            model_rate += rate;
            const char *names = msg + sizeof rate, *engine = names + strlen(names) + 1;
            app_buf_printf(&devices, "%srank %d: %s", devices.len ? "; " : "", from, names);
            app_buf_printf(&engines, "%srank %d: %s", engines.len ? "; " : "", from, engine);
            finished++;
        }
        free(msg);
        /* answer the ranks that asked, as far as the reorder window allows */
        for (int i = 0; i < n_waiting;) {
            if (handed < n_batches && handed >= sink.next + window) {
                i++;
                continue;
            }
            const int to = waiting[i];
            waiting[i] = waiting[--n_waiting];
            if (handed < n_batches) {
                size_t first = handed * batch;
                if (!handed) /* the ranks have loaded their models */
                    app_sink_start(&sink);
                send_batch(to, handed++, pending + first, n - first < batch ? n - first : batch);
            } else {
                MPI_Send(NULL, 0, MPI_BYTE, to, TAG_NO_MORE, MPI_COMM_WORLD);
            }
        }
    }
    const int complete = sink.next == n_batches;
    if (complete)
        app_sink_document(&sink, app_model_path(o), devices.s ? devices.s : "", app_precision_name(o),
                          engines.s ? engines.s : "");
    app_sink_summary(&sink, model_rate, devices.s ? devices.s : "no rank reported");
    st = app_finish(&sink, complete);
    app_sink_free(&sink);
    app_buf_free(&devices);
    app_buf_free(&engines);
    free(waiting);
    free(pending);
    app_inputs_free(&in);
    if (app_interrupted) /* the workers are still running */
        MPI_Abort(MPI_COMM_WORLD, st);
    return st;
}

/* ---- the other ranks ---- */

/* A batch's results: its id, images, classes in all, features per image and images with features, then for
 * each image its class count (-1: failed) and either its error or its classes' indices, probabilities and
 * labels, then whether its features follow (0 or 1) and them. */
static void send_results(const app_batch *b)
{
    app_buf m = {0};
    uint64_t head[5] = {b->id, b->n, 0, (uint64_t)b->dim, 0};
    for (size_t i = 0; i < b->n; i++) {
        head[2] += b->results[i].error ? 0 : (uint64_t)b->results[i].k;
        head[4] += !b->results[i].error && b->results[i].features;
    }
    app_buf_add(&m, (const char *)head, sizeof head);
    for (size_t i = 0; i < b->n; i++) {
        const app_result *r = &b->results[i];
        const int32_t n = r->error ? -1 : r->k, has = !r->error && r->features;
        app_buf_add(&m, (const char *)&n, sizeof n);
        if (r->error) {
            app_buf_add(&m, r->error, strlen(r->error) + 1);
            continue;
        }
        app_buf_add(&m, (const char *)r->index, sizeof *r->index * (size_t)n);
        app_buf_add(&m, (const char *)r->prob, sizeof *r->prob * (size_t)n);
        for (int c = 0; c < n; c++)
            app_buf_add(&m, r->labels[c], strlen(r->labels[c]) + 1);
        app_buf_add(&m, (const char *)&has, sizeof has);
        if (has)
            app_buf_add(&m, (const char *)r->features, sizeof *r->features * (size_t)b->dim);
    }
    if (m.oom) {
        fprintf(stderr, "gmlp-classify: out of host memory\n");
        MPI_Abort(MPI_COMM_WORLD, APP_EXIT_FAIL);
    }
    MPI_Send(m.s, (int)m.len, MPI_BYTE, 0, TAG_RESULTS, MPI_COMM_WORLD);
    app_buf_free(&m);
}

static void send_fail(const char *why)
{
    MPI_Send(why, (int)strlen(why) + 1, MPI_BYTE, 0, TAG_FAIL, MPI_COMM_WORLD);
}

static int classify_batches(const app_options *o, int rank)
{
    app_pipeline_config pc = app_pipeline_config_of(o);
    pc.quiet = o->quiet || rank > 1; /* the defaults note once */
    int st;
    app_pipeline *p = app_pipeline_start(&pc, &st);
    if (!p) {
        send_fail(st == APP_EXIT_USAGE ? "the options do not fit the model (its message is above)"
                                       : "it could not load the model on its devices (its message is above)");
        return st;
    }
    const int prefetch = o->n_devices + o->threads + 1;
    int outstanding = 0, asked = 0, no_more = 0;
    while ((!no_more || outstanding) && !app_interrupted) { /* interrupted: rank 0 ends the job */
        if (!no_more && !asked && outstanding < prefetch) {
            MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_REQUEST, MPI_COMM_WORLD);
            asked = 1;
        }
        int tag, from, len;
        char *msg = asked ? poll_message(0, &tag, &from, &len) : NULL;
        if (msg) {
            asked = 0;
            if (tag == TAG_NO_MORE) {
                no_more = 1;
                app_pipeline_close(p);
            } else if (tag == TAG_BATCH) {
                uint64_t head[2];
                memcpy(head, msg, sizeof head);
                char **paths = malloc((head[1] + 1) * sizeof *paths);
                char *s = msg + sizeof head;
                for (uint64_t i = 0; paths && i < head[1]; i++, s += strlen(s) + 1)
                    paths[i] = s;
                app_batch *b = paths ? app_batch_new(head[0], paths, head[1]) : NULL;
                free(paths);
                if (!b) {
                    send_fail("out of host memory");
                    app_pipeline_free(p);
                    return APP_EXIT_FAIL;
                }
                app_pipeline_push(p, b);
                outstanding++;
            }
            free(msg);
        }
        app_batch *b = app_pipeline_pop(p, asked ? 0.002 : 0.05);
        if (b) {
            send_results(b);
            app_batch_free(b);
            outstanding--;
        }
        if (!b && app_pipeline_failed(p)) { /* the batches done before were sent */
            send_fail("every device of the rank failed (the messages are above)");
            app_pipeline_free(p);
            return APP_EXIT_FAIL;
        }
    }
    if (app_interrupted) {
        app_pipeline_free(p);
        return APP_EXIT_FAIL;
    }
    app_buf stats = {0};
    double rate = app_pipeline_model_rate(p);
    const char *engines;
    app_pipeline_precision(p, &engines);
    app_buf_add(&stats, (const char *)&rate, sizeof rate);
    app_buf_add(&stats, app_pipeline_device_names(p), strlen(app_pipeline_device_names(p)) + 1);
    app_buf_add(&stats, engines, strlen(engines) + 1);
    MPI_Send(stats.s, (int)stats.len, MPI_BYTE, 0, TAG_STATS, MPI_COMM_WORLD);
    app_buf_free(&stats);
    app_pipeline_free(p);
    return APP_EXIT_OK;
}

int app_mpi_main(const app_options *o, char **args, int n_args)
{
    int provided, rank, size;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int st;
    if (size == 1) /* nothing to hand out: one process as without mpirun */
        st = app_run_local(o, args, n_args);
    else
        st = rank == 0 ? coordinate(o, args, n_args, size) : classify_batches(o, rank);
    MPI_Finalize();
    return st;
}
