/* gmlp-server: the models resident behind HTTP (libmicrohttpd).  What the
 * parts share: the options, the server, and a request's reply.
 *   gmlp-server.c      options, start-up, signals and the graceful stop
 *   server_http.c      the daemon: routing, the framing, bodies and their limits, the API key, the access log
 *   server_deadline.c  a deadline for each request's headers (slow clients)
 *   server_reply.c     JSON replies and errors
 *   server_info.c      GET /v1/models, /health and /metrics
 *   server_classify.c  POST /v1/classify: a raw or multipart body into images
 *   server_batcher.c   dynamic batching over the classifier's pipeline (scheduler.h)
 *   server_lm.c        the language model's workers and generation
 *   server_text.c      where a streamed text may be cut (UTF-8, stop sequences)
 *   server_complete.c  POST /v1/completions and /v1/chat/completions, SSE streaming
 *   server_metrics.c   the counters and histograms behind GET /metrics */
#ifndef APP_SERVER_H
#define APP_SERVER_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stddef.h>

#include "scheduler.h"

#define SERVER_PROGRAM "gmlp-server"

typedef struct srv_options {
    const char *model, *lm, *host, *api_key, *device;
    int port, batch, max_delay_ms, threads, max_body_mb, timeout_s, grace_s, parallel, queue, max_connections;
    int max_tokens, fp16, quiet, verbose;
    gmlp_precision precision; /* GMLP_PRECISION_AUTO: the library's default */
    char **devices; /* --device split */
    int n_devices;
    int fail_device, fail_batch; /* GMLP_TEST_FAIL, as gmlp-classify's */
} srv_options;

typedef struct srv_batcher srv_batcher;
typedef struct srv_lm srv_lm;
typedef struct srv_metrics srv_metrics;
typedef struct srv_deadlines srv_deadlines;

typedef struct srv_server {
    srv_options o;
    app_pipeline *pipeline; /* NULL until loaded */
    srv_batcher *batcher;
    srv_lm *lm; /* NULL without --lm */
    srv_metrics *metrics;
    srv_deadlines *deadlines;     /* server_http.c's */
    atomic_int ready;             /* the models are loaded: /health says 200 */
    const char *model_id, *lm_id; /* the files' names, as /v1/models lists them */
} srv_server;

/* The endpoints, for routing and metrics. */
typedef enum srv_endpoint {
    SRV_CLASSIFY,
    SRV_COMPLETIONS,
    SRV_CHAT,
    SRV_MODELS,
    SRV_HEALTH,
    SRV_METRICS,
    SRV_OTHER,
    SRV_N_ENDPOINTS
} srv_endpoint;

extern const char *const srv_endpoint_names[SRV_N_ENDPOINTS];

/* A request's body once read: raw bytes, or (srv_classify) the multipart parts. */
typedef struct srv_part {
    char *name; /* the part's filename, or "-" for a raw body */
    unsigned char *data;
    size_t size, cap;
} srv_part;

#define SRV_BOUNDARY_MAX 70 /* a multipart boundary's characters (RFC 2046: 1 to 70) */

typedef struct srv_body {
    srv_part *parts;
    size_t n;
    char boundary[SRV_BOUNDARY_MAX + 1]; /* multipart/form-data's; "" for a raw body */
} srv_body;

/* What a handler answers: a status and a response (NULL: out of memory). */
typedef struct srv_reply {
    unsigned status;
    struct MHD_Response *response;
} srv_reply;

/* JSON replies (server_reply.c).  An error is OpenAI's shape:
 * {"error": {"message", "type", "param", "code"}}; param names the field. */
srv_reply srv_json(unsigned status, json_t *doc); /* takes doc */
srv_reply srv_error(unsigned status, const char *param, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* 503 with Retry-After. */
srv_reply srv_busy(const char *why);

/* The handlers.  body is the request's, the handler may take its parts' data. */
srv_reply srv_classify(srv_server *s, struct MHD_Connection *c, srv_body *body);
srv_reply srv_complete(srv_server *s, srv_body *body, int chat);
/* GET /v1/models, /health, /metrics (server_info.c). */
srv_reply srv_models(srv_server *s);
srv_reply srv_health(srv_server *s);
srv_reply srv_metrics_page(srv_server *s);

/* The daemon (server_http.c): started on o->host:o->port (0: a free one, *port says which). */
struct MHD_Daemon *srv_http_start(srv_server *s, unsigned *port);
void srv_http_stop(srv_server *s, struct MHD_Daemon *d);
/* Requests being answered (not idle connections). */
int srv_http_active(void);

void srv_body_free(srv_body *b);
/* A new last part (name NULL: a raw body's "-"), and bytes appended to a part; 0 when out of memory. */
int srv_body_part(srv_body *b, const char *name);
int srv_part_append(srv_part *p, const void *data, size_t n);
/* The boundary of a multipart/form-data Content-Type into b->boundary; 0 without a valid one (server_classify.c). */
int srv_multipart_boundary(const char *type, srv_body *b);

#endif
