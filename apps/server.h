/* gmlp-server: the models resident behind HTTP (libmicrohttpd).  What the
 * parts share: the options, the server, and a request's reply.
 *   gmlp-server.c      options, start-up, signals and the graceful stop
 *   server_routes.c    the routes: path, method, body types, handler (the 404's list and metrics names too)
 *   server_http.c      the daemon (TLS), bodies and their limits, the access log
 *   server_head.c      what the headers alone answer: routing, the framing, the API key, the body's type and size
 *   server_deadline.c  a deadline for each request's headers (slow clients)
 *   server_body.c      a request's body: its parts, multipart/form-data split
 *   server_reply.c     JSON replies and errors
 *   server_info.c      GET /v1/models, /health and /metrics
 *   server_classify.c  POST /v1/classify: a raw or multipart body's images (srv_images, shared)
 *   server_embeddings.c POST /v1/embeddings: images' features in OpenAI's shape
 *   server_request.c   the requests' JSON fields and query arguments, read and checked
 *   base64.c           base64, for /v1/embeddings
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
    const char *tls_cert, *tls_key; /* PEM files: HTTPS through libmicrohttpd's GnuTLS; NULL: plain HTTP */
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
    int json;                            /* the body is application/json (a route that takes images too) */
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

/* A route's handler.  body is the request's (no part for a GET); it may take its parts' data. */
typedef srv_reply (*srv_handler)(srv_server *s, struct MHD_Connection *c, srv_body *body);
srv_reply srv_classify(srv_server *s, struct MHD_Connection *c, srv_body *body);
srv_reply srv_embeddings(srv_server *s, struct MHD_Connection *c, srv_body *body);

/* What becomes of one image's result in a reply: its row (NULL: out of memory).  slot: its place in the
 * request; ctx: the request's. */
typedef json_t *(*srv_row_fn)(const char *name, const app_result *r, size_t slot, const void *ctx);
/* The body's images (one raw image, or multipart parts: split here) through the batcher, each asking for top
 * classes (0: none) and/or its features: *rows, row's of each in order, and status 0; or the error's reply
 * (400 for no image, 503 busy).  The body's data is taken. */
srv_reply srv_images(srv_server *s, srv_body *body, int top, int features, srv_row_fn row, const void *ctx,
                     json_t **rows);
srv_reply srv_completions(srv_server *s, struct MHD_Connection *c, srv_body *body);
/* The requests' fields without a connection or a model (server_request.c; the gen's in server_lm.h): each
 * status 0, or the 400 to send.  A JSON object from the body's raw part into *req (what: the empty body's
 * hint). */
srv_reply srv_json_body(const srv_body *body, const char *what, json_t **req);
/* /v1/classify's ?top= (NULL: 5). */
srv_reply srv_top_arg(const char *arg, int *top);
/* /v1/embeddings' encoding_format (NULL: float) into *base64; 0 when it is neither float nor base64. */
int srv_encoding_of(const char *v, int *base64);
/* /v1/embeddings' JSON body: its images become body's parts (named input or input[i]); dim is the model's. */
srv_reply srv_embeddings_parse(srv_body *body, int dim, int *base64);
srv_reply srv_chat(srv_server *s, struct MHD_Connection *c, srv_body *body);
/* GET /v1/models, /health, /metrics (server_info.c). */
srv_reply srv_models(srv_server *s, struct MHD_Connection *c, srv_body *body);
srv_reply srv_health(srv_server *s, struct MHD_Connection *c, srv_body *body);
srv_reply srv_metrics_page(srv_server *s, struct MHD_Connection *c, srv_body *body);

/* The bodies a route takes (bits): images (one raw image, image/ or application/octet-stream, or
 * multipart/form-data parts), a JSON document; none for a GET. */
enum { SRV_TAKES_IMAGES = 1, SRV_TAKES_JSON = 2 };

/* One route (server_routes.c); its metrics are labelled with its path. */
typedef struct srv_route {
    const char *path, *method;
    unsigned takes;  /* SRV_TAKES_* */
    int open;        /* answered without the API key */
    srv_handler handler;
} srv_route;

extern const srv_route srv_routes[];
extern const size_t srv_n_routes;
/* The route of path, or NULL. */
const srv_route *srv_route_of(const char *path);
/* "POST /v1/classify, ...; GET /v1/models, ...": the routes by method, for the 404. */
void srv_routes_list(char *buf, size_t size);
/* What the route's body may be, for the 415: "application/json", .... */
void srv_route_takes(const srv_route *r, char *buf, size_t size);

/* A request's headers as the server sees them after libmicrohttpd: the method, the decoded path, the header
 * lines in order (a value never NULL). */
typedef struct srv_header {
    const char *key, *value;
} srv_header;
typedef struct srv_head {
    const char *method, *url;
    srv_header *headers;
    size_t n;
} srv_head;
/* What the headers alone answer (server_head.c): an ambiguous framing (the connection then closed), a wrong
 * path, method, API key, type or size; *route is the path's (NULL: none).  Status 0: read the body, into
 * body's raw part (made here) with its multipart boundary or json flag set. */
srv_reply srv_head_check(const srv_options *o, const srv_head *h, const srv_route **route, srv_body *body);

/* The daemon (server_http.c): started on o->host:o->port (0: a free one, *port says which), over TLS with
 * o->tls_cert and o->tls_key; NULL with a message on stderr. */
struct MHD_Daemon *srv_http_start(srv_server *s, unsigned *port);
void srv_http_stop(srv_server *s, struct MHD_Daemon *d);
/* Requests being answered (not idle connections). */
int srv_http_active(void);

/* server_body.c */
void srv_body_free(srv_body *b);
/* A new last part (name NULL: a raw body's "-"), and bytes appended to a part; 0 when out of memory. */
int srv_body_part(srv_body *b, const char *name);
int srv_part_append(srv_part *p, const void *data, size_t n);
/* The boundary of a multipart/form-data Content-Type into b->boundary; 0 without a valid one. */
int srv_multipart_boundary(const char *type, srv_body *b);
/* A multipart body's raw bytes split into its parts, in place; 0 with *e filled. */
int srv_body_split(srv_body *body, srv_reply *e);

#endif
