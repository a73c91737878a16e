/* A growing string: the rows of a batch, messages, MPI payloads, binary rows. */
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
/* n floats as little-endian IEEE float32 bytes (npy's '<f4', OpenAI's base64 embeddings). */
void app_buf_add_f32le(app_buf *b, const float *v, size_t n);
void app_buf_free(app_buf *b);
/* The whole file at path, malloc'd (NUL-terminated); 0 with errno set. */
int app_read_file(const char *path, char **data, size_t *len);

#endif
