/* The requests' own fields, read and checked without a connection or a
 * model (the handlers' and the fuzz targets' tests/fuzz/fuzz_server_json.c):
 * a JSON body, /v1/completions' and /v1/chat/completions' fields (OpenAI's
 * names), /v1/embeddings' JSON input and encoding, /v1/classify's top. */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base64.h"
#include "common.h"
#include "server.h"
#include "server_lm.h"

#define DEFAULT_MAX_TOKENS 16 /* as OpenAI's */
#define MAX_TOP_K          (1 << 30)
#define SEED_MAX           (1LL << 53) /* as gmlp-generate's */
#define MAX_TOP            1048576     /* as gmlp-classify's -k */

srv_reply srv_json_body(const srv_body *body, const char *what, json_t **req)
{
    json_error_t jerr;
    *req = body->n ? json_loadb((const char *)body->parts[0].data, body->parts[0].size, 0, &jerr) : NULL;
    if (!*req)
        return body->n
                   ? srv_error(400, "body", "invalid JSON at line %d, column %d: %s", jerr.line, jerr.column, jerr.text)
                   : srv_error(400, "body", "the body is empty: %s", what);
    if (json_is_object(*req))
        return (srv_reply){0};
    json_decref(*req);
    *req = NULL;
    return srv_error(400, "body", "the body must be a JSON object");
}

srv_reply srv_top_arg(const char *arg, int *top)
{
    long long v = 5;
    if (arg && !app_parse_int(arg, 1, MAX_TOP, &v))
        return srv_error(400, "top", "top must be an integer from 1 to %d, not '%s'", MAX_TOP, arg);
    *top = (int)v;
    return (srv_reply){0};
}

/* A field's problem: the reply's param and message. */
typedef struct bad_field {
    const char *param;
    char message[160];
} bad_field;

static int bad(bad_field *e, const char *param, const char *expected)
{
    e->param = param;
    snprintf(e->message, sizeof e->message, "%s must be %s", param, expected);
    return 0;
}

/* A number field: absent or null keeps *v. */
static int number(json_t *req, const char *key, double lo, double hi, int lo_open, double *v, bad_field *e,
                  const char *expected)
{
    json_t *j = json_object_get(req, key);
    if (!j || json_is_null(j))
        return 1;
    double x = json_number_value(j);
    if (!json_is_number(j) || !isfinite(x) || x < lo || (lo_open && x == lo) || x > hi)
        return bad(e, key, expected);
    *v = x;
    return 1;
}

static int integer(json_t *req, const char *key, long long lo, long long hi, long long *v, bad_field *e,
                   const char *expected)
{
    json_t *j = json_object_get(req, key);
    if (!j || json_is_null(j))
        return 1;
    if (!json_is_integer(j) || json_integer_value(j) < lo || json_integer_value(j) > hi)
        return bad(e, key, expected);
    *v = json_integer_value(j);
    return 1;
}

static int append(srv_gen *g, const char *s, size_t n)
{
    unsigned char *p = realloc(g->prompt, g->n_prompt + n + 1);
    if (!p)
        return 0;
    memcpy(p + g->n_prompt, s, n);
    g->prompt = p;
    g->n_prompt += n;
    return 1;
}

static int completion_prompt(json_t *req, srv_gen *g, bad_field *e)
{
    json_t *p = json_object_get(req, "prompt");
    if (json_is_array(p) && json_array_size(p) == 1)
        p = json_array_get(p, 0);
    if (!json_is_string(p) || !json_string_length(p))
        return bad(e, "prompt", "a non-empty string (or an array of one)");
    return append(g, json_string_value(p), json_string_length(p)) || bad(e, "prompt", "smaller (out of memory)");
}

static int chat_prompt(json_t *req, srv_gen *g, bad_field *e)
{
    json_t *msgs = json_object_get(req, "messages"), *m;
    size_t i;
    if (!json_is_array(msgs) || !json_array_size(msgs))
        return bad(e, "messages", "a non-empty array of {\"role\", \"content\"} objects");
    json_array_foreach (msgs, i, m) {
        json_t *role = json_object_get(m, "role"), *content = json_object_get(m, "content");
        if (!json_is_string(role) || !json_is_string(content))
            return bad(e, "messages", "an array of objects whose role and content are strings");
        if (!append(g, json_string_value(role), json_string_length(role)) || !append(g, ": ", 2) ||
            !append(g, json_string_value(content), json_string_length(content)) || !append(g, "\n", 1))
            return bad(e, "messages", "smaller (out of memory)");
    }
    return append(g, "assistant: ", 11) || bad(e, "messages", "smaller (out of memory)");
}

