/* POST /v1/classify: the body's images (one raw image, or the parts of a
 * multipart/form-data body) through the batcher; gmlp-classify's --json rows.
 * srv_images, the body's images through the batcher, serves /v1/embeddings too. */
#include <stdlib.h>

#include "format.h"
#include "server.h"
#include "server_batcher.h"

srv_reply srv_images(srv_server *s, srv_body *body, int top, int features, srv_row_fn row, const void *ctx,
                     json_t **rows)
{
    *rows = NULL;
    srv_reply e;
    if (body->boundary[0] && !srv_body_split(body, &e))
        return e;
    if (!body->n)
        return srv_error(400, "body",
                         body->boundary[0] ? "the multipart body holds no part (an image per part, with its filename)"
                                         : "the body is empty: send one image, or multipart/form-data parts");
    char **names = calloc(body->n, sizeof *names);
    app_blob *blobs = calloc(body->n, sizeof *blobs);
    if (!names || !blobs) {
        free(names);
        free(blobs);
        return srv_error(500, NULL, "out of host memory");
    }
    for (size_t i = 0; i < body->n; i++) {
        names[i] = body->parts[i].name;
        blobs[i] = (app_blob){.data = body->parts[i].data, .size = body->parts[i].size, .top = top,
                              .features = features};
        body->parts[i].data = NULL; /* the batcher's now */
    }
    const char *why = NULL;
    unsigned status = srv_batcher_classify(s->batcher, names, blobs, body->n, row, ctx, rows, &why);
    free(names);
    free(blobs);
    return status == 200 ? (srv_reply){0} : srv_busy(why);
}

/* gmlp-classify's --json row. */
static json_t *classify_row(const char *name, const app_result *r, size_t slot, const void *ctx)
{
    (void)slot, (void)ctx;
    return app_result_json(name, r);
}

srv_reply srv_classify(srv_server *s, struct MHD_Connection *c, srv_body *body)
{
    if (!s->ready)
        return srv_busy("the models are loading");
    if (!app_pipeline_classes(s->pipeline))
        return srv_error(400, NULL, "%s has no classifier head (a feature extractor): POST /v1/embeddings gives its "
                                    "features", s->model_id);
    int top;
    srv_reply e = srv_top_arg(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "top"), &top);
    if (e.status)
        return e;
    json_t *rows;
    e = srv_images(s, body, top, 0, classify_row, NULL, &rows);
    return e.status ? e : srv_json(200, json_pack("{s:o}", "results", rows));
}
