/* Forwards recorded once per key on a workspace and replayed (cl/record.h):
 * a steady-state forward sets no kernel argument and, where the device
 * offers command buffers, enqueues one command. */
#include <string.h>

#include "model/model.h"

static gmlp_recorded *find(gmlp_workspace *w, const size_t key[4])
{
    for (int i = 0; i < GMLP_RECORDINGS; i++)
        if (w->recorded[i].used && !memcmp(w->recorded[i].key, key, sizeof w->recorded[i].key))
            return &w->recorded[i];
    return NULL;
}

gmlp_status gmlp_model_replay(gmlp_model *m, const size_t key[4], gmlp_status (*body)(gmlp_model *m, void *arg),
                              void *arg)
{
    gmlp_context *ctx = m->ctx;
    gmlp_workspace *w = &m->ws;
    if (ctx->set.profiling || gmlp_recording_on(ctx)) /* profiles name each kernel's own event */
        return body(m, arg);
    gmlp_recorded *r = find(w, key);
    if (!r) {
        r = &w->recorded[w->next_recorded];
        w->next_recorded = (w->next_recorded + 1) % GMLP_RECORDINGS;
        gmlp_record_free(r->rec);
        memset(r, 0, sizeof *r);
        GMLP_TRY(gmlp_record_begin(ctx));
        gmlp_status st = gmlp_record_end(ctx, body(m, arg), &r->rec);
        if (st != GMLP_OK)
            return st;
        memcpy(r->key, key, sizeof r->key);
        r->used = 1;
        r->refused = r->rec == NULL;
        if (r->refused)
            gmlp_log(&ctx->set.log, GMLP_LOG_DEBUG, "this forward cannot be recorded: plain enqueues (%s)",
                     ctx->err.msg);
    }
    return r->rec ? gmlp_record_replay(ctx, r->rec) : body(m, arg);
}

void gmlp_model_recordings_free(gmlp_model *m)
{
    gmlp_workspace *w = &m->ws;
    for (int i = 0; i < GMLP_RECORDINGS; i++) {
        gmlp_record_free(w->recorded[i].rec);
        memset(&w->recorded[i], 0, sizeof w->recorded[i]);
    }
    w->next_recorded = 0;
}
