/* Netpbm files (PBM, PGM, PPM; binary and plain) as Pillow's PpmImagePlugin
 * reads them, PIL being the reference for every format: stb_image neither
 * scales a maxval other than 255 nor reads 16-bit samples in their byte
 * order, and reads no PBM and no plain files. */
#include "pnm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WHITESPACE " \t\n\v\f\r"
#define MAX_TOKEN 10           /* PIL's limit on a number's length, in the header and the plain data */
#define PIL_BLOCK (1024 * 1024) /* PIL reads plain data in blocks of this size (ImageFile.SAFEBLOCK) */

/* PIL's whitespace (strchr alone would also match the NUL byte) */
static int is_space(int c)
{
    return c > 0 && strchr(WHITESPACE, c);
}

int app_pnm_magic(const unsigned char *head, size_t n)
{
    return n >= 2 && head[0] == 'P' && head[1] >= '1' && head[1] <= '6';
}

/* The file, and the bytes read since the raster began (PIL's blocks). */
typedef struct pnm_in {
    FILE *f;
    size_t pos;
} pnm_in;

static int get(pnm_in *in)
{
    int c = getc(in->f);
    in->pos += c != EOF;
    return c;
}

/* A comment, after its '#': to the end of the line (consumed), or at most
 * to the end of the block when `block` (PIL cuts it there). */
static void skip_comment(pnm_in *in, int block)
{
    int c;
    while ((!block || in->pos % PIL_BLOCK) && (c = get(in)) != EOF && c != '\r' && c != '\n')
        ;
}

/* The next token as PIL reads one: whitespace before it skipped, '#' to the
 * end of the line dropped anywhere (the two sides join), ended by a
 * whitespace (consumed) or the end of the file (then *last is set).  Its
 * length (MAX_TOKEN + 1: too long), 0 at the end of the file. */
static int next_token(pnm_in *in, char tok[MAX_TOKEN + 2], int *last)
{
    int len = 0, c = 0;
    while (len <= MAX_TOKEN && (c = get(in)) != EOF) {
        if (is_space(c)) {
            if (len)
                break;
        } else if (c == '#') {
            skip_comment(in, 0);
        } else {
            tok[len++] = (char)c;
        }
    }
    tok[len] = 0;
    if (last)
        *last = len && c == EOF;
    return len;
}

/* Python's int() of a token of len bytes (NULs included): a sign, then
 * digits, single '_' between them. */
static int python_int(const char *s, int len, long long *v)
{
    const char *end = s + len;
    int neg = *s == '-', digits = 0;
    s += *s == '-' || *s == '+';
    *v = 0;
    for (; s < end; s++) {
        if (*s == '_' && digits && s + 1 < end && s[1] >= '0' && s[1] <= '9')
            continue;
        if (*s < '0' || *s > '9')
            return 0;
        *v = *v * 10 + (*s - '0');
        digits++;
    }
    *v = neg ? -*v : *v;
    return digits > 0;
}

static int header_number(pnm_in *in, long long *v, const char *what, char *why)
{
    char tok[MAX_TOKEN + 2];
    int len = next_token(in, tok, NULL);
    if (len && len <= MAX_TOKEN && python_int(tok, len, v))
        return 1;
    snprintf(why, APP_IMAGE_REASON_SIZE, "PNM: the %s is %s", what,
             !len ? "missing (the header ends early)" : len > MAX_TOKEN ? "over 10 characters" : "not a number");
    return 0;
}

/* A value as PIL makes it 8-bit: grey over 255 (PIL's mode I) scaled to
 * 65535, then clipped at 255 by the conversion to L / RGB; the rest scaled
 * to 255 (maxval 255: as stored), rounding half to even as Python's round().
 * (Binary values over maxval are clipped too.) */
static unsigned char scaled(long long v, long long maxval, int grey)
{
    const double out_max = grey && maxval > 255 ? 65535 : 255;
    const double s = fmin(out_max, rint((double)v / (double)maxval * out_max));
    return (unsigned char)fmin(s, 255);
}

/* Binary rasters: P4 rows of bits (the first the most significant, 1
 * black), P5/P6 samples of 1 or (maxval > 255) 2 big-endian bytes. */
static int read_binary(FILE *f, int kind, long long width, long long height, long long maxval, unsigned char *px,
                       char *why)
{
    const int bands = kind == '6' ? 3 : 1, bytes = maxval > 255 ? 2 : 1;
    const size_t row = kind == '4' ? ((size_t)width + 7) / 8 : (size_t)width * bands * bytes;
    const size_t samples = (size_t)width * height * bands;
    unsigned char *raw = malloc(row * height);
    if (!raw) {
        snprintf(why, APP_IMAGE_REASON_SIZE, "out of memory for %lldx%lld pixels", width, height);
        return 0;
    }
    int ok = fread(raw, 1, row * height, f) == row * height;
    if (!ok)
        snprintf(why, APP_IMAGE_REASON_SIZE, APP_IMAGE_TRUNCATED);
    else if (kind == '4')
        for (size_t y = 0; y < (size_t)height; y++)
            for (size_t x = 0; x < (size_t)width; x++)
                px[y * width + x] = raw[y * row + x / 8] >> (7 - x % 8) & 1 ? 0 : 255;
    else
        for (size_t i = 0; i < samples; i++)
            px[i] = scaled(bytes == 2 ? raw[2 * i] << 8 | raw[2 * i + 1] : raw[i], maxval, kind == '5');
    free(raw);
    return ok;
}

