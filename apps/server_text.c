#include "server_text.h"

#include <string.h>

/* Bytes at the end of text[0..n) that begin a UTF-8 sequence not yet whole. */
static size_t incomplete_utf8(const unsigned char *text, size_t n)
{
    for (size_t back = 1; back <= 3 && back <= n; back++) {
        const unsigned char c = text[n - back];
        if ((c & 0xC0) == 0x80)
            continue; /* a continuation byte: its lead is further back */
        const size_t len = c >= 0xF8 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1; /* 0xF8..: never a lead */
        return len > back ? back : 0;
    }
    return 0;
}

/* Bytes at the end of text[0..n) that are a proper prefix of a stop sequence. */
static size_t stop_prefix(const unsigned char *text, size_t n, char *const *stops, size_t n_stops)
{
    size_t hold = 0;
    for (size_t i = 0; i < n_stops; i++)
        for (size_t k = strlen(stops[i]) - 1; k > hold; k--)
            if (k <= n && !memcmp(text + n - k, stops[i], k)) {
                hold = k;
                break;
            }
    return hold;
}

size_t srv_text_ready(const unsigned char *text, size_t n, char *const *stops, size_t n_stops)
{
    const size_t utf8 = incomplete_utf8(text, n), stop = stop_prefix(text, n, stops, n_stops);
    return n - (utf8 > stop ? utf8 : stop);
}
