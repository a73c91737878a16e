#include "base64.h"

#include <stdint.h>
#include <stdlib.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *app_base64_encode(const void *data, size_t n)
{
    const unsigned char *p = data;
    if (n > (SIZE_MAX - 1) / 4 * 3 - 3)
        return NULL;
    char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
    for (size_t i = 0; out && i < n; i += 3) {
        const uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        *o++ = alphabet[v >> 18];
        *o++ = alphabet[v >> 12 & 63];
        *o++ = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? alphabet[v & 63] : '=';
    }
    if (out)
        *o = 0;
    return out;
}

/* The value of an alphabet character, -1 for any other. */
static int value(unsigned char c)
{
    return c >= 'A' && c <= 'Z'   ? c - 'A'
           : c >= 'a' && c <= 'z' ? c - 'a' + 26
           : c >= '0' && c <= '9' ? c - '0' + 52
           : c == '+'             ? 62
           : c == '/'             ? 63
                                  : -1;
}

int app_base64_decode(const char *s, size_t len, unsigned char **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t pad = 0;
    while (pad < 2 && len > pad && s[len - 1 - pad] == '=')
        pad++;
    const size_t chars = len - pad;
    if ((pad && len % 4) || chars % 4 == 1)
        return 0;
    unsigned char *b = malloc(chars / 4 * 3 + 3);
    if (!b)
        return -1;
    uint32_t acc = 0;
    size_t bits = 0, k = 0;
    for (size_t i = 0; i < chars; i++) {
        const int v = value((unsigned char)s[i]);
        if (v < 0) {
            free(b);
            return 0;
        }
        acc = acc << 6 | (uint32_t)v;
        if ((bits += 6) >= 8) {
            bits -= 8;
            b[k++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    if (acc) { /* the last character's unused bits must be 0 (RFC 4648 3.5): one text per byte string */
        free(b);
        return 0;
    }
    *out = b;
    *n = k;
    return 1;
}
