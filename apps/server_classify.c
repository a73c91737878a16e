/* POST /v1/classify: the body's images (one raw image, or the parts of a
 * multipart/form-data body, RFC 2046 5.1 and RFC 7578) through the batcher;
 * gmlp-classify's --json rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common.h"
#include "server.h"
#include "server_batcher.h"

#define MAX_TOP 1048576 /* as gmlp-classify's -k */

/* The parameter key of a header's value in [p, end) ("type; key=value; key="quoted \"pair\""), unquoted into
 * out (NUL-terminated, cut at n - 1 bytes): its length, or -1 when absent. */
static long header_param(const char *p, const char *end, const char *key, char *out, size_t n)
{
    const size_t kn = strlen(key);
    while ((p = memchr(p, ';', (size_t)(end - p)))) {
        for (p++; p < end && (*p == ' ' || *p == '\t'); p++)
            ;
        const int match = (size_t)(end - p) > kn && !strncasecmp(p, key, kn) && p[kn] == '=';
        while (p < end && *p != '=' && *p != ';')
            p++;
        if (p == end || *p == ';')
            continue; /* a parameter without a value */
        const int quoted = ++p < end && *p == '"';
        size_t len = 0;
        for (p += quoted; p < end && (quoted ? *p != '"' : *p != ';' && *p != ' ' && *p != '\t'); p++, len++) {
            p += quoted && *p == '\\' && p + 1 < end;
            if (match && len + 1 < n)
                out[len] = *p;
        }
        if (match) {
            out[len < n ? len : n - 1] = 0;
            return (long)len;
        }
        p += p < end && quoted; /* past the closing quote, whatever it held */
    }
    return -1;
}

int srv_multipart_boundary(const char *type, srv_body *b)
{
    const long n = header_param(type, type + strlen(type), "boundary", b->boundary, sizeof b->boundary);
    return n >= 1 && n <= SRV_BOUNDARY_MAX;
}

/* After a delimiter's boundary: "--" (the last delimiter) or blanks and CRLF. */
static int ends_delimiter(const char *q, const char *end)
{
    if (end - q >= 2 && q[0] == '-' && q[1] == '-')
        return 1;
    while (q < end && (*q == ' ' || *q == '\t'))
        q++;
    return end - q >= 2 && q[0] == '\r' && q[1] == '\n';
}

/* The next delimiter in [p, end) (RFC 2046 5.1.1): CRLF, "--" and the boundary (for the first, also at p
 * without the CRLF), then what ends_delimiter takes.  Where its "--" is, or NULL.  memmem keeps it linear. */
static const char *delimiter(const char *p, const char *end, const char *boundary, int first)
{
    char needle[sizeof "\r\n--" + SRV_BOUNDARY_MAX];
    const size_t n = (size_t)snprintf(needle, sizeof needle, "\r\n--%s", boundary);
    if (first && (size_t)(end - p) >= n - 2 && !memcmp(p, needle + 2, n - 2) && ends_delimiter(p + n - 2, end))
        return p;
    for (const char *at = p; (at = memmem(at, (size_t)(end - at), needle, n)); at++)
        if (ends_delimiter(at + n, end))
            return at + 2;
    return NULL;
}

/* A part's name: the filename of its Content-Disposition in the headers [p, end), else the field's name,
 * else "-"; name has room for end - p + 1 bytes. */
static void part_name(const char *p, const char *end, char *name)
{
    static const char cd[] = "Content-Disposition:";
    const size_t n = (size_t)(end - p) + 1;
    for (const char *line = p, *eol; line < end; line = eol + 2) {
        eol = memmem(line, (size_t)(end - line), "\r\n", 2);
        eol = eol ? eol : end;
        if ((size_t)(eol - line) > sizeof cd - 1 && !strncasecmp(line, cd, sizeof cd - 1) &&
            (header_param(line, eol, "filename", name, n) > 0 || header_param(line, eol, "name", name, n) >= 0))
            return;
    }
    strcpy(name, "-");
}

/* One part: its headers [p, body - 4) (none when body is p + 2), its bytes [body, end). */
static int add_part(srv_body *out, const char *p, const char *body, const char *end)
{
    char *name = malloc((size_t)(body - p) + 2);
    if (!name)
        return 0;
    part_name(p, body > p + 2 ? body - 4 : p, name);
    const int ok = srv_body_part(out, name) && srv_part_append(&out->parts[out->n - 1], body, (size_t)(end - body));
    free(name);
    return ok;
}

/* The raw body's parts into out: 1, 0 when malformed, -1 when out of memory.  The preamble before the
 * first delimiter and the epilogue after the last are ignored, as RFC 2046 says. */
static int split(const srv_part *raw, const char *boundary, srv_body *out)
{
    const char *p = (const char *)raw->data, *end = p + raw->size;
    for (const char *at = delimiter(p, end, boundary, 1); at; ) {
        p = at + 2 + strlen(boundary);
        if (end - p >= 2 && p[0] == '-' && p[1] == '-')
            return 1;
        p = (const char *)memmem(p, (size_t)(end - p), "\r\n", 2) + 2; /* the delimiter's line ends there */
        const char *blank = memmem(p - 2, (size_t)(end - p + 2), "\r\n\r\n", 4); /* p - 2: no headers */
        if (!blank || !(at = delimiter(blank + 4, end, boundary, 0)))
            return 0;
        if (!add_part(out, p, blank + 4, at - 2))
            return -1;
    }
    return 0;
}

/* A multipart body's raw bytes split into its parts, in place; 0 with *e filled. */
static int split_parts(srv_body *body, srv_reply *e)
{
    srv_body parts = {0};
    const int ok = body->n && body->parts[0].size ? split(&body->parts[0], body->boundary, &parts) : 0;
    if (ok <= 0) {
        srv_body_free(&parts);
        *e = ok ? srv_error(500, NULL, "out of host memory")
                : srv_error(400, "body", "the multipart/form-data body is malformed (boundary %s)", body->boundary);
        return 0;
    }
    memcpy(parts.boundary, body->boundary, sizeof parts.boundary);
    srv_body_free(body);
    *body = parts;
    return 1;
}

srv_reply srv_classify(srv_server *s, struct MHD_Connection *c, srv_body *body)
{
    if (!s->ready)
        return srv_busy("the models are loading");
    const char *arg = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "top");
    long long top = 5;
    if (arg && !app_parse_int(arg, 1, MAX_TOP, &top))
        return srv_error(400, "top", "top must be an integer from 1 to %d, not '%s'", MAX_TOP, arg);
    srv_reply e;
    if (body->boundary[0] && !split_parts(body, &e))
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
        blobs[i] = (app_blob){.data = body->parts[i].data, .size = body->parts[i].size, .top = (int)top};
        body->parts[i].data = NULL; /* the batcher's now */
    }
    json_t *rows;
    const char *why = NULL;
    unsigned status = srv_batcher_classify(s->batcher, names, blobs, body->n, &rows, &why);
    free(names);
    free(blobs);
    if (status != 200)
        return srv_busy(why);
    return srv_json(200, json_pack("{s:o}", "results", rows));
}
