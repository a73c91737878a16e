/* libFuzzer target: gmlp-server's multipart/form-data splitter (RFC 2046
 * 5.1, apps/server_body.c: written because libmicrohttpd 0.9.75's refuses
 * one-character boundaries).  The input: the Content-Type header's value, a
 * line break, then the body's bytes.  Seeds: tests/data/fuzz-server/multipart/. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *eol = memchr(data, '\n', size);
    if (!eol)
        return 0;
    char *type = strndup((const char *)data, (size_t)(eol - data)); /* a header holds no NUL: cut at one */
    srv_body body = {0};
    if (!type)
        abort();
    const size_t n = size - (size_t)(eol + 1 - data);
    if (srv_multipart_boundary(type, &body)) {
        const size_t blen = strlen(body.boundary);
        if (blen < 1 || blen > SRV_BOUNDARY_MAX || !srv_body_part(&body, NULL) ||
            !srv_part_append(&body.parts[0], eol + 1, n))
            abort();
        srv_reply e = {0};
        if (srv_body_split(&body, &e)) {
            size_t total = 0; /* the parts are pieces of the body: never more bytes than it holds */
            for (size_t i = 0; i < body.n; i++)
                total += body.parts[i].size;
            if (e.response || total > n)
                abort();
            for (size_t i = 0; i < body.n; i++)
                if (!body.parts[i].name)
                    abort();
        } else if (!e.response || e.status != 400) {
            abort();
        } else {
            MHD_destroy_response(e.response);
        }
    }
    srv_body_free(&body);
    free(type);
    return 0;
}
