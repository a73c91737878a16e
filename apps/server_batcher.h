/* Dynamic batching: the images of concurrent classify requests gathered into
 * batches of up to `batch` images, each sent at the latest max_delay_s after
 * its first image came, to the pipeline (scheduler.h: one worker per device,
 * a failing device's batch re-queued); the results come back to their
 * requests as rows, each request's made by its own function (classify's, embeddings'). */
#ifndef APP_SERVER_BATCHER_H
#define APP_SERVER_BATCHER_H

#include <jansson.h>

#include "server.h"

/* queue: images waiting at most (in batches not yet classified). */
srv_batcher *srv_batcher_start(app_pipeline *p, srv_metrics *m, int batch, double max_delay_s, size_t queue);
/* Classifies n images named names[i] (takes every blobs[i].data), each with
 * its top classes and/or features (app_blob); *rows: row(...) of each image's
 * result, in order.  200, or 503 (*why says: the queue is full, no device is
 * left, the server is stopping) with *rows NULL. */
unsigned srv_batcher_classify(srv_batcher *b, char *const *names, app_blob *blobs, size_t n, srv_row_fn row,
                              const void *ctx, json_t **rows, const char **why);
/* Images submitted and not yet answered. */
size_t srv_batcher_depth(srv_batcher *b);
/* Answers what waits with 503, refuses what comes and ends the threads (the
 * pipeline stays); free once no request can be inside srv_batcher_classify. */
void srv_batcher_stop(srv_batcher *b);
void srv_batcher_free(srv_batcher *b);

#endif
