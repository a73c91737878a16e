/* WebP images, read as PIL reads them (libwebp). */
#ifndef APP_WEBP_H
#define APP_WEBP_H

#include <stddef.h>
#include <stdio.h>

#include "image.h"

/* Whether the file's first bytes are a WebP's ("RIFF", size, "WEBP"). */
int app_webp_magic(const unsigned char *head, size_t n);
/* As app_image_read, for a file app_webp_magic accepts. */
unsigned char *app_webp_decode(FILE *f, int *w, int *h, int *ch, char *why);

#endif
