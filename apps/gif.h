/* GIF's first frame as PIL converts it: what stb_image leaves transparent. */
#ifndef APP_GIF_H
#define APP_GIF_H

#include <stdio.h>

/* Gives the pixels of rgba (stb_image's decoding of the GIF f, w x h) that
 * are transparent the colour PIL's conversion to RGB gives them; their
 * alpha stays 0.  Leaves rgba as it is where f's header does not parse. */
void app_gif_fill_transparent(FILE *f, unsigned char *rgba, int w, int h);

#endif
