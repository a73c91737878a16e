#include "image.h"
#include "gif.h"
#include "pnm.h"
#include "webp.h"

#include <errno.h>
#include <setjmp.h>
#include <stb/stb_image.h>
#include <stdio.h> /* before jpeglib.h, which uses FILE and size_t */
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

/* libjpeg-turbo's advice against crafted progressive files that take minutes: cap the scans
 * (a real progressive JPEG has about 10) */
#define MAX_SCANS 500

/* The size a PNG declares, read from its IHDR: stb refuses PNGs over 2^30
 * decoded bytes with only "unknown image type", which hides the reason. */
static int png_size(const unsigned char *b, size_t n, long long *w, long long *h)
{
    if (n < 24 || memcmp(b, "\x89PNG\r\n\x1a\n", 8) || memcmp(b + 12, "IHDR", 4))
        return 0;
    *w = (long long)b[16] << 24 | b[17] << 16 | b[18] << 8 | b[19];
    *h = (long long)b[20] << 24 | b[21] << 16 | b[22] << 8 | b[23];
    return 1;
}

int app_image_too_large(long long w, long long h, char *why)
{
    if (w > 0 && h > 0 && (double)w * h <= APP_IMAGE_MAX_PIXELS)
        return 0;
    snprintf(why, APP_IMAGE_REASON_SIZE, "image dimensions %lldx%lld are not positive or over the limit of %d pixels",
             w, h, APP_IMAGE_MAX_PIXELS);
    return 1;
}

/* stb_image reads through these, so that a file which ends before its
 * image does is known: stb would give zeros for the rest (BMP, TGA, PNM,
 * GIF, PSD), PIL refuses it.  stb reads in two ways: refills of its own
 * buffer (the first read of all), which come short at the end of any file
 * and find nothing only when stb needs bytes past it; and reads straight into
 * the image (stbi__getn), which must find every byte they ask for. */
typedef struct stb_stream {
    FILE *f;
    const char *buffer; /* stb's own */
    int past_end;
} stb_stream;

static int stb_read(void *user, char *data, int size)
{
    stb_stream *s = user;
    if (!s->buffer)
        s->buffer = data;
    size_t got = fread(data, 1, (size_t)size, s->f);
    if (data == s->buffer ? !got && size > 0 : got < (size_t)size)
        s->past_end = 1;
    return (int)got;
}

static void stb_skip(void *user, int n)
{
    fseek(((stb_stream *)user)->f, n, SEEK_CUR);
}

static int stb_eof(void *user)
{
    return feof(((stb_stream *)user)->f);
}

/* stb_image's failure reason, printable: for an unknown PNG chunk it puts the
 * chunk's 4 raw bytes (NULs too) before " PNG chunk not known". */
static void stb_reason(const char *r, char *why)
{
    size_t n = 0;
    for (; r && r[n] && n + 1 < APP_IMAGE_REASON_SIZE; n++)
        why[n] = r[n] >= 0x20 && r[n] < 0x7f ? r[n] : '?';
    why[n] = 0;
    if (n < 4)
        snprintf(why, APP_IMAGE_REASON_SIZE, r ? "corrupt image (no readable reason)" : "unknown image type");
}

/* 16-bit grey (and, with a tRNS chunk, alpha) to 8 bits as PIL has them:
 * the grey clipped at 255, the alpha's high byte.  Frees v; NULL (why set)
 * without memory, or when v is NULL (stb's reason then).  The sizes are
 * read through pointers: stb sets them as it loads v. */
static unsigned char *grey16_clipped(unsigned short *v, const int *w, const int *h, const int *ch, char *why)
{
    const size_t n = v ? (size_t)*w * *h * *ch : 0;
    unsigned char *px = v ? malloc(n) : NULL;
    for (size_t i = 0; px && i < n; i++)
        px[i] = (unsigned char)(i % *ch ? v[i] >> 8 : v[i] > 255 ? 255 : v[i]);
    if (v && !px)
        snprintf(why, APP_IMAGE_REASON_SIZE, "out of memory for %dx%d pixels", *w, *h);
    stbi_image_free(v);
    return px;
}

