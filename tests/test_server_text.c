/* gmlp-server's streamed chunks (apps/server_text.c): a chunk never ends
 * inside a UTF-8 sequence or inside what may become a stop sequence; bytes
 * that can begin no sequence are not held back; streamed byte by byte, the
 * pieces are valid UTF-8 and add up to the text. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "server_text.h"

static size_t ready(const char *text, char *const *stops, size_t n_stops)
{
    return srv_text_ready((const unsigned char *)text, strlen(text), stops, n_stops);
}

/* Whole UTF-8 sequences only (no overlong or surrogate check: the cut is what is tested). */
static int valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        const unsigned char c = s[i];
        const size_t len = c < 0x80                ? 1
                           : c >= 0xC2 && c < 0xE0 ? 2
                           : c >= 0xE0 && c < 0xF0 ? 3
                           : c >= 0xF0 && c < 0xF5 ? 4
                                                   : 0;
        if (!len || i + len > n)
            return 0;
        for (size_t k = 1; k < len; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
        i += len;
    }
    return 1;
}

/* text generated a byte at a time, sent as srv_text_ready allows, the rest at the end (cut at a stop). */
static void stream(const char *text, char *const *stops, size_t n_stops, const char *want)
{
    const size_t n = strlen(text);
    char sent[256] = "";
    size_t read = 0, cut = n;
    int pieces_valid = 1;
    for (size_t len = 1; len <= n && cut == n; len++) {
        for (size_t i = 0; i < n_stops; i++) /* as on_token: the text ends before a stop sequence */
            if (len >= strlen(stops[i]) && !memcmp(text + len - strlen(stops[i]), stops[i], strlen(stops[i])))
                cut = len - strlen(stops[i]);
        const size_t end = cut < n ? cut : srv_text_ready((const unsigned char *)text, len, stops, n_stops);
        CHECK(end >= read, "'%s': the ready part never shrinks (%zu after %zu)", text, end, read);
        if (end <= read)
            continue;
        pieces_valid &= valid_utf8((const unsigned char *)text + read, end - read);
        strncat(sent, text + read, end - read);
        read = end;
    }
    strncat(sent, text + read, cut - read);
    CHECK(pieces_valid, "'%s': every piece is whole UTF-8", text);
    CHECK(!strcmp(sent, want), "'%s': the pieces make '%s', not '%s'", text, want, sent);
}

int main(void)
{
    char *no_stops[] = {NULL};
    CHECK(ready("abc", no_stops, 0) == 3, "ASCII: all of it");
    CHECK(ready("", no_stops, 0) == 0, "nothing: nothing");
    CHECK(ready("a\xC3", no_stops, 0) == 1, "a 2-byte lead waits");
    CHECK(ready("a\xC3\xA9", no_stops, 0) == 3, "a whole 2-byte sequence goes");
    CHECK(ready("x\xE2", no_stops, 0) == 1 && ready("x\xE2\x82", no_stops, 0) == 1, "3 bytes: the lead and one wait");
    CHECK(ready("x\xE2\x82\xAC", no_stops, 0) == 4, "a whole 3-byte sequence goes");
    CHECK(ready("\xF0", no_stops, 0) == 0 && ready("\xF0\x9F\x98", no_stops, 0) == 0, "4 bytes: up to three wait");
    CHECK(ready("\xF0\x9F\x98\x80", no_stops, 0) == 4, "a whole 4-byte sequence goes");
    CHECK(ready("a\xFF", no_stops, 0) == 2 && ready("a\xF8", no_stops, 0) == 2, "a byte that begins nothing goes");
    CHECK(ready("a\x80", no_stops, 0) == 2 && ready("\x80\x80\x80\x80", no_stops, 0) == 4,
          "stray continuation bytes go");

    char *end[] = {"END"};
    CHECK(ready("fooE", end, 1) == 3 && ready("fooEN", end, 1) == 3, "a stop's beginning waits");
    CHECK(ready("fooX", end, 1) == 4 && ready("fooENX", end, 1) == 6, "what cannot become a stop goes");
    char *two[] = {"abc", "bd"};
    CHECK(ready("xab", two, 2) == 1 && ready("xb", two, 2) == 1, "the longest beginning of any stop waits");
    char *accent[] = {"\xC3\xA9!"};
    CHECK(ready("a\xC3", accent, 1) == 1 && ready("a\xC3\xA9", accent, 1) == 1, "a stop's and a character's beginning");

    stream("caf\xC3\xA9 \xE2\x82\xAC 10 \xF0\x9F\x98\x80!", no_stops, 0,
           "caf\xC3\xA9 \xE2\x82\xAC 10 \xF0\x9F\x98\x80!");
    stream("one\n\ntwo", (char *[]){"\n\n"}, 1, "one");
    stream("na\xC3\xAFve END here", end, 1, "na\xC3\xAFve ");
    stream("abd", two, 2, "a");
    stream("ENEND", end, 1, "EN");
    return check_summary("test_server_text");
}
