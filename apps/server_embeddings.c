/* POST /v1/embeddings: each image's pooled features (gmlp-classify
 * --features'), in OpenAI's response shape:
 *   {"object": "list", "data": [{"object": "embedding", "embedding": [...], "index": i}, ...],
 *    "model": NAME, "usage": {"prompt_tokens": IMAGES, "total_tokens": IMAGES}}
 * The images come as a raw body, multipart parts, or OpenAI's JSON with
 * "input" a base64 image (a data: URL too) or an array of them; with
 * "encoding_format": "base64" each embedding is the base64 of its
 * little-endian float32s, as OpenAI sends it.  They are batched with the
 * classify requests' images, on the same devices. */
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "common.h"
#include "format.h"
#include "server.h"

/* An image's entry in "data", or {"error": WHY, "file": NAME} for the reply to refuse. */
static json_t *embedding_row(const char *name, const app_result *r, size_t slot, const void *ctx)
{
    const int base64 = *(const int *)ctx;
    if (r->error)
        return json_pack("{s:o, s:o}", "error", app_json_bytes(r->error, strlen(r->error)), "file",
                         app_json_bytes(name, strlen(name)));
    json_t *e = NULL;
    if (base64) {
        app_buf b = {0};
        app_buf_add_f32le(&b, r->features, (size_t)r->dim);
        char *text = b.oom ? NULL : app_base64_encode(b.s ? b.s : "", b.len);
        e = text ? json_string(text) : NULL;
        free(text);
        app_buf_free(&b);
    } else {
        e = app_features_json(r);
    }
    return e ? json_pack("{s:s, s:o, s:I}", "object", "embedding", "embedding", e, "index", (json_int_t)slot) : NULL;
}

srv_reply srv_embeddings(srv_server *s, struct MHD_Connection *c, srv_body *body)
{
    if (!s->ready)
        return srv_busy("the models are loading");
    int base64 = 0;
    srv_reply e = {0};
    if (body->json) {
        e = srv_embeddings_parse(body, app_pipeline_dim(s->pipeline), &base64);
    } else if (!srv_encoding_of(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "encoding_format"), &base64)) {
        e = srv_error(400, "encoding_format", "encoding_format must be float or base64");
    }
    json_t *rows = NULL;
    if (!e.status)
        e = srv_images(s, body, 0, 1, embedding_row, &base64, &rows);
    if (e.status)
        return e;
    /* an image that is none refuses the request, as any bad input: the first one named */
    size_t n = json_array_size(rows);
    for (size_t i = 0; i < n; i++) {
        json_t *row = json_array_get(rows, i);
        const char *why = json_string_value(json_object_get(row, "error"));
        if (!why)
            continue;
        e = !strcmp(why, "out of host memory")
                ? srv_error(500, NULL, "out of host memory")
                : srv_error(400, "input", "%s: %s", json_string_value(json_object_get(row, "file")), why);
        json_decref(rows);
        return e;
    }
    return srv_json(200, json_pack("{s:s, s:o, s:s, s:{s:I, s:I}}", "object", "list", "data", rows, "model",
                                   s->model_id, "usage", "prompt_tokens", (json_int_t)n, "total_tokens",
                                   (json_int_t)n));
}
