/* Binary Netpbm images (P4 bitmap, P5 grey, P6 RGB), read as PIL reads them. */
#ifndef APP_PNM_H
#define APP_PNM_H

#include <stddef.h>
#include <stdio.h>

#include "image.h"

/* Whether the file's first bytes are a Netpbm magic (P1-P6, then whitespace). */
int app_pnm_magic(const unsigned char *head, size_t n);
/* As app_image_read, for a file app_pnm_magic accepts (plain P1-P3 are refused). */
unsigned char *app_pnm_decode(FILE *f, int *w, int *h, int *ch, char *why);

#endif
