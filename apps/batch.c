#include "batch.h"

#include <errno.h>
#include <stb/stb_image.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PIXELS (1 << 26) /* refuse larger images before decoding them: 4 bytes each */
#define REASON_SIZE 256

app_batch *app_batch_new(size_t id, char *const *paths, size_t n)
{
    app_batch *b = calloc(1, sizeof *b);
    if (!b || !(b->paths = calloc(n + 1, sizeof *b->paths))) {
        free(b);
        return NULL;
    }
    b->id = id;
    for (size_t i = 0; i < n; i++)
        if (!(b->paths[b->n++] = strdup(paths[i]))) {
            app_batch_free(b);
            return NULL;
        }
    return b;
}

void app_batch_drop_images(app_batch *b)
{
    free(b->images);
    b->images = NULL;
    for (size_t i = 0; b->why && i < b->n; i++)
        free(b->why[i]);
    free(b->why);
    b->why = NULL;
}

void app_batch_free(app_batch *b)
{
    if (!b)
        return;
    app_batch_drop_images(b);
    for (size_t i = 0; b->paths && i < b->n; i++) /* a batch received from an MPI rank has rows, no paths */
        free(b->paths[i]);
    free(b->paths);
    app_buf_free(&b->rows);
    app_buf_free(&b->errors);
    free(b);
}

/* The size a PNG declares, read from its IHDR: stb refuses PNGs over 2^30
 * decoded bytes with only "unknown image type", which hides the reason. */
static int png_size(FILE *f, unsigned long *w, unsigned long *h)
{
    unsigned char b[24];
    int ok = fread(b, 1, sizeof b, f) == sizeof b && !memcmp(b, "\x89PNG\r\n\x1a\n", 8) && !memcmp(b + 12, "IHDR", 4);
    rewind(f);
    if (ok) {
        *w = (unsigned long)b[16] << 24 | (unsigned long)b[17] << 16 | (unsigned long)b[18] << 8 | b[19];
        *h = (unsigned long)b[20] << 24 | (unsigned long)b[21] << 16 | (unsigned long)b[22] << 8 | b[23];
    }
    return ok;
}

/* Decodes the file, refusing huge images before decoding; NULL with the
 * reason in why (REASON_SIZE bytes) on failure.  stb_image keeps its failure
 * reason per thread (STBI_THREAD_LOCAL), so decoders may run side by side. */
static unsigned char *decode(const char *path, int *w, int *h, int *ch, char *why)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, REASON_SIZE, "%s", strerror(errno));
        return NULL;
    }
    unsigned long dw, dh;
    int known = png_size(f, &dw, &dh);
    if (!known && stbi_info_from_file(f, w, h, ch)) {
        dw = (unsigned long)*w;
        dh = (unsigned long)*h;
        known = 1;
    }
    unsigned char *px = NULL;
    if (known && (!dw || !dh || (double)dw * dh > MAX_PIXELS)) {
        snprintf(why, REASON_SIZE, "image dimensions %lux%lu are zero or over the limit of 2^26 pixels", dw, dh);
    } else {
        px = known ? stbi_load_from_file(f, w, h, ch, 0) : NULL;
        if (!px) {
            const char *r = known ? stbi_failure_reason() : NULL;
            snprintf(why, REASON_SIZE, "%s", r ? r : "unknown image type");
        }
    }
    fclose(f);
    return px;
}

int app_batch_decode(app_batch *b, const gmlp_config *cfg)
{
    const size_t per = (size_t)cfg->in_chans * cfg->img_h * cfg->img_w;
    unsigned char **px = calloc(b->n, sizeof *px);
    int *w = calloc(b->n, sizeof *w), *h = calloc(b->n, sizeof *h), *ch = calloc(b->n, sizeof *ch);
    size_t *slot = calloc(b->n, sizeof *slot);
    b->why = calloc(b->n, sizeof *b->why);
    b->images = malloc(sizeof(float) * per * (b->n ? b->n : 1));
    int ok = px && w && h && ch && slot && b->why && b->images;
    char why[REASON_SIZE];
    b->n_ok = 0;
    for (size_t i = 0; ok && i < b->n; i++) {
        unsigned char *p = decode(b->paths[i], &w[b->n_ok], &h[b->n_ok], &ch[b->n_ok], why);
        if (p) {
            slot[b->n_ok] = i;
            px[b->n_ok++] = p;
        } else {
            ok = (b->why[i] = strdup(why)) != NULL;
        }
    }
    /* one call for the batch; should an image fail there, each is done alone to know which */
    if (ok && b->n_ok &&
        gmlp_preprocess_rgb8_batch(cfg, (const uint8_t *const *)px, w, h, ch, b->n_ok, b->images) != GMLP_OK) {
        size_t kept = 0;
        for (size_t j = 0; ok && j < b->n_ok; j++) {
            if (gmlp_preprocess_rgb8(cfg, px[j], w[j], h[j], ch[j], b->images + per * kept) == GMLP_OK) {
                px[kept] = px[j];
                slot[kept++] = slot[j];
            } else {
                ok = (b->why[slot[j]] = strdup(gmlp_last_error(NULL))) != NULL;
                stbi_image_free(px[j]);
            }
        }
        b->n_ok = kept;
    }
    for (size_t j = 0; px && j < b->n_ok; j++)
        stbi_image_free(px[j]);
    free(px);
    free(w);
    free(h);
    free(ch);
    free(slot);
    return ok;
}
