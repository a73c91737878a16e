#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "server.h"

srv_reply srv_json(unsigned status, json_t *doc)
{
    char *text = doc ? json_dumps(doc, JSON_REAL_PRECISION(9) | JSON_COMPACT) : NULL;
    json_decref(doc);
    srv_reply r = {status, NULL};
    if (!text)
        return r;
    const size_t n = strlen(text);
    text[n] = '\n'; /* the terminating NUL becomes the document's last line break */
    r.response = MHD_create_response_from_buffer(n + 1, text, MHD_RESPMEM_MUST_FREE);
    if (!r.response)
        free(text);
    else
        MHD_add_response_header(r.response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    return r;
}

/* OpenAI's error types by status. */
static const char *error_type(unsigned status)
{
    switch (status) {
    case 401: return "authentication_error";
    case 404: return "not_found_error";
    case 503: return "server_busy";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
    }
}

srv_reply srv_error(unsigned status, const char *param, const char *fmt, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    json_t *e = json_pack("{s:o, s:s, s:o, s:i}", "message", app_json_bytes(message, strlen(message)), "type",
                          error_type(status), "param", param ? json_string(param) : json_null(), "code", (int)status);
    return srv_json(status, e ? json_pack("{s:o}", "error", e) : NULL);
}

srv_reply srv_busy(const char *why)
{
    srv_reply r = srv_error(503, NULL, "%s; try again later", why);
    if (r.response)
        MHD_add_response_header(r.response, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    return r;
}