/* stb_image keeps its failure reason per thread (STBI_THREAD_LOCAL), so
 * decoders may run side by side. */
static unsigned char *stb_decode(FILE *f, const unsigned char *head, size_t n, int *w, int *h, int *ch, char *why)
{
    static const stbi_io_callbacks io = {stb_read, stb_skip, stb_eof};
    stb_stream s = {.f = f};
    long long dw, dh;
    why[0] = 0;
    const int png = png_size(head, n, &dw, &dh);
    int known = png;
    if (!known && stbi_info_from_callbacks(&io, &s, w, h, ch)) {
        dw = *w;
        dh = *h;
        known = 1;
    }
    if (known && app_image_too_large(dw, dh, why))
        return NULL;
    rewind(f);
    s = (stb_stream){.f = f};
    /* 16-bit greyscale PNG: PIL's mode I, which its conversion to L / RGB clips
     * at 255 (stb keeps the high byte; other 16-bit PNGs PIL reads as stb does) */
    const int grey16 = png && n >= 26 && head[24] == 16 && head[25] == 0;
    unsigned char *px = !known ? NULL
                        : grey16 ? grey16_clipped(stbi_load_16_from_callbacks(&io, &s, w, h, ch, 0), w, h, ch, why)
                                 : stbi_load_from_callbacks(&io, &s, w, h, ch, 0);
    if (px && s.past_end && !png) { /* a PNG's zlib stream is checked by stb; after it PIL reads nothing */
        snprintf(why, APP_IMAGE_REASON_SIZE, APP_IMAGE_TRUNCATED);
        stbi_image_free(px);
        return NULL;
    }
    if (!px && !why[0])
        stb_reason(known ? stbi_failure_reason() : NULL, why);
    if (px && *ch == 4 && n >= 3 && !memcmp(head, "GIF", 3))
        app_gif_fill_transparent(f, px, *w, *h);
    return px;
}

typedef struct jpeg_errors {
    struct jpeg_error_mgr mgr; /* first: libjpeg passes &mgr */
    jmp_buf fail;
    char *why;
    int eof; /* the file ended before the image did */
} jpeg_errors;

static void jpeg_fail(j_common_ptr c)
{
    jpeg_errors *e = (jpeg_errors *)c->err;
    char msg[JMSG_LENGTH_MAX];
    c->err->format_message(c, msg);
    snprintf(e->why, APP_IMAGE_REASON_SIZE, "JPEG: %s", msg);
    longjmp(e->fail, 1);
}

/* Warnings about corrupt data go on, as PIL's decoder does.  The end of the
 * file before the last row is noted: libjpeg would go on with grey, PIL
 * refuses a truncated file (after the last row, both go on). */
static void jpeg_note(j_common_ptr c, int level)
{
    jpeg_errors *e = (jpeg_errors *)c->err;
    const j_decompress_ptr d = (j_decompress_ptr)c;
    if (level < 0 && c->err->msg_code == JWRN_JPEG_EOF && d->output_scanline < d->output_height)
        e->eof = 1;
}

static void jpeg_progress(j_common_ptr c)
{
    jpeg_errors *e = (jpeg_errors *)c->err;
    if (((j_decompress_ptr)c)->input_scan_number > MAX_SCANS) {
        snprintf(e->why, APP_IMAGE_REASON_SIZE, "JPEG: more than %d progressive scans", MAX_SCANS);
        longjmp(e->fail, 1);
    }
}

/* PIL's CMYK -> RGB (Pillow's cmyk2rgb): each of C, M, Y scaled by the
 * inverse of K, with its rounding. */
static void cmyk_to_rgb(unsigned char *px, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const unsigned char *in = px + 4 * i;
        int nk = 255 - in[3];
        for (int c = 0; c < 3; c++) {
            int t = in[c] * nk + 128;
            int v = nk - (((t >> 8) + t) >> 8);
            px[3 * i + c] = (unsigned char)(v < 0 ? 0 : v);
        }
    }
}

/* JPEG as PIL decodes it: libjpeg's defaults (the accurate integer IDCT,
 * fancy upsampling), YCbCr to RGB by libjpeg, grey kept grey; CMYK and YCCK
 * as CMYK with Adobe's inverted values, then PIL's conversion to RGB. */
