/* POST /v1/completions and /v1/chat/completions: OpenAI's request fields
 * read and checked, the job queued, the reply as one JSON document or as
 * server-sent events (data: {chunk} ... data: [DONE]).  A chat's messages
 * become the prompt "ROLE: CONTENT\n" per message, then "assistant: ". */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "server.h"
#include "server_lm.h"
#include "strbuf.h"

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
    srv_gen g = {0};
    int streamed = 0;
    srv_reply bad = srv_gen_parse(body, chat, s->o.max_tokens, &g, &streamed);
    if (bad.status) {
        srv_gen_free(&g);
        return bad;
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
