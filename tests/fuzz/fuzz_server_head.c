/* libFuzzer target: a request's headers as gmlp-server sees them after
 * libmicrohttpd, through srv_head_check (apps/server_head.c: routing, the
 * framing checks against smuggling, the API key, the body's type and size).
 * The input: a byte of options (bit 0: --api-key k3y; bit 1: --max-body-mb
 * 1, else 16), then "METHOD URL" and "Key: Value" lines, as libmicrohttpd
 * hands them over (NUL-free strings, the value's leading blanks dropped).
 * Seeds: tests/data/fuzz-server/head/. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    const srv_options o = {.api_key = data[0] & 1 ? "k3y" : NULL, .max_body_mb = data[0] & 2 ? 1 : 16};
    char *text = malloc(size);
    srv_header *headers = malloc(size * sizeof *headers);
    if (!text || !headers)
        abort();
    memcpy(text, data + 1, size - 1);
    text[size - 1] = 0;
    srv_head h = {.method = "", .url = "", .headers = headers};
    char *line = text;
    for (int first = 1; line;) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        line[strcspn(line, "\r")] = 0;
        char *sep = strchr(line, first ? ' ' : ':');
        if (sep) {
            *sep++ = 0;
            sep += strspn(sep, " \t");
            if (first)
                h.method = line, h.url = sep;
            else
                headers[h.n++] = (srv_header){line, sep};
        }
        first = 0;
        line = next;
    }
    const srv_route *route = NULL;
    srv_body body = {0};
    srv_reply r = srv_head_check(&o, &h, &route, &body);
    /* the statuses the table in docs/server.md gives; a body part only when the body is to be read */
    switch (r.status) {
    case 0:
        if (!route || (body.n != 0) != !strcmp(h.method, "POST") || (r.response != NULL))
            abort();
        break;
    case 400: case 401: case 404: case 405: case 413: case 415: case 500: case 501:
        /* a 404 is a path without a route; the framing's 400 and 501 come before the path is looked at */
        if (!r.response || (r.status == 404 && route) || (!route && r.status != 404 && r.status != 400 && r.status != 501))
            abort();
        break;
    default: abort();
    }
    if (r.response)
        MHD_destroy_response(r.response);
    srv_body_free(&body);
    free(headers);
    free(text);
    return 0;
}
