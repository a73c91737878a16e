/* POST /v1/completions and /v1/chat/completions: OpenAI's request fields
 * read and checked, the job queued, the reply as one JSON document or as
 * server-sent events (data: {chunk} ... data: [DONE]).  A chat's messages
 * become the prompt "ROLE: CONTENT\n" per message, then "assistant: ". */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "server.h"
#include "server_lm.h"
#include "strbuf.h"

#define DEFAULT_MAX_TOKENS 16 /* as OpenAI's */
#define MAX_TOP_K          (1 << 30)
#define SEED_MAX           (1LL << 53) /* as gmlp-generate's */

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

/* The fields every reply and chunk starts with. */
static json_t *envelope(srv_server *s, int chat, int chunk, unsigned long long id)
{
    char name[48];
    snprintf(name, sizeof name, "%s-%llu", chat ? "chatcmpl" : "cmpl", id);
    return json_pack("{s:s, s:s, s:I, s:s}", "id", name, "object",
                     chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion", "created",
                     (json_int_t)time(NULL), "model", s->lm_id);
}

/* One choice: its text (a chat's message or delta) and finish_reason (NULL: null). */
static json_t *choice(int chat, int chunk, json_t *text, const char *reason)
{
    json_t *c = json_pack("{s:i, s:o}", "index", 0, "finish_reason", reason ? json_string(reason) : json_null());
    if (!chat)
        json_object_set_new(c, "text", text ? text : json_string("")), json_object_set_new(c, "logprobs", json_null());
    else if (chunk)
        json_object_set_new(c, "delta",
                            text ? json_pack("{s:s, s:o}", "role", "assistant", "content", text) : json_object());
    else
        json_object_set_new(c, "message", json_pack("{s:s, s:o}", "role", "assistant", "content", text));
    return c;
}

static json_t *usage(size_t prompt, size_t tokens)
{
    return json_pack("{s:I, s:I, s:I}", "prompt_tokens", (json_int_t)prompt, "completion_tokens", (json_int_t)tokens,
                     "total_tokens", (json_int_t)(prompt + tokens));
}

static atomic_ullong next_id;

/* The whole text, then one document. */
static srv_reply reply_once(srv_server *s, srv_job *j, int chat)
{
    app_buf text = {0};
    char piece[4096];
    for (int finished = 0; !finished;) {
        size_t n = srv_job_read(j, piece, sizeof piece, -1, &finished);
        app_buf_add(&text, piece, n);
    }
    const char *error;
    size_t prompt, tokens;
    const char *reason = srv_job_finish(j, &error, &prompt, &tokens);
    srv_job_release(j);
    srv_reply r;
    if (text.oom) {
        r = srv_error(500, NULL, "out of host memory");
    } else if (!reason) {
        r = strcmp(error, "the server is stopping") ? srv_error(500, NULL, "generation failed: %s", error)
                                                    : srv_busy(error);
    } else {
        json_t *doc = envelope(s, chat, 0, ++next_id);
        json_object_set_new(
            doc, "choices",
            json_pack("[o]", choice(chat, 0, app_json_bytes(text.len ? text.s : "", text.len), reason)));
        json_object_set_new(doc, "usage", usage(prompt, tokens));
        r = srv_json(200, doc);
    }
    app_buf_free(&text);
    return r;
}

/* A stream: its job and the events not yet written. */
typedef struct stream {
    srv_server *s;
    srv_job *j;
    int chat, done;
    unsigned long long id;
    app_buf out;
    size_t sent;
} stream;

static void event(stream *st, json_t *doc)
{
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(9)) : NULL;
    if (text)
        app_buf_printf(&st->out, "data: %s\n\n", text);
    else
        st->out.oom = 1;
    free(text);
    json_decref(doc);
}

