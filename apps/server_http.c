/* The HTTP side, on libmicrohttpd: a thread per connection (a handler may
 * wait for its batch or stream tokens), a cap on connections, an idle
 * timeout and a deadline for each request's headers (server_deadline.h); routing,
 * the API key, bodies with their type and size checked before they are read,
 * multipart parts through MHD's post processor, the access log. */
#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "server.h"
#include "server_deadline.h"
#include "server_metrics.h"

/* One request, from its headers to its completion. */
typedef struct call {
    srv_endpoint ep;
    char *method, *url; /* for the access log */
    double t0;
    unsigned status; /* of the reply queued; 0 before */
    srv_body body;
    size_t received;
    struct MHD_PostProcessor *pp;
    int malformed; /* the multipart body did not parse */
} call;

static atomic_int active; /* requests between their headers and their completion */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int srv_http_active(void)
{
    return atomic_load(&active);
}

void srv_body_free(srv_body *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->parts[i].name);
        free(b->parts[i].data);
    }
    free(b->parts);
    *b = (srv_body){0};
}

static const struct route {
    const char *url, *method;
    srv_endpoint ep;
} routes[] = {
    {"/v1/classify", "POST", SRV_CLASSIFY},
    {"/v1/completions", "POST", SRV_COMPLETIONS},
    {"/v1/chat/completions", "POST", SRV_CHAT},
    {"/v1/models", "GET", SRV_MODELS},
    {"/health", "GET", SRV_HEALTH},
    {"/metrics", "GET", SRV_METRICS},
};

/* A new part (name NULL: the raw body's "-"); 0 when out of memory. */
static int new_part(srv_body *b, const char *name)
{
    srv_part *grown = realloc(b->parts, (b->n + 1) * sizeof *grown);
    if (!grown)
        return 0;
    b->parts = grown;
    b->parts[b->n] = (srv_part){.name = strdup(name ? name : "-")};
    return b->parts[b->n++].name != NULL;
}

static int add_bytes(srv_part *p, const char *data, size_t n)
{
    if (p->size + n > p->cap) {
        size_t cap = p->cap ? p->cap : 4096;
        while (cap < p->size + n)
            cap *= 2;
        unsigned char *grown = realloc(p->data, cap);
        if (!grown)
            return 0;
        p->data = grown;
        p->cap = cap;
    }
    memcpy(p->data + p->size, data, n);
    p->size += n;
    return 1;
}

/* MHD's post processor hands each part's bytes in pieces: off 0 starts a part. */
static enum MHD_Result on_part(void *cls, enum MHD_ValueKind kind, const char *key, const char *filename,
                               const char *content_type, const char *transfer_encoding, const char *data, uint64_t off,
                               size_t size)
{
    (void)kind, (void)content_type, (void)transfer_encoding;
    srv_body *b = cls;
    const char *name = filename ? filename : key;
    srv_part *last = b->n ? &b->parts[b->n - 1] : NULL;
    if (off == 0 && (!last || last->size || strcmp(last->name, name ? name : "-")) && !new_part(b, name))
        return MHD_NO;
    return add_bytes(&b->parts[b->n - 1], data, size) ? MHD_YES : MHD_NO;
}

/* The media type without its parameters matches type. */
static int media_is(const char *header, const char *type)
{
    const size_t n = strlen(type);
    return header && !strncasecmp(header, type, n) && (!header[n] || header[n] == ';' || header[n] == ' ');
}

/* An API key given as "Authorization: Bearer KEY" (OpenAI's clients) or "X-Api-Key: KEY". */
static int key_ok(const srv_server *s, struct MHD_Connection *conn)
{
    const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    const char *given = auth && !strncasecmp(auth, "Bearer ", 7)
                            ? auth + 7
                            : MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Api-Key");
    if (!given || strlen(given) != strlen(s->o.api_key))
        return 0;
    unsigned char diff = 0; /* every byte compared: the time says nothing of where they differ */
    for (size_t i = 0; given[i]; i++)
        diff |= (unsigned char)(given[i] ^ s->o.api_key[i]);
    return !diff;
}

