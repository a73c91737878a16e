/* What a request's headers alone can answer, as libmicrohttpd hands them over
 * (the method, the decoded path, the header lines): an ambiguous framing, a
 * wrong path, method, API key, type or size.  No connection, no I/O: the
 * fuzz target fuzz_server_head calls it as server_http.c does. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server.h"

/* The first value of header key (any case), or NULL: MHD_lookup_connection_value's rule. */
static const char *value_of(const srv_head *h, const char *key)
{
    for (size_t i = 0; i < h->n; i++)
        if (!strcasecmp(h->headers[i].key, key))
            return h->headers[i].value;
    return NULL;
}

/* The media type without its parameters matches type. */
static int media_is(const char *header, const char *type)
{
    const size_t n = strlen(type);
    return header && !strncasecmp(header, type, n) && (!header[n] || header[n] == ';' || header[n] == ' ');
}

/* An API key given as "Authorization: Bearer KEY" (OpenAI's clients) or "X-Api-Key: KEY". */
static int key_ok(const char *key, const srv_head *h)
{
    const char *auth = value_of(h, MHD_HTTP_HEADER_AUTHORIZATION);
    const char *given = auth && !strncasecmp(auth, "Bearer ", 7) ? auth + 7 : value_of(h, "X-Api-Key");
    if (!given || strlen(given) != strlen(key))
        return 0;
    unsigned char diff = 0; /* every byte compared: the time says nothing of where they differ */
    for (size_t i = 0; given[i]; i++)
        diff |= (unsigned char)(given[i] ^ key[i]);
    return !diff;
}

/* The headers that say where the body ends: every Content-Length, the Transfer-Encodings. */
typedef struct framing {
    const char *length; /* the first Content-Length */
    int lengths_differ, codings;
    const char *coding; /* the first Transfer-Encoding */
} framing;

static void on_header(framing *f, const char *key, const char *value)
{
    if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)) {
        f->lengths_differ |= f->length && strcmp(f->length, value);
        f->length = f->length ? f->length : value;
    } else if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
        f->coding = f->codings++ ? f->coding : value;
    }
}

/* A body whose end is ambiguous: MHD would read one framing, a proxy in front perhaps another, and the
 * bytes past the body's end would be read as a request of their own (smuggling; RFC 9112 6.1, 6.3).
 * Refused, and the connection closed: nothing after it can be trusted.  status 0: none. */
static srv_reply check_framing(const srv_head *h)
{
    framing f = {0};
    for (size_t i = 0; i < h->n; i++)
        on_header(&f, h->headers[i].key, h->headers[i].value);
    srv_reply e = {0};
    if (f.lengths_differ)
        e = srv_error(400, "Content-Length", "Content-Length headers that differ");
    else if (f.coding && f.length)
        e = srv_error(400, "Transfer-Encoding", "both Transfer-Encoding and Content-Length");
    else if (f.coding && (f.codings > 1 || strcasecmp(f.coding, "chunked")))
        e = srv_error(501, "Transfer-Encoding", "Transfer-Encoding %s (only chunked is supported)", f.coding);
    if (e.response)
        MHD_add_response_header(e.response, MHD_HTTP_HEADER_CONNECTION, "close");
    return e;
}

/* The route's method, or HEAD where it is GET (RFC 9110 9.3.2: MHD sends the headers without the body). */
static int method_ok(const srv_route *r, const char *method)
{
    return !strcmp(method, r->method) || (!strcmp(method, "HEAD") && !strcmp(r->method, "GET"));
}

srv_reply srv_head_check(const srv_options *o, const srv_head *h, const srv_route **route, srv_body *body)
{
    const char *url = h->url, *method = h->method;
    const srv_route *r = *route = srv_route_of(url);
    srv_reply framing_error = check_framing(h);
    if (framing_error.status)
        return framing_error;
    if (!r) {
        char routes[512];
        srv_routes_list(routes, sizeof routes);
        return srv_error(404, NULL, "no endpoint %s (%s)", url, routes);
    }
    if (!method_ok(r, method)) {
        const char *allow = strcmp(r->method, "GET") ? r->method : "GET, HEAD";
        srv_reply e = srv_error(405, NULL, "%s takes %s, not %s", url, allow, method);
        if (e.response)
            MHD_add_response_header(e.response, MHD_HTTP_HEADER_ALLOW, allow);
        return e;
    }
    if (o->api_key && !r->open && !key_ok(o->api_key, h)) {
        srv_reply e = srv_error(401, NULL, "a wrong or missing API key (Authorization: Bearer KEY)");
        if (e.response)
            MHD_add_response_header(e.response, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
        return e;
    }
    if (strcmp(method, "POST"))
        return (srv_reply){0};
    const char *length = value_of(h, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const unsigned long long max = (unsigned long long)o->max_body_mb << 20;
    if (length && strtoull(length, NULL, 10) > max)
        return srv_error(413, "body", "the body is over --max-body-mb (%d MiB)", o->max_body_mb);
    const char *type = value_of(h, MHD_HTTP_HEADER_CONTENT_TYPE);
    const int images = r->takes & SRV_TAKES_IMAGES;
    if (images && media_is(type, "multipart/form-data")) {
        if (!srv_multipart_boundary(type, body))
            return srv_error(400, "Content-Type", "a multipart/form-data body needs a boundary of 1 to 70 characters");
    } else if (r->takes & SRV_TAKES_JSON && media_is(type, "application/json")) {
        body->json = 1;
    } else if (!(images && (!type || !strncasecmp(type, "image/", 6) || media_is(type, "application/octet-stream")))) {
        char takes[256];
        srv_route_takes(r, takes, sizeof takes);
        return srv_error(415, "Content-Type", "%s takes %s, not %s", url, takes, type ? type : "a body without a type");
    }
    return srv_body_part(body, NULL) ? (srv_reply){0} : srv_error(500, NULL, "out of host memory");
}
