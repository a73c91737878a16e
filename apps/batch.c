#include "batch.h"

#include "image.h"
#include "portable.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

app_batch *app_batch_new_blobs(size_t id, size_t cap)
{
    app_batch *b = calloc(1, sizeof *b);
    if (!b || !(b->paths = calloc(cap, sizeof *b->paths)) || !(b->blobs = calloc(cap, sizeof *b->blobs))) {
        app_batch_free(b);
        return NULL;
    }
    b->id = id;
    b->cap = cap;
    return b;
}

int app_batch_add_blob(app_batch *b, const char *name, app_blob blob)
{
    char *copy = b->n < b->cap ? strdup(name) : NULL;
    if (!copy) {
        free(blob.data);
        return 0;
    }
    b->paths[b->n] = copy;
    b->blobs[b->n++] = blob;
    return 1;
}

/* The blob's pixels: the file readers through a stream on its bytes. */
static unsigned char *decode_blob(const app_blob *blob, int *w, int *h, int *ch, char *why)
{
    FILE *f = blob->size ? app_fmemopen(blob->data, blob->size) : NULL;
    if (!f) {
        snprintf(why, APP_IMAGE_REASON_SIZE, "%s", blob->size ? "out of host memory" : "the image is empty");
        return NULL;
    }
    unsigned char *px = app_image_read(f, w, h, ch, why);
    fclose(f);
    return px;
}

int app_batch_results(app_batch *b, size_t k, size_t n_features)
{
    app_batch_drop_results(b);
    b->results = calloc(b->n + 1, sizeof *b->results);
    b->errors = calloc(b->n + 1, sizeof *b->errors);
    b->index = malloc((k + 1) * sizeof *b->index);
    b->prob = malloc((k + 1) * sizeof *b->prob);
    b->labels = malloc((k + 1) * sizeof *b->labels);
    b->features = n_features ? malloc(n_features * sizeof *b->features) : NULL;
    return b->results && b->errors && b->index && b->prob && b->labels && (!n_features || b->features);
}

void app_batch_drop_results(app_batch *b)
{
    for (size_t i = 0; b->errors && i < b->n; i++)
        free(b->errors[i]);
    free(b->errors);
    free(b->results);
    free(b->index);
    free(b->prob);
    free(b->labels);
    free(b->features);
    free(b->strings);
    b->errors = NULL;
    b->results = NULL;
    b->index = NULL;
    b->prob = NULL;
    b->labels = NULL;
    b->features = NULL;
    b->strings = NULL;
}

void app_batch_drop_images(app_batch *b)
{
    free(b->images);
    b->images = NULL;
}

void app_batch_free(app_batch *b)
{
    if (!b)
        return;
    app_batch_drop_images(b);
    app_batch_drop_results(b);
    for (size_t i = 0; b->why && i < b->n; i++)
        free(b->why[i]);
    free(b->why);
    for (size_t i = 0; b->paths && i < b->n; i++)
        free(b->paths[i]);
    free(b->paths);
    for (size_t i = 0; b->blobs && i < b->n; i++)
        free(b->blobs[i].data);
    free(b->blobs);
    free(b);
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
    char why[APP_IMAGE_REASON_SIZE];
    b->n_ok = 0;
    for (size_t i = 0; ok && i < b->n; i++) {
        unsigned char *p = b->blobs ? decode_blob(&b->blobs[i], &w[b->n_ok], &h[b->n_ok], &ch[b->n_ok], why)
                                    : app_image_decode(b->paths[i], &w[b->n_ok], &h[b->n_ok], &ch[b->n_ok], why);
        if (b->blobs) { /* its bytes are not needed again */
            free(b->blobs[i].data);
            b->blobs[i].data = NULL;
        }
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
                app_image_free(px[j]);
            }
        }
        b->n_ok = kept;
    }
    for (size_t j = 0; px && j < b->n_ok; j++)
        app_image_free(px[j]);
    free(px);
    free(w);
    free(h);
    free(ch);
    free(slot);
    return ok;
}
