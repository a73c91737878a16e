/* Base64 (RFC 4648's standard alphabet): /v1/embeddings' images in its JSON
 * input, and its features as encoding_format "base64". */
#ifndef APP_BASE64_H
#define APP_BASE64_H

#include <stddef.h>

/* The base64 of n bytes, NUL-terminated and padded, malloc'd; NULL when out of memory. */
char *app_base64_encode(const void *data, size_t n);
/* The bytes of s[0..len) (padding optional, nothing else but the alphabet; a
 * '=' only at the end), malloc'd into *out (*n of them): 1, 0 when s is not
 * base64, -1 when out of memory. */
int app_base64_decode(const char *s, size_t len, unsigned char **out, size_t *n);

#endif