static void chunk(stream *st, json_t *text, const char *reason, json_t *use)
{
    json_t *doc = envelope(st->s, st->chat, 1, st->id);
    json_object_set_new(doc, "choices", json_pack("[o]", choice(st->chat, 1, text, reason)));
    if (use)
        json_object_set_new(doc, "usage", use);
    event(st, doc);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    stream *st = cls;
    while (st->sent == st->out.len) {
        st->out.len = st->sent = 0;
        if (st->done || st->out.oom)
            return st->out.oom ? MHD_CONTENT_READER_END_WITH_ERROR : MHD_CONTENT_READER_END_OF_STREAM;
        char piece[4096];
        int finished;
        /* libmicrohttpd drops a connection that writes nothing for --timeout-s: a comment keeps it */
        size_t n = srv_job_read(st->j, piece, sizeof piece, st->s->o.timeout_s / 2.0, &finished);
        if (n)
            chunk(st, app_json_bytes(piece, n), NULL, NULL);
        else if (!finished)
            app_buf_printf(&st->out, ": waiting\n\n");
        if (finished) {
            const char *error;
            size_t prompt, tokens;
            const char *reason = srv_job_finish(st->j, &error, &prompt, &tokens);
            if (reason)
                chunk(st, NULL, reason, usage(prompt, tokens));
            else
                event(st, json_pack("{s:{s:s, s:s}}", "error", "message", error, "type", "server_error"));
            app_buf_printf(&st->out, "data: [DONE]\n\n");
            st->done = 1;
        }
    }
    size_t n = st->out.len - st->sent < max ? st->out.len - st->sent : max;
    memcpy(buf, st->out.s + st->sent, n);
    st->sent += n;
    return (ssize_t)n;
}

/* The response is over: written, or the client left (then generation stops). */
static void stream_free(void *cls)
{
    stream *st = cls;
    srv_job_cancel(st->j);
    srv_job_release(st->j);
    app_buf_free(&st->out);
    free(st);
}

static srv_reply reply_stream(srv_server *s, srv_job *j, int chat)
{
    stream *st = calloc(1, sizeof *st);
    struct MHD_Response *r =
        st ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, st, stream_free) : NULL;
    if (!r) {
        srv_job_cancel(j);
        srv_job_release(j);
        free(st);
        return srv_error(500, NULL, "out of host memory");
    }
    *st = (stream){.s = s, .j = j, .chat = chat, .id = ++next_id};
    if (chat) /* OpenAI's first chunk gives the role */
        chunk(st, json_string(""), NULL, NULL);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    return (srv_reply){200, r};
}

static srv_reply complete(srv_server *s, srv_body *body, int chat)
{
    if (!s->ready) /* first: s->lm is set while loading */
        return srv_busy("the models are loading");
    if (!s->lm)
        return srv_error(404, NULL, "no language model: start the server with --lm PATH");
    json_error_t jerr;
    json_t *req = body->n ? json_loadb((const char *)body->parts[0].data, body->parts[0].size, 0, &jerr) : NULL;
    if (!req)
        return body->n
                   ? srv_error(400, "body", "invalid JSON at line %d, column %d: %s", jerr.line, jerr.column, jerr.text)
                   : srv_error(400, "body", "the body is empty: send a JSON object");
    if (!json_is_object(req)) {
        json_decref(req);
        return srv_error(400, "body", "the body must be a JSON object");
    }
    srv_gen g = {0};
    bad_field e = {0};
    int streamed = 0;
    const int ok = parse(req, chat, s->o.max_tokens, &g, &streamed, &e);
    json_decref(req);
    if (!ok) {
        srv_gen_free(&g);
        return srv_error(400, e.param, "%s", e.message);
    }
    const char *why;
    srv_job *j = srv_lm_submit(s->lm, &g, &why);
    if (!j)
        return srv_busy(why);
    return streamed ? reply_stream(s, j, chat) : reply_once(s, j, chat);
}

srv_reply srv_completions(srv_server *s, struct MHD_Connection *c, srv_body *body)
{
    (void)c;
    return complete(s, body, 0);
}

srv_reply srv_chat(srv_server *s, struct MHD_Connection *c, srv_body *body)
{
    (void)c;
    return complete(s, body, 1);
}
