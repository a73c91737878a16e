/* A growing string: the rows of a batch, messages, MPI payloads. */
#ifndef APP_STRBUF_H
#define APP_STRBUF_H

#include <stddef.h>

/* oom is set (and later adds ignored) when memory runs out. */
typedef struct app_buf {
    char *s;
    size_t len, cap;
    int oom;
} app_buf;
void app_buf_add(app_buf *b, const char *s, size_t n);
void app_buf_printf(app_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void app_buf_free(app_buf *b);

#endif
