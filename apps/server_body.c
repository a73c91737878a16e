/* A request's body: its parts (a raw body is one), and a multipart/form-data
 * body (RFC 2046 5.1, RFC 7578) split into them. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server.h"

void srv_body_free(srv_body *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->parts[i].name);
        free(b->parts[i].data);
    }
    free(b->parts);
    *b = (srv_body){0};
}

int srv_body_part(srv_body *b, const char *name)
{
    srv_part *grown = realloc(b->parts, (b->n + 1) * sizeof *grown);
    if (!grown)
        return 0;
    b->parts = grown;
    b->parts[b->n] = (srv_part){.name = strdup(name ? name : "-")};
    return b->parts[b->n++].name != NULL;
}

int srv_part_append(srv_part *p, const void *data, size_t n)
{
    if (!n)
        return 1; /* an empty part: p->data may stay NULL, which memcpy must not see */
    if (p->size + n > p->cap) {
        size_t cap = p->cap ? p->cap : 4096;
        while (cap < p->size + n)
            cap *= 2;
        unsigned char *grown = realloc(p->data, cap);
        if (!grown)
            return 0;
        p->data = grown;
        p->cap = cap;
    }
    memcpy(p->data + p->size, data, n);
    p->size += n;
    return 1;
}

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

int srv_body_split(srv_body *body, srv_reply *e)
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

