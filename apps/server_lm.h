/* The language model behind /v1/completions: one model, --parallel workers
 * generating at once (the library interleaves them token by token), a bounded
 * queue of waiting completions.  A job's text is read as it grows, in pieces
 * that never end inside a UTF-8 sequence or a possible stop sequence. */
#ifndef APP_SERVER_LM_H
#define APP_SERVER_LM_H

#include <gmlp.h>
#include <stddef.h>

#include "server.h"

#define SRV_MAX_STOPS 4 /* stop sequences per request, as OpenAI's */

/* A completion's request: the prompt's bytes and the sampling options. */
typedef struct srv_gen {
    unsigned char *prompt; /* owned */
    size_t n_prompt;
    gmlp_generate_options g;   /* max_tokens, temperature, top_k, top_p, seed */
    char *stop[SRV_MAX_STOPS]; /* owned; the text ends before the first that appears */
    size_t n_stop;
} srv_gen;

typedef struct srv_job srv_job;

/* Loads path on device (NULL: the library's default) with the image
 * model's weights and precision; NULL with a message on stderr. */
srv_lm *srv_lm_start(const char *path, const char *device, const app_pipeline_config *like, int parallel,
                     size_t queue, srv_metrics *m);
/* Queues gen (taken in every case); NULL with *why when the queue is full or the server stops. */
srv_job *srv_lm_submit(srv_lm *lm, srv_gen *gen, const char **why);
/* Waits for text (at most wait_s seconds; < 0: until there is some): up to
 * cap new bytes into buf, their count (0 when the wait ran out); *finished
 * once the job ended and everything was read. */
size_t srv_job_read(srv_job *j, char *buf, size_t cap, double wait_s, int *finished);
/* Once finished: "stop" or "length", or NULL with *error (the job failed). */
const char *srv_job_finish(srv_job *j, const char **error, size_t *prompt_tokens, size_t *tokens);
/* The client left: generation stops at its next token. */
void srv_job_cancel(srv_job *j);
/* The caller's reference, given back. */
void srv_job_release(srv_job *j);
/* Completions waiting for a worker. */
size_t srv_lm_waiting(srv_lm *lm);
/* The model's window (seq_len). */
int srv_lm_seq_len(const srv_lm *lm);
/* Cancels what runs, answers what waits, ends the workers; then free. */
void srv_lm_stop(srv_lm *lm);
void srv_lm_free(srv_lm *lm);

void srv_gen_free(srv_gen *gen);
/* A completion's (chat: a chat completion's) JSON body into g and *stream (server_request.c): status 0, or the
 * 400 to send (then free g). */
srv_reply srv_gen_parse(const srv_body *body, int chat, int max_tokens, srv_gen *g, int *stream);

#endif
