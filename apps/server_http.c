/* The HTTP side, on libmicrohttpd: a thread per connection (a handler may
 * wait for its batch or stream tokens), a cap on connections, an idle
 * timeout and a deadline for each request's headers (server_deadline.h); TLS
 * through libmicrohttpd's own (GnuTLS) where it has it; the headers handed
 * to srv_head_check (server_head.c: routing, framing, the API key, the body's
 * type and size) before the body is read; the body, the access log. */
#include <errno.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "server.h"
#include "server_deadline.h"
#include "server_metrics.h"
#include "strbuf.h"

/* One request, from its request line (on_uri) to its completion. */
typedef struct call {
    const srv_route *route; /* NULL: no such path */
    char *method, *url; /* for the access log: the method once the headers are in, the request line's URI */
    double t0;
    unsigned status; /* of the reply queued; 0 before */
    int handled;     /* the handler has had the headers: the request counts in active */
    srv_body body;
    size_t received;
    int no_memory; /* a piece of the body could not be kept */
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

/* The request's headers as libmicrohttpd parsed them, in order, for srv_head_check. */
static enum MHD_Result collect(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    srv_head *h = cls;
    h->headers[h->n++] = (srv_header){key, value ? value : ""};
    return MHD_YES;
}

static srv_reply check_headers(srv_server *s, struct MHD_Connection *conn, call *c, const char *url, const char *method)
{
    const int n = MHD_get_connection_values(conn, MHD_HEADER_KIND, NULL, NULL);
    srv_head h = {.method = method, .url = url, .headers = malloc(((size_t)(n > 0 ? n : 0) + 1) * sizeof(srv_header))};
    if (!h.headers)
        return srv_error(500, NULL, "out of host memory");
    MHD_get_connection_values(conn, MHD_HEADER_KIND, collect, &h);
    srv_reply r = srv_head_check(&s->o, &h, &c->route, &c->body);
    free(h.headers);
    return r;
}

/* A piece of the body: kept in the raw part, or (past the limit, out of memory) dropped to be answered at
 * the end.  A GET's body has no part to go to: it means nothing (RFC 9110 9.3.1) and is dropped. */
static void take(srv_server *s, call *c, const char *data, size_t n)
{
    c->received += n;
    if (c->received > (size_t)s->o.max_body_mb << 20 || c->no_memory || !c->body.n)
        return;
    c->no_memory = !srv_part_append(&c->body.parts[0], data, n);
}

static srv_reply dispatch(srv_server *s, struct MHD_Connection *conn, call *c)
{
    if (c->received > (size_t)s->o.max_body_mb << 20)
        return srv_error(413, "body", "the body is over --max-body-mb (%d MiB)", s->o.max_body_mb);
    if (c->no_memory)
        return srv_error(500, NULL, "out of host memory reading the body");
    if (c->body.n == 1 && !c->body.boundary[0] && !c->body.parts[0].size) { /* an empty raw body: no part */
        const int json = c->body.json;
        srv_body_free(&c->body);
        c->body.json = json;
    }
    return c->route->handler(s, conn, &c->body);
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

static call *call_new(const char *uri)
{
    call *c = calloc(1, sizeof *c);
    if (c && (c->url = strdup(uri))) { /* the route by the path before any query, until the handler's own */
        char *query = strchr(c->url, '?');
        if (query)
            *query = 0;
        c->route = srv_route_of(c->url);
        if (query)
            *query = '?';
    }
    if (c)
        c->t0 = now();
    return c;
}

/* The request line is in (MHD_OPTION_URI_LOG_CALLBACK): the call starts here, so that a request libmicrohttpd
 * refuses itself before the handler (headers too large, a bad Content-Length or chunk) still reaches
 * on_completed, and the access log and the metrics count it.  uri is as sent (not decoded: no line break). */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    (void)cls, (void)conn;
    return call_new(uri); /* NULL (out of memory): on_request makes one */
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *data, size_t *size, void **con_cls)
{
    (void)version;
    srv_server *s = cls;
    call *c = *con_cls;
    if (!c && !(c = *con_cls = call_new(url)))
        return MHD_NO;
    if (!c->handled) {
        c->handled = 1;
        atomic_fetch_add(&active, 1);
        srv_deadlines_busy(conn, 1);
        c->method = strdup(method);
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
    /* no reply of ours: libmicrohttpd's own (its HTML refusal), if it queued one */
    const union MHD_ConnectionInfo *own = c->status ? NULL : MHD_get_connection_info(conn, MHD_CONNECTION_INFO_HTTP_STATUS);
    if (own)
        c->status = own->http_status;
    const double t = now() - c->t0;
    if (c->status)
        srv_metrics_request(s->metrics, c->route, c->status, t);
    if (s->o.verbose)
        fprintf(stderr, SERVER_PROGRAM ": %s %s %u %.1f ms%s%s\n", c->method ? c->method : "?", c->url ? c->url : "?",
                c->status, 1e3 * t, own ? " (libmicrohttpd's reply)" : "",
                toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (not completed)");
    srv_body_free(&c->body);
    free(c->method);
    free(c->url);
    if (c->handled) {
        srv_deadlines_busy(conn, 0);
        atomic_fetch_sub(&active, 1);
    }
    free(c);
    *con_cls = NULL;
}

static atomic_int starting; /* MHD_start_daemon runs: its messages say why it failed (a bad key, a port in use) */

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    const srv_server *s = cls;
    if (!s->o.verbose && !atomic_load(&starting))
        return;
    fputs(SERVER_PROGRAM ": libmicrohttpd: ", stderr);
    vfprintf(stderr, fmt, ap);
}

/* The PEM files of --tls-cert and --tls-key, read for MHD_OPTION_HTTPS_MEM_CERT and _KEY (libmicrohttpd hands
 * them to GnuTLS while it starts): 1, or 0 with a message. */
static int tls_read(const srv_options *o, char **cert, char **key)
{
    *cert = *key = NULL;
    if (!o->tls_cert)
        return 1;
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        fprintf(stderr, SERVER_PROGRAM ": --tls-cert: this libmicrohttpd is built without TLS (GnuTLS); serve plain "
                                       "HTTP behind a reverse proxy that terminates TLS (docs/server.md)\n");
        return 0;
    }
    const char *paths[2] = {o->tls_cert, o->tls_key}, *names[2] = {"--tls-cert", "--tls-key"};
    char **out[2] = {cert, key};
    for (int i = 0; i < 2; i++) {
        size_t len;
        const int read = app_read_file(paths[i], out[i], &len);
        if (!read || !len || strlen(*out[i]) != len) {
            fprintf(stderr, SERVER_PROGRAM ": %s %s: %s\n", names[i], paths[i],
                    read ? "not a PEM file (empty, or a NUL byte)" : strerror(errno));
            return 0;
        }
    }
    return 1;
}

/* The key's bytes leave no copy in freed memory. */
static void tls_free(char *cert, char *key)
{
    if (key)
        explicit_bzero(key, strlen(key));
    free(key);
    free(cert);
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
    char *cert, *key;
    if (!tls_read(&s->o, &cert, &key)) {
        tls_free(cert, key);
        freeaddrinfo(ai);
        return NULL;
    }
    struct MHD_OptionItem tls[] = {{MHD_OPTION_HTTPS_MEM_CERT, 0, cert}, {MHD_OPTION_HTTPS_MEM_KEY, 0, key},
                                   {MHD_OPTION_END, 0, NULL}};
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG |
                     (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0) | (cert ? MHD_USE_TLS : 0);
    atomic_store(&starting, 1);
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, (uint16_t)s->o.port, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s,
        MHD_OPTION_SOCK_ADDR, ai->ai_addr, MHD_OPTION_CONNECTION_LIMIT, (unsigned)s->o.max_connections,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->o.timeout_s, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, s,
        MHD_OPTION_NOTIFY_CONNECTION, srv_deadlines_notify, s->deadlines, MHD_OPTION_ARRAY, cert ? tls : tls + 2,
        MHD_OPTION_END);
    atomic_store(&starting, 0);
    tls_free(cert, key);
    freeaddrinfo(ai);
    if (!d) {
        srv_deadlines_stop(s->deadlines);
        s->deadlines = NULL;
        fprintf(stderr, SERVER_PROGRAM ": cannot listen on %s port %d (in use, or not an address of this machine%s)\n",
                s->o.host, s->o.port, s->o.tls_cert ? "; or the certificate and key are not a matching PEM pair" : "");
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