/* What can be answered from the headers alone: a wrong path, method, key,
 * type or size.  status 0: nothing, read the body. */
static srv_reply check_headers(srv_server *s, struct MHD_Connection *conn, call *c, const char *url, const char *method)
{
    const struct route *r = NULL;
    for (size_t i = 0; i < sizeof routes / sizeof *routes && !r; i++)
        if (!strcmp(url, routes[i].url))
            r = &routes[i];
    c->ep = r ? r->ep : SRV_OTHER;
    if (!r)
        return srv_error(404, NULL,
                         "no endpoint %s (POST /v1/classify, /v1/completions, /v1/chat/completions; "
                         "GET /v1/models, /health, /metrics)",
                         url);
    if (strcmp(method, r->method)) {
        srv_reply e = srv_error(405, NULL, "%s takes %s, not %s", url, r->method, method);
        if (e.response)
            MHD_add_response_header(e.response, MHD_HTTP_HEADER_ALLOW, r->method);
        return e;
    }
    if (s->o.api_key && c->ep != SRV_HEALTH && !key_ok(s, conn)) {
        srv_reply e = srv_error(401, NULL, "a wrong or missing API key (Authorization: Bearer KEY)");
        if (e.response)
            MHD_add_response_header(e.response, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
        return e;
    }
    if (strcmp(method, "POST"))
        return (srv_reply){0};
    const char *length = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const unsigned long long max = (unsigned long long)s->o.max_body_mb << 20;
    if (length && strtoull(length, NULL, 10) > max)
        return srv_error(413, "body", "the body is over --max-body-mb (%d MiB)", s->o.max_body_mb);
    const char *type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (c->ep == SRV_CLASSIFY && media_is(type, "multipart/form-data")) {
        c->body.multipart = 1;
        if (!(c->pp = MHD_create_post_processor(conn, 64 * 1024, on_part, &c->body)))
            return srv_error(400, "Content-Type", "a multipart/form-data body needs a boundary");
    } else if (c->ep == SRV_CLASSIFY
                   ? type && strncasecmp(type, "image/", 6) && !media_is(type, "application/octet-stream")
                   : !media_is(type, "application/json")) {
        return srv_error(415, "Content-Type", "%s takes %s, not %s", url,
                         c->ep == SRV_CLASSIFY ? "an image (image/*, application/octet-stream) or multipart/form-data"
                                               : "application/json",
                         type ? type : "a body without a type");
    }
    return c->pp || new_part(&c->body, NULL) ? (srv_reply){0} : srv_error(500, NULL, "out of host memory");
}

/* A piece of the body: kept, or (past the limit, malformed) dropped to be answered at the end. */
static void take(srv_server *s, call *c, const char *data, size_t n)
{
    c->received += n;
    if (c->received > (size_t)s->o.max_body_mb << 20 || c->malformed)
        return;
    if (c->pp)
        c->malformed = MHD_post_process(c->pp, data, n) != MHD_YES;
    else if (!add_bytes(&c->body.parts[0], data, n))
        c->malformed = 1;
}

static srv_reply dispatch(srv_server *s, struct MHD_Connection *conn, call *c)
{
    if (c->received > (size_t)s->o.max_body_mb << 20)
        return srv_error(413, "body", "the body is over --max-body-mb (%d MiB)", s->o.max_body_mb);
    if (c->pp) {
        c->malformed |= MHD_destroy_post_processor(c->pp) != MHD_YES;
        c->pp = NULL;
    }
    if (c->malformed)
        return srv_error(400, "body",
                         c->body.multipart ? "the multipart/form-data body is malformed"
                                           : "out of host memory reading the body");
    if (c->body.n == 1 && !c->body.multipart && !c->body.parts[0].size)
        srv_body_free(&c->body); /* an empty raw body: no part */
    switch (c->ep) {
    case SRV_CLASSIFY: return srv_classify(s, conn, &c->body);
    case SRV_COMPLETIONS: return srv_complete(s, &c->body, 0);
    case SRV_CHAT: return srv_complete(s, &c->body, 1);
    case SRV_MODELS: return srv_models(s);
    case SRV_HEALTH: return srv_health(s);
    case SRV_METRICS: return srv_metrics_page(s);
    default: return srv_error(404, NULL, "no such endpoint");
    }
}

static enum MHD_Result send_reply(struct MHD_Connection *conn, call *c, srv_reply r)
{
    if (!r.response)
        return MHD_NO; /* out of memory: the connection is closed */
    c->status = r.status;
    enum MHD_Result ret = MHD_queue_response(conn, r.status, r.response);
    MHD_destroy_response(r.response);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *data, size_t *size, void **con_cls)
{
    (void)version;
    srv_server *s = cls;
    call *c = *con_cls;
    if (!c) {
        if (!(c = calloc(1, sizeof *c)))
            return MHD_NO;
        *con_cls = c;
        atomic_fetch_add(&active, 1);
        srv_deadlines_busy(conn, 1);
        c->t0 = now();
        c->method = strdup(method);
        c->url = strdup(url);
        srv_reply early = check_headers(s, conn, c, url, method);
        return early.status ? send_reply(conn, c, early) : MHD_YES;
    }
    if (*size) {
        if (!c->status)
            take(s, c, data, *size);
        *size = 0;
        return MHD_YES;
    }
    return c->status ? MHD_YES : send_reply(conn, c, dispatch(s, conn, c));
}

/* The request is over (answered, or the client left, or it timed out): metrics, log, free. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    srv_server *s = cls;
    call *c = *con_cls;
    if (!c)
        return;
    srv_deadlines_busy(conn, 0);
    const double t = now() - c->t0;
    if (c->status)
        srv_metrics_request(s->metrics, c->ep, c->status, t);
    if (s->o.verbose)
        fprintf(stderr, SERVER_PROGRAM ": %s %s %u %.1f ms%s\n", c->method ? c->method : "?", c->url ? c->url : "?",
                c->status, 1e3 * t, toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (not completed)");
    if (c->pp)
        MHD_destroy_post_processor(c->pp);
    srv_body_free(&c->body);
    free(c->method);
    free(c->url);
    free(c);
    *con_cls = NULL;
    atomic_fetch_sub(&active, 1);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    const srv_server *s = cls;
    if (!s->o.verbose)
        return;
    fputs(SERVER_PROGRAM ": libmicrohttpd: ", stderr);
    vfprintf(stderr, fmt, ap);
}

struct MHD_Daemon *srv_http_start(srv_server *s, unsigned *port)
{
    struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    char service[16];
    snprintf(service, sizeof service, "%d", s->o.port);
    int err = getaddrinfo(s->o.host, service, &hints, &ai);
    if (err) {
        fprintf(stderr, SERVER_PROGRAM ": --host %s: %s\n", s->o.host, gai_strerror(err));
        return NULL;
    }
    if (!(s->deadlines = srv_deadlines_start(s->o.timeout_s))) {
        freeaddrinfo(ai);
        fprintf(stderr, SERVER_PROGRAM ": cannot start a thread\n");
        return NULL;
    }
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG |
                     (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, (uint16_t)s->o.port, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s,
        MHD_OPTION_SOCK_ADDR, ai->ai_addr, MHD_OPTION_CONNECTION_LIMIT, (unsigned)s->o.max_connections,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->o.timeout_s, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_NOTIFY_CONNECTION, srv_deadlines_notify, s->deadlines, MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!d) {
        srv_deadlines_stop(s->deadlines);
        s->deadlines = NULL;
        fprintf(stderr, SERVER_PROGRAM ": cannot listen on %s port %d (in use, or not an address of this machine)\n",
                s->o.host, s->o.port);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    *port = info ? info->port : (unsigned)s->o.port;
    return d;
}

void srv_http_stop(srv_server *s, struct MHD_Daemon *d)
{
    MHD_stop_daemon(d);
    srv_deadlines_stop(s->deadlines);
    s->deadlines = NULL;
}
