/* The colour PIL gives a GIF's first frame where stb_image leaves it
 * transparent black: PIL keeps the palette image, so its transparent pixels
 * (and those outside the frame, filled with the transparent index, else
 * index 0) convert to that index's palette colour. */
#include "gif.h"

#include <string.h>

static int skip_sub_blocks(FILE *f)
{
    int n;
    while ((n = getc(f)) > 0)
        if (fseek(f, n, SEEK_CUR))
            return 0;
    return n == 0;
}

/* The first frame's palette (its own, else the global one) and transparent
 * index (-1: none; the last graphic control extension with the flag sets it,
 * as in PIL). */
static int first_frame(FILE *f, unsigned char palette[256][3], int *entries, int *transparent)
{
    unsigned char head[13];
    if (fread(head, 1, 13, f) != 13 || (memcmp(head, "GIF87a", 6) && memcmp(head, "GIF89a", 6)))
        return 0;
    *transparent = -1;
    *entries = head[10] & 0x80 ? 2 << (head[10] & 7) : 0;
    if (fread(palette, 3, (size_t)*entries, f) != (size_t)*entries)
        return 0;
    for (int c; (c = getc(f)) != EOF;) {
        if (c == 0x2c) { /* the image descriptor: x, y, w, h, flags */
            unsigned char d[9];
            if (fread(d, 1, 9, f) != 9)
                return 0;
            if (d[8] & 0x80) {
                *entries = 2 << (d[8] & 7);
                return fread(palette, 3, (size_t)*entries, f) == (size_t)*entries;
            }
            return 1;
        }
        if (c != 0x21)
            return 0;
        int label = getc(f);
        if (label == 0xf9) { /* graphic control: size 4, flags, delay (2), transparent index */
            unsigned char g[5];
            if (fread(g, 1, 5, f) != 5)
                return 0;
            if (g[1] & 1)
                *transparent = g[4];
            fseek(f, -5, SEEK_CUR);
        }
        if (label == EOF || !skip_sub_blocks(f))
            return 0;
    }
    return 0;
}

void app_gif_fill_transparent(FILE *f, unsigned char *rgba, int w, int h)
{
    unsigned char palette[256][3] = {{0}};
    int entries, transparent;
    rewind(f);
    if (!first_frame(f, palette, &entries, &transparent))
        return;
    const int index = transparent >= 0 ? transparent : 0;
    const unsigned char *colour = index < entries ? palette[index] : (const unsigned char[3]){0, 0, 0};
    for (size_t i = 0, n = (size_t)w * h; i < n; i++)
        if (!rgba[4 * i + 3])
            memcpy(rgba + 4 * i, colour, 3);
}
