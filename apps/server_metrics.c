#include "server_metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "strbuf.h"

/* Upper bounds of the buckets (Prometheus' "le"); the last bucket is +Inf. */
static const double latency_bounds[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
static const double batch_bounds[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
enum {
    N_LATENCY = sizeof latency_bounds / sizeof *latency_bounds,
    N_BATCH = sizeof batch_bounds / sizeof *batch_bounds,
    N_STATUS = 600, /* HTTP statuses are 100..599 */
};

typedef struct histogram {
    size_t count[N_LATENCY + 1]; /* per bucket, not cumulative; room for the longer table */
    size_t n;
    double sum;
} histogram;

/* A route's counts: requests by status, their latency. */
typedef struct endpoint {
    size_t requests[N_STATUS];
    histogram latency;
} endpoint;

struct srv_metrics {
    pthread_mutex_t lock;
    const srv_route *routes;
    size_t n_routes;
    endpoint *endpoints; /* n_routes + 1: the last for the requests of no route */
    histogram batches;
    size_t images, tokens;
    double lm_seconds;
};

srv_metrics *srv_metrics_new(const srv_route *routes, size_t n)
{
    srv_metrics *m = calloc(1, sizeof *m);
    if (m && !(m->endpoints = calloc(n + 1, sizeof *m->endpoints))) {
        free(m);
        return NULL;
    }
    if (m) {
        m->routes = routes;
        m->n_routes = n;
        pthread_mutex_init(&m->lock, NULL);
    }
    return m;
}

void srv_metrics_free(srv_metrics *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->lock);
    free(m->endpoints);
    free(m);
}

static const char *endpoint_name(const srv_metrics *m, size_t e)
{
    return e < m->n_routes ? m->routes[e].path : "other";
}

static void observe(histogram *h, const double *bounds, size_t n_bounds, double v)
{
    size_t i = 0;
    while (i < n_bounds && v > bounds[i])
        i++;
    h->count[i]++;
    h->n++;
    h->sum += v;
}

void srv_metrics_request(srv_metrics *m, const srv_route *route, unsigned status, double seconds)
{
    endpoint *e = &m->endpoints[route ? (size_t)(route - m->routes) : m->n_routes];
    pthread_mutex_lock(&m->lock);
    if (status < N_STATUS)
        e->requests[status]++;
    observe(&e->latency, latency_bounds, N_LATENCY, seconds);
    pthread_mutex_unlock(&m->lock);
}

void srv_metrics_batch(srv_metrics *m, size_t n)
{
    pthread_mutex_lock(&m->lock);
    observe(&m->batches, batch_bounds, N_BATCH, (double)n);
    pthread_mutex_unlock(&m->lock);
}

void srv_metrics_images(srv_metrics *m, size_t n)
{
    pthread_mutex_lock(&m->lock);
    m->images += n;
    pthread_mutex_unlock(&m->lock);
}

void srv_metrics_tokens(srv_metrics *m, size_t n, double seconds)
{
    pthread_mutex_lock(&m->lock);
    m->tokens += n;
    m->lm_seconds += seconds;
    pthread_mutex_unlock(&m->lock);
}

/* One histogram's _bucket, _sum and _count lines; labels: "" or `endpoint="..."`. */
static void histogram_text(app_buf *b, const char *name, const char *labels, const histogram *h, const double *bounds,
                           size_t n_bounds)
{
    const char *comma = *labels ? "," : "";
    size_t cumulative = 0;
    for (size_t i = 0; i <= n_bounds; i++) {
        cumulative += h->count[i];
        char le[32] = "+Inf";
        if (i < n_bounds)
            snprintf(le, sizeof le, "%g", bounds[i]);
        app_buf_printf(b, "%s_bucket{%s%sle=\"%s\"} %zu\n", name, labels, comma, le, cumulative);
    }
    const char *open = *labels ? "{" : "", *close = *labels ? "}" : "";
    app_buf_printf(b, "%s_sum%s%s%s %.9g\n", name, open, labels, close, h->sum);
    app_buf_printf(b, "%s_count%s%s%s %zu\n", name, open, labels, close, h->n);
}

char *srv_metrics_text(srv_metrics *m, size_t queue_depth, double classify_seconds, size_t lm_waiting)
{
    app_buf b = {0};
    pthread_mutex_lock(&m->lock);
    app_buf_printf(&b, "# HELP gmlp_requests_total Requests answered, by endpoint and HTTP status.\n"
                       "# TYPE gmlp_requests_total counter\n");
    for (size_t e = 0; e <= m->n_routes; e++)
        for (int s = 0; s < N_STATUS; s++)
            if (m->endpoints[e].requests[s])
                app_buf_printf(&b, "gmlp_requests_total{endpoint=\"%s\",status=\"%d\"} %zu\n", endpoint_name(m, e), s,
                               m->endpoints[e].requests[s]);
    app_buf_printf(&b, "# HELP gmlp_request_seconds Time from a request's first byte to its reply's last.\n"
                       "# TYPE gmlp_request_seconds histogram\n");
    for (size_t e = 0; e <= m->n_routes; e++) {
        if (!m->endpoints[e].latency.n)
            continue;
        char labels[256];
        snprintf(labels, sizeof labels, "endpoint=\"%s\"", endpoint_name(m, e));
        histogram_text(&b, "gmlp_request_seconds", labels, &m->endpoints[e].latency, latency_bounds, N_LATENCY);
    }
    app_buf_printf(&b, "# HELP gmlp_batch_images Images per batch sent to the devices.\n"
                       "# TYPE gmlp_batch_images histogram\n");
    histogram_text(&b, "gmlp_batch_images", "", &m->batches, batch_bounds, N_BATCH);
    app_buf_printf(&b,
                   "# HELP gmlp_queue_images Images submitted and not yet answered.\n"
                   "# TYPE gmlp_queue_images gauge\ngmlp_queue_images %zu\n"
                   "# HELP gmlp_queue_completions Completions waiting for a worker.\n"
                   "# TYPE gmlp_queue_completions gauge\ngmlp_queue_completions %zu\n"
                   "# HELP gmlp_images_total Images classified (those that failed to decode included).\n"
                   "# TYPE gmlp_images_total counter\ngmlp_images_total %zu\n"
                   "# HELP gmlp_tokens_total Tokens generated.\n"
                   "# TYPE gmlp_tokens_total counter\ngmlp_tokens_total %zu\n"
                   "# HELP gmlp_device_seconds_total Seconds in the library's calls, by model.\n"
                   "# TYPE gmlp_device_seconds_total counter\n"
                   "gmlp_device_seconds_total{model=\"classifier\"} %.9g\n"
                   "gmlp_device_seconds_total{model=\"lm\"} %.9g\n",
                   queue_depth, lm_waiting, m->images, m->tokens, classify_seconds, m->lm_seconds);
    pthread_mutex_unlock(&m->lock);
    if (b.oom)
        app_buf_free(&b);
    return b.s;
}
