#include "strbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void app_buf_add(app_buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *grown = realloc(b->s, cap);
        if (!grown) {
            b->oom = 1;
            return;
        }
        b->s = grown;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void app_buf_printf(app_buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        app_buf_add(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    app_buf_add(b, big, (size_t)n);
    free(big);
}

void app_buf_add_f32le(app_buf *b, const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &v[i], sizeof u);
        const char le[4] = {(char)(u & 255), (char)(u >> 8 & 255), (char)(u >> 16 & 255), (char)(u >> 24)};
        app_buf_add(b, le, 4);
    }
}

void app_buf_free(app_buf *b)
{
    free(b->s);
    *b = (app_buf){0};
}

int app_read_file(const char *path, char **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    app_buf b = {0};
    char chunk[65536];
    size_t n;
    *data = NULL;
    if (!f)
        return 0;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        app_buf_add(&b, chunk, n);
    int ok = !ferror(f) && !b.oom;
    fclose(f);
    *data = b.s ? b.s : calloc(1, 1);
    *len = b.len;
    if (!ok || !*data)
        errno = ENOMEM;
    return ok && *data;
}
