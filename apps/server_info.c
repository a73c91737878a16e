/* The GET endpoints: what is loaded, whether it is ready, the metrics. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server.h"
#include "server_batcher.h"
#include "server_lm.h"
#include "server_metrics.h"

static json_t *model_entry(const char *id, const char *kind)
{
    return json_pack("{s:s, s:s, s:s, s:s}", "id", id, "object", "model", "owned_by", "gmlp-cl", "kind", kind);
}

srv_reply srv_models(srv_server *s, struct MHD_Connection *c, srv_body *body)
{
    (void)c, (void)body;
    json_t *data = json_array();
    json_array_append_new(data, model_entry(s->model_id, !s->ready || app_pipeline_classes(s->pipeline)
                                                             ? "image-classifier"
                                                             : "feature-extractor"));
    if (s->lm_id)
        json_array_append_new(data, model_entry(s->lm_id, "language-model"));
    return srv_json(200, json_pack("{s:s, s:o}", "object", "list", "data", data));
}

srv_reply srv_health(srv_server *s, struct MHD_Connection *c, srv_body *body)
{
    (void)c, (void)body;
    const char *status = !s->ready                                         ? "loading"
                         : s->pipeline && app_pipeline_failed(s->pipeline) ? "no device is left"
                                                                           : NULL;
    srv_reply r = srv_json(status ? 503 : 200, json_pack("{s:s}", "status", status ? status : "ok"));
    if (status && r.response)
        MHD_add_response_header(r.response, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    return r;
}

srv_reply srv_metrics_page(srv_server *s, struct MHD_Connection *c, srv_body *body)
{
    (void)c, (void)body;
    const int ready = s->ready;
    char *text = srv_metrics_text(s->metrics, ready ? srv_batcher_depth(s->batcher) : 0,
                                  ready ? app_pipeline_model_seconds(s->pipeline) : 0,
                                  ready && s->lm ? srv_lm_waiting(s->lm) : 0);
    srv_reply r = {200, text ? MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE) : NULL};
    if (r.response)
        MHD_add_response_header(r.response, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; version=0.0.4");
    else
        free(text);
    return r;
}
