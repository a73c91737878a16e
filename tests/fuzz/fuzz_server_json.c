/* libFuzzer target: gmlp-server's request fields (apps/server_request.c).
 * The input: a selector byte, then the bytes: 0 a /v1/completions body, 1 a
 * /v1/chat/completions body, 2 a /v1/embeddings JSON body (a model of dim
 * 8), 3 /v1/classify's ?top=, 4 /v1/embeddings' ?encoding_format=.  Seeds:
 * tests/data/fuzz-server/json/. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "server_lm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An error reply is a 400 (500: out of memory) with its response. */
static void refused(srv_reply r)
{
    if (!r.response || (r.status != 400 && r.status != 500))
        abort();
    MHD_destroy_response(r.response);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    const int what = data[0] % 5;
    srv_body body = {0};
    if (!srv_body_part(&body, NULL) || !srv_part_append(&body.parts[0], data + 1, size - 1))
        abort();
    if (what <= 1) {
        srv_gen g = {0};
        int stream = -1;
        srv_reply r = srv_gen_parse(&body, what, 4096, &g, &stream);
        if (r.status)
            refused(r);
        else if (!g.n_prompt || g.n_stop > SRV_MAX_STOPS || (stream != 0 && stream != 1) || g.g.max_tokens > 4096)
            abort();
        srv_gen_free(&g);
    } else if (what == 2) {
        int base64 = -1;
        srv_reply r = srv_embeddings_parse(&body, 8, &base64);
        if (r.status)
            refused(r);
        else if (!body.n || (base64 != 0 && base64 != 1))
            abort();
    } else {
        char *arg = strndup((const char *)data + 1, size - 1);
        int top = 0, base64 = -1;
        if (!arg)
            abort();
        if (what == 3) {
            srv_reply r = srv_top_arg(arg, &top);
            if (r.status)
                refused(r);
            else if (top < 1 || top > 1048576)
                abort();
        } else if (srv_encoding_of(arg, &base64) && base64 != !strcmp(arg, "base64")) {
            abort();
        }
        free(arg);
    }
    srv_body_free(&body);
    return 0;
}