static unsigned char *jpeg_decode(FILE *f, int *w, int *h, int *ch, char *why)
{
    struct jpeg_decompress_struct d;
    struct jpeg_progress_mgr progress = {.progress_monitor = jpeg_progress};
    jpeg_errors e = {.why = why};
    unsigned char *volatile px = NULL;
    d.err = jpeg_std_error(&e.mgr);
    e.mgr.error_exit = jpeg_fail;
    e.mgr.emit_message = jpeg_note;
    if (setjmp(e.fail)) {
        jpeg_destroy_decompress(&d);
        free(px);
        return NULL;
    }
    jpeg_create_decompress(&d);
    d.progress = &progress;
    jpeg_stdio_src(&d, f);
    jpeg_read_header(&d, TRUE);
    if (app_image_too_large(d.image_width, d.image_height, why)) {
        jpeg_destroy_decompress(&d);
        return NULL;
    }
    const int cmyk = d.jpeg_color_space == JCS_CMYK || d.jpeg_color_space == JCS_YCCK;
    d.out_color_space = d.jpeg_color_space == JCS_GRAYSCALE ? JCS_GRAYSCALE : cmyk ? JCS_CMYK : JCS_RGB;
    jpeg_start_decompress(&d);
    const size_t stride = (size_t)d.output_width * (size_t)d.output_components;
    if (!(px = malloc(stride * d.output_height))) {
        snprintf(why, APP_IMAGE_REASON_SIZE, "out of memory for %ux%u pixels", d.output_width, d.output_height);
        jpeg_destroy_decompress(&d);
        return NULL;
    }
    while (d.output_scanline < d.output_height && !e.eof) {
        JSAMPROW row = px + stride * d.output_scanline;
        jpeg_read_scanlines(&d, &row, 1);
    }
    if (!e.eof)
        jpeg_finish_decompress(&d); /* reads on to the end marker: PIL's decoder fails on an error there too */
    *w = (int)d.output_width;
    *h = (int)d.output_height;
    *ch = cmyk ? 3 : d.output_components;
    jpeg_destroy_decompress(&d);
    if (e.eof) {
        snprintf(why, APP_IMAGE_REASON_SIZE, "JPEG: " APP_IMAGE_TRUNCATED);
        free(px);
        return NULL;
    }
    if (cmyk) {
        const size_t n = (size_t)*w * (size_t)*h;
        for (size_t i = 0; i < 4 * n; i++)
            px[i] = (unsigned char)(255 - px[i]); /* Adobe's inverted values, as PIL assumes */
        cmyk_to_rgb(px, n);
    }
    return px;
}

/* Whether stb_image would take the file for a JPEG (any run of 0xff, then
 * 0xd8): all of those go to libjpeg, which decodes PIL's JPEGs (ff d8 ff)
 * and refuses the rest, so stb's JPEG decoder never runs. */
static int jpeg_like(const unsigned char *b, size_t n)
{
    size_t i = 0;
    while (i < n && b[i] == 0xff)
        i++;
    return i > 0 && (i == n || b[i] == 0xd8);
}

unsigned char *app_image_read(FILE *f, int *w, int *h, int *ch, char *why)
{
    unsigned char head[32];
    size_t n = fread(head, 1, sizeof head, f);
    rewind(f);
    return jpeg_like(head, n)        ? jpeg_decode(f, w, h, ch, why)
           : app_pnm_magic(head, n)  ? app_pnm_decode(f, w, h, ch, why)
           : app_webp_magic(head, n) ? app_webp_decode(f, w, h, ch, why)
                                     : stb_decode(f, head, n, w, h, ch, why);
}

unsigned char *app_image_decode(const char *path, int *w, int *h, int *ch, char *why)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, APP_IMAGE_REASON_SIZE, "%s", strerror(errno));
        return NULL;
    }
    unsigned char *px = app_image_read(f, w, h, ch, why);
    fclose(f);
    return px;
}

/* stb_image allocates with malloc (Debian's libstb keeps STBI_MALLOC), as jpeg_decode does */
void app_image_free(unsigned char *px)
{
    free(px);
}
