/* gmlp-server's base64 (apps/base64.c): RFC 4648's test vectors both ways,
 * every length from 0 to 300 of pseudo-random bytes round-tripped (with and
 * without padding), and what is not base64 refused: other characters, '='
 * inside, a length that no byte string has, set bits after the last byte. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "check.h"

static int decodes_to(const char *s, const char *want)
{
    unsigned char *out;
    size_t n;
    const int ok = app_base64_decode(s, strlen(s), &out, &n) == 1 && n == strlen(want) && !memcmp(out, want, n);
    free(out);
    return ok;
}

static int refused(const char *s)
{
    unsigned char *out;
    size_t n;
    return app_base64_decode(s, strlen(s), &out, &n) == 0 && !out;
}

int main(void)
{
    static const char *const rfc[][2] = {{"", ""},         {"f", "Zg=="},     {"fo", "Zm8="},        {"foo", "Zm9v"},
                                         {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
    for (size_t i = 0; i < sizeof rfc / sizeof *rfc; i++) {
        char *e = app_base64_encode(rfc[i][0], strlen(rfc[i][0]));
        CHECK(e && !strcmp(e, rfc[i][1]), "encode '%s': %s", rfc[i][0], e ? e : "NULL");
        free(e);
        CHECK(decodes_to(rfc[i][1], rfc[i][0]), "decode %s", rfc[i][1]);
    }
    CHECK(decodes_to("Zm9vYg", "foob") && decodes_to("Zm9vYmE", "fooba"), "padding is optional");
    uint32_t x = 12345;
    unsigned char bytes[300];
    for (size_t n = 0; n <= sizeof bytes; n++) {
        for (size_t i = 0; i < n; i++)
            bytes[i] = (unsigned char)((x = x * 1664525u + 1013904223u) >> 24);
        char *e = app_base64_encode(bytes, n);
        unsigned char *d = NULL, *d2 = NULL;
        size_t m = 0, m2 = 0;
        const size_t unpadded = e ? strcspn(e, "=") : 0;
        CHECK(e && strlen(e) == (n + 2) / 3 * 4 && app_base64_decode(e, strlen(e), &d, &m) == 1 && m == n &&
                  (!n || !memcmp(d, bytes, n)) && app_base64_decode(e, unpadded, &d2, &m2) == 1 && m2 == n &&
                  (!n || !memcmp(d2, bytes, n)),
              "%zu bytes round-trip, with and without padding", n);
        free(e);
        free(d);
        free(d2);
    }
    static const char *const bad[] = {"Zm9v*g==", "Zm 9v",  "Zm9v\nYg==", "Z",    "Zm9vY",  "Zg=",  "Zg===",
                                      "Z===",     "=Zm9",   "Zm=v",       "Zh==", "Zm9=",   "Zm9vYh", "Zg==Zg=="};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(refused(bad[i]), "'%s' refused", bad[i]);
    return check_summary("test_base64");
}
