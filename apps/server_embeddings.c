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

/* encoding_format's value into *base64; 0 when it is neither float nor base64. */
static int encoding_of(const char *v, int *base64)
{
    *base64 = v && !strcmp(v, "base64");
    return !v || *base64 || !strcmp(v, "float");
}

/* A data: URL's payload ("data:image/png;base64,..."), or s itself. */
static const char *payload(const char *s, size_t *len)
{
    const char *comma = !strncmp(s, "data:", 5) ? memchr(s, ',', *len) : NULL;
    if (!comma)
        return s;
    *len -= (size_t)(comma + 1 - s);
    return comma + 1;
}

/* The JSON request's images into body's parts (named input or input[i]), its encoding into *base64; status
 * 0, or the error. */
static srv_reply parse_json(srv_server *s, srv_body *body, int *base64)
{
    json_error_t jerr;
    json_t *req = body->n ? json_loadb((const char *)body->parts[0].data, body->parts[0].size, 0, &jerr) : NULL;
    if (!req)
        return body->n ? srv_error(400, "body", "invalid JSON at line %d, column %d: %s", jerr.line, jerr.column,
                                   jerr.text)
                       : srv_error(400, "body", "the body is empty: send a JSON object with input");
    srv_reply e = {0};
    json_t *input = json_object_get(req, "input"), *enc = json_object_get(req, "encoding_format"),
           *dims = json_object_get(req, "dimensions"), *model = json_object_get(req, "model");
    const size_t n = json_is_array(input) ? json_array_size(input) : 1;
    const int dim = app_pipeline_dim(s->pipeline);
    if (!json_is_object(req))
        e = srv_error(400, "body", "the body must be a JSON object");
    else if (!input)
        e = srv_error(400, "input", "input is required: an image in base64, or an array of them");
    else if (!json_is_string(input) && !json_is_array(input))
        e = srv_error(400, "input", "input must be a string (an image in base64) or an array of them");
    else if (!n)
        e = srv_error(400, "input", "input is an empty array: give at least one image");
    else if ((enc && !json_is_string(enc)) || !encoding_of(json_string_value(enc), base64))
        e = srv_error(400, "encoding_format", "encoding_format must be \"float\" or \"base64\"");
    else if (dims && (!json_is_integer(dims) || json_integer_value(dims) != dim))
        e = srv_error(400, "dimensions", "dimensions must be the model's, %d (its features are not cut)", dim);
    else if (model && !json_is_string(model))
        e = srv_error(400, "model", "model must be a string");
    srv_body parts = {0};
    for (size_t i = 0; !e.status && i < n; i++) {
        json_t *item = json_is_array(input) ? json_array_get(input, i) : input;
        char name[32] = "input";
        if (json_is_array(input))
            snprintf(name, sizeof name, "input[%zu]", i);
        size_t len = json_string_length(item);
        const char *text = json_is_string(item) ? payload(json_string_value(item), &len) : NULL;
        unsigned char *data = NULL;
        size_t size = 0;
        const int ok = text ? app_base64_decode(text, len, &data, &size) : 0;
        if (!text)
            e = srv_error(400, "input", "%s must be a string: an image in base64", name);
        else if (!ok)
            e = srv_error(400, "input", "%s is not base64 (RFC 4648, padding optional, no line breaks)", name);
        else if (ok < 0 || !srv_body_part(&parts, name))
            e = srv_error(500, NULL, "out of host memory");
        else
            parts.parts[parts.n - 1] = (srv_part){.name = parts.parts[parts.n - 1].name, .data = data, .size = size,
                                                  .cap = size};
        if (e.status)
            free(data);
    }
    json_decref(req);
    srv_body_free(body);
    *body = parts;
    if (e.status)
        srv_body_free(body);
    return e;
}

srv_reply srv_embeddings(srv_server *s, struct MHD_Connection *c, srv_body *body)
{
    if (!s->ready)
        return srv_busy("the models are loading");
    int base64 = 0;
    srv_reply e = {0};
    if (body->json) {
        e = parse_json(s, body, &base64);
    } else if (!encoding_of(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "encoding_format"), &base64)) {
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