static int stops(json_t *req, srv_gen *g, bad_field *e)
{
    json_t *s = json_object_get(req, "stop"), *one;
    const char *expected = "a non-empty string or an array of up to 4 of them";
    if (!s || json_is_null(s))
        return 1;
    if (json_is_string(s))
        return json_string_length(s) && (g->stop[g->n_stop++] = strdup(json_string_value(s)))
                   ? 1
                   : bad(e, "stop", expected);
    if (!json_is_array(s) || json_array_size(s) > SRV_MAX_STOPS)
        return bad(e, "stop", expected);
    size_t i;
    json_array_foreach (s, i, one) {
        if (!json_is_string(one) || !json_string_length(one) ||
            !(g->stop[g->n_stop++] = strdup(json_string_value(one))))
            return bad(e, "stop", expected);
    }
    return 1;
}

static uint64_t random_seed(void)
{
    static atomic_uint_fast64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec ^ (atomic_fetch_add(&counter, 1) << 40);
    return x % ((uint64_t)SEED_MAX + 1);
}

/* The request's fields into g; 0 with e filled. */
static int parse(json_t *req, int chat, int max_tokens, srv_gen *g, int *stream, bad_field *e)
{
    double temperature = 0.8, top_p = 0.95; /* gmlp-generate's defaults */
    long long n_tokens = DEFAULT_MAX_TOKENS, top_k = 40, seed = -1, n = 1;
    char expected[64];
    snprintf(expected, sizeof expected, "an integer from 0 to %d", max_tokens);
    if (!(chat ? chat_prompt(req, g, e) : completion_prompt(req, g, e)) ||
        !integer(req, "max_tokens", 0, max_tokens, &n_tokens, e, expected) ||
        !number(req, "temperature", 0, GMLP_TEMPERATURE_MAX, 0, &temperature, e, "a number from 0 (greedy) to 1e6") ||
        !number(req, "top_p", 0, 1, 1, &top_p, e, "a number in (0, 1]") ||
        !integer(req, "top_k", 0, MAX_TOP_K, &top_k, e, "an integer from 0 (all tokens) to 1073741824") ||
        !integer(req, "seed", 0, SEED_MAX, &seed, e, "an integer from 0 to 2^53") ||
        !integer(req, "n", 1, 1, &n, e, "1 (one choice per request)") || !stops(req, g, e))
        return 0;
    json_t *s = json_object_get(req, "stream");
    if (s && !json_is_null(s) && !json_is_boolean(s))
        return bad(e, "stream", "true or false");
    *stream = json_is_true(s);
    gmlp_generate_options_default(&g->g);
    g->g.max_tokens = (size_t)n_tokens;
    g->g.temperature = (float)temperature;
    g->g.top_p = (float)top_p;
    g->g.top_k = (int)top_k;
    g->g.seed = seed < 0 ? random_seed() : (uint64_t)seed;
    return 1;
}

void srv_gen_free(srv_gen *gen)
{
    free(gen->prompt);
    for (size_t i = 0; i < gen->n_stop; i++)
        free(gen->stop[i]);
    *gen = (srv_gen){0};
}

srv_reply srv_gen_parse(const srv_body *body, int chat, int max_tokens, srv_gen *g, int *stream)
{
    json_t *req;
    srv_reply bad = srv_json_body(body, "send a JSON object", &req);
    if (bad.status)
        return bad;
    bad_field e = {0};
    const int ok = parse(req, chat, max_tokens, g, stream, &e);
    json_decref(req);
    return ok ? (srv_reply){0} : srv_error(400, e.param, "%s", e.message);
}

/* encoding_format's value into *base64; 0 when it is neither float nor base64. */
int srv_encoding_of(const char *v, int *base64)
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

srv_reply srv_embeddings_parse(srv_body *body, int dim, int *base64)
{
    json_t *req;
    srv_reply e = srv_json_body(body, "send a JSON object with input", &req);
    if (e.status)
        return e;
    json_t *input = json_object_get(req, "input"), *enc = json_object_get(req, "encoding_format"),
           *dims = json_object_get(req, "dimensions"), *model = json_object_get(req, "model");
    const size_t n = json_is_array(input) ? json_array_size(input) : 1;
    if (!input)
        e = srv_error(400, "input", "input is required: an image in base64, or an array of them");
    else if (!json_is_string(input) && !json_is_array(input))
        e = srv_error(400, "input", "input must be a string (an image in base64) or an array of them");
    else if (!n)
        e = srv_error(400, "input", "input is an empty array: give at least one image");
    else if ((enc && !json_is_string(enc)) || !srv_encoding_of(json_string_value(enc), base64))
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