/* Plain P1: every non-blank character a pixel, '1' black; PIL checks every
 * character of each block it reads, up to the block with the last pixel. */
static int read_plain_bits(pnm_in *in, size_t n, unsigned char *px, char *why)
{
    size_t got = 0;
    int c;
    while ((got < n || in->pos % PIL_BLOCK) && (c = get(in)) != EOF) {
        if (c == '#') {
            skip_comment(in, got == n);
        } else if (c == '0' || c == '1') {
            if (got < n)
                px[got++] = c == '1' ? 0 : 255;
        } else if (!is_space(c)) {
            snprintf(why, APP_IMAGE_REASON_SIZE, "PNM: '%c' is no pixel of a plain bitmap",
                     c >= 0x20 && c < 0x7f ? c : '?');
            return 0;
        }
    }
    if (got < n)
        snprintf(why, APP_IMAGE_REASON_SIZE, APP_IMAGE_TRUNCATED);
    return got == n;
}

/* PIL, done with the values inside a block, still refuses one that would
 * end it (no whitespace after it) when it is over 10 characters. */
static int check_block_tail(pnm_in *in, int run, char *why)
{
    int c;
    while (in->pos % PIL_BLOCK && (c = get(in)) != EOF) {
        if (c == '#')
            skip_comment(in, 1);
        else
            run = is_space(c) ? 0 : run + 1;
    }
    if (run > MAX_TOKEN)
        snprintf(why, APP_IMAGE_REASON_SIZE, "PNM: a value after the image's is over 10 characters");
    return run <= MAX_TOKEN;
}

/* Plain P2/P3: decimal values up to maxval, scaled as the binary ones.  Two
 * quirks of PIL's decoder kept: a negative value wraps to 8 bits (mode I
 * refuses it), and a last value that ends the file (no newline after it)
 * is repeated for the missing ones. */
static int read_plain_values(pnm_in *in, size_t n, long long maxval, int grey, unsigned char *px, char *why)
{
    char tok[MAX_TOKEN + 2];
    int last = 0, len = 0;
    long long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!last) /* after the last value: it again */
            len = next_token(in, tok, &last);
        if (!len) {
            snprintf(why, APP_IMAGE_REASON_SIZE, APP_IMAGE_TRUNCATED);
            return 0;
        }
        const int number = len <= MAX_TOKEN && python_int(tok, len, &v);
        if (!number || v > maxval || (v < 0 && grey && maxval > 255)) {
            for (int k = 0; k < len && k <= MAX_TOKEN; k++) /* printable in the message */
                tok[k] = tok[k] > 0x20 && tok[k] < 0x7f ? tok[k] : '?';
            snprintf(why, APP_IMAGE_REASON_SIZE, "PNM: value %.11s is %s", tok,
                     !number ? "not a number of at most 10 characters" : "outside [0, maxval]");
            return 0;
        }
        px[i] = v < 0 ? (unsigned char)((long long)rint((double)v / (double)maxval * 255) & 255)
                      : scaled(v, maxval, grey);
    }
    return check_block_tail(in, last ? len : 0, why);
}

unsigned char *app_pnm_decode(FILE *f, int *w, int *h, int *ch, char *why)
{
    unsigned char magic[3] = {0};
    int got = (int)fread(magic, 1, 3, f); /* "P", the digit, one whitespace (PIL reads the magic to it) */
    if (got < 3 || !is_space(magic[2])) {
        snprintf(why, APP_IMAGE_REASON_SIZE, "PNM: no whitespace after the magic number P%c", magic[1]);
        return NULL;
    }
    const int kind = magic[1], bitmap = kind == '1' || kind == '4', plain = kind <= '3';
    long long width, height, maxval = 1;
    pnm_in in = {f, 0};
    if (!header_number(&in, &width, "width", why) || !header_number(&in, &height, "height", why) ||
        (!bitmap && !header_number(&in, &maxval, "maxval", why)))
        return NULL;
    if (maxval < 1 || maxval > 65535) {
        snprintf(why, APP_IMAGE_REASON_SIZE, "PNM: maxval %lld is not in [1, 65535]", maxval);
        return NULL;
    }
    if (app_image_too_large(width, height, why))
        return NULL;
    in.pos = 0; /* PIL's blocks begin with the raster */
    const int bands = kind == '3' || kind == '6' ? 3 : 1, grey = kind == '2' || kind == '5';
    const size_t n = (size_t)width * height * bands;
    unsigned char *px = malloc(n);
    if (!px) {
        snprintf(why, APP_IMAGE_REASON_SIZE, "out of memory for %lldx%lld pixels", width, height);
        return NULL;
    }
    int ok = !plain ? read_binary(f, kind, width, height, maxval, px, why)
             : bitmap ? read_plain_bits(&in, n, px, why)
                      : read_plain_values(&in, n, maxval, grey, px, why);
    if (!ok) {
        free(px);
        return NULL;
    }
    *w = (int)width;
    *h = (int)height;
    *ch = bands;
    return px;
}
