/* The route table (apps/server_routes.c) names every handler; the fuzz targets route requests but run no
 * handler (they need a model and a device), so these stand in for them and are never called. */
#include <stdlib.h>

#include "server.h"

#define STUB(name)                                                                                                     \
    srv_reply name(srv_server *s, struct MHD_Connection *c, srv_body *body)                                            \
    {                                                                                                                  \
        (void)s, (void)c, (void)body;                                                                                  \
        abort();                                                                                                       \
    }
STUB(srv_classify)
STUB(srv_embeddings)
STUB(srv_completions)
STUB(srv_chat)
STUB(srv_models)
STUB(srv_health)
STUB(srv_metrics_page)
