/* WebP as Pillow reads it: libwebp's animation decoder with its default
 * options (RGBA, fancy upsampling), the first frame; RGB where the file
 * has no alpha.  The same calls as Pillow's _webp.c, so the same pixels. */
#include "webp.h"

#include <stdlib.h>
#include <string.h>
#include <webp/decode.h>
#include <webp/demux.h>

#define MAX_FILE_BYTES ((size_t)1 << 30) /* a WebP is smaller than its pixels, which are capped */

int app_webp_magic(const unsigned char *head, size_t n)
{
    return n >= 12 && !memcmp(head, "RIFF", 4) && !memcmp(head + 8, "WEBP", 4);
}

/* The whole file (libwebp decodes from memory); NULL with the reason. */
static unsigned char *read_all(FILE *f, size_t *size, char *why)
{
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        unsigned char *grown = cap < MAX_FILE_BYTES ? realloc(buf, cap * 2) : NULL;
        if (!grown) {
            snprintf(why, APP_IMAGE_REASON_SIZE, cap < MAX_FILE_BYTES ? "out of memory for the file"
                                                                       : "WebP: the file is over 1 GiB");
            free(buf);
            return NULL;
        }
        buf = grown;
        cap *= 2;
    }
    if (!buf)
        snprintf(why, APP_IMAGE_REASON_SIZE, "out of memory for the file");
    *size = n;
    return buf;
}

unsigned char *app_webp_decode(FILE *f, int *w, int *h, int *ch, char *why)
{
    size_t size;
    unsigned char *data = read_all(f, &size, why), *px = NULL;
    if (!data)
        return NULL;
    /* the size first: the decoder allocates its canvas when created */
    WebPBitstreamFeatures features;
    const WebPData webp = {data, size};
    WebPAnimDecoder *dec = NULL;
    WebPAnimInfo info;
    uint8_t *rgba;
    int timestamp;
    if (WebPGetFeatures(data, size, &features) != VP8_STATUS_OK)
        snprintf(why, APP_IMAGE_REASON_SIZE, "WebP: not a valid WebP file");
    else if (app_image_too_large(features.width, features.height, why))
        ;
    else if (!(dec = WebPAnimDecoderNew(&webp, NULL)) || !WebPAnimDecoderGetInfo(dec, &info))
        snprintf(why, APP_IMAGE_REASON_SIZE, "WebP: the file is damaged or truncated");
    else if (app_image_too_large(info.canvas_width, info.canvas_height, why))
        ;
    else if (!WebPAnimDecoderGetNext(dec, &rgba, &timestamp))
        snprintf(why, APP_IMAGE_REASON_SIZE, "WebP: the first frame does not decode");
    else if (!(px = malloc((size_t)info.canvas_width * info.canvas_height * (*ch = features.has_alpha ? 4 : 3))))
        snprintf(why, APP_IMAGE_REASON_SIZE, "out of memory for %ux%u pixels", info.canvas_width,
                 info.canvas_height);
    else {
        *w = (int)info.canvas_width;
        *h = (int)info.canvas_height;
        for (size_t i = 0, n = (size_t)*w * *h; i < n; i++) /* without alpha, Pillow's RGBX: the fourth byte dropped */
            memcpy(px + i * *ch, rgba + i * 4, (size_t)*ch);
    }
    WebPAnimDecoderDelete(dec);
    free(data);
    return px;
}
