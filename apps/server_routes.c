/* gmlp-server's routes, one row each: a new endpoint is a row here and its
 * handler.  Routing, the 404's list of endpoints, the 405's Allow, the 415's
 * types and the metrics' endpoint labels are all made from this table. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "server.h"

const srv_route srv_routes[] = {
    {"/v1/classify", "POST", SRV_TAKES_IMAGES, 0, srv_classify},
    {"/v1/embeddings", "POST", SRV_TAKES_IMAGES | SRV_TAKES_JSON, 0, srv_embeddings},
    {"/v1/completions", "POST", SRV_TAKES_JSON, 0, srv_completions},
    {"/v1/chat/completions", "POST", SRV_TAKES_JSON, 0, srv_chat},
    {"/v1/models", "GET", 0, 0, srv_models},
    {"/health", "GET", 0, 1, srv_health},
    {"/metrics", "GET", 0, 0, srv_metrics_page},
};
const size_t srv_n_routes = sizeof srv_routes / sizeof *srv_routes;

/* The body types in the 415's words. */
static const struct {
    unsigned bit;
    const char *words;
} takes_words[] = {
    {SRV_TAKES_IMAGES, "an image (image/*, application/octet-stream) or multipart/form-data"},
    {SRV_TAKES_JSON, "application/json"},
};

const srv_route *srv_route_of(const char *path)
{
    for (size_t i = 0; i < srv_n_routes; i++)
        if (!strcmp(path, srv_routes[i].path))
            return &srv_routes[i];
    return NULL;
}

/* Appends to buf[size] at *n, cut short where it is full. */
static void add(char *buf, size_t size, size_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int w = vsnprintf(buf + *n, size - *n, fmt, ap);
    va_end(ap);
    *n += w < 0 ? 0 : (size_t)w < size - *n ? (size_t)w : size - *n - 1;
}

/* Whether route i is the first of its method. */
static int first_of_method(size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (!strcmp(srv_routes[j].method, srv_routes[i].method))
            return 0;
    return 1;
}

void srv_routes_list(char *buf, size_t size)
{
    size_t n = 0;
    *buf = 0;
    for (size_t i = 0; i < srv_n_routes; i++) {
        if (!first_of_method(i))
            continue;
        add(buf, size, &n, "%s%s ", n ? "; " : "", srv_routes[i].method);
        for (size_t j = i, k = 0; j < srv_n_routes; j++)
            if (!strcmp(srv_routes[j].method, srv_routes[i].method))
                add(buf, size, &n, "%s%s", k++ ? ", " : "", srv_routes[j].path);
    }
}

void srv_route_takes(const srv_route *r, char *buf, size_t size)
{
    size_t n = 0;
    *buf = 0;
    for (size_t i = 0; i < sizeof takes_words / sizeof *takes_words; i++)
        if (r->takes & takes_words[i].bit)
            add(buf, size, &n, "%s%s", n ? " or " : "", takes_words[i].words);
}
