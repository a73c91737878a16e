/* Reading one image file into 8-bit pixels, as timm's PIL loader sees it:
 * JPEG through libjpeg(-turbo) with PIL's settings, so the pixels are PIL's
 * bit for bit; Netpbm (pnm.c) and WebP (webp.c, libwebp) as PIL reads them;
 * every other format through stb_image (16-bit grey PNG clipped, a GIF's
 * transparent pixels given their palette colour, as PIL does: gif.c). */
#ifndef APP_IMAGE_H
#define APP_IMAGE_H

#include <stdio.h>

#ifndef APP_IMAGE_MAX_PIXELS /* the fuzz target sets a smaller one, to spend its time on the formats */
#define APP_IMAGE_MAX_PIXELS (1 << 26) /* larger images are refused before decoding: 4 bytes each */
#endif
#define APP_IMAGE_REASON_SIZE 256
/* every decoder's reason for a file that ends before its image does (PIL refuses those too) */
#define APP_IMAGE_TRUNCATED "the file is truncated (it ends before the image does)"

/* Interleaved rows of *w x *h pixels of *ch channels (1 grey, 2 grey + alpha,
 * 3 RGB, 4 RGBA), freed with app_image_free; NULL with the reason in why
 * (APP_IMAGE_REASON_SIZE bytes).  Thread-safe. */
unsigned char *app_image_decode(const char *path, int *w, int *h, int *ch, char *why);
/* The same from an open stream (read from its start; the fuzz target's fmemopen). */
unsigned char *app_image_read(FILE *f, int *w, int *h, int *ch, char *why);
void app_image_free(unsigned char *px);

/* The size check every decoder makes before it allocates: 1 (and the reason)
 * for a size that is not positive or over APP_IMAGE_MAX_PIXELS. */
int app_image_too_large(long long w, long long h, char *why);

#endif
