/* A batch: a run of consecutive input paths, what decoding made of them and,
 * once classified, their rows as the output format writes them. */
#ifndef APP_BATCH_H
#define APP_BATCH_H

#include <gmlp.h>
#include <stddef.h>

#include "output.h"

typedef struct app_batch {
    size_t id; /* position in the run: batches are written in id order */
    size_t n;
    char **paths; /* owned */
    /* decoded: the n_ok images that decoded, in order, and each failure's reason */
    float *images;
    char **why; /* NULL where the image decoded */
    size_t n_ok;
    /* classified */
    app_buf rows;   /* in the output format */
    app_buf errors; /* "PATH: error: REASON" lines for stderr */
    size_t n_err;
    struct app_batch *next; /* queue link */
} app_batch;

app_batch *app_batch_new(size_t id, char *const *paths, size_t n);
/* Decodes every path (app_image_decode: huge images refused before decoding) and
 * preprocesses them (gmlp_preprocess_rgb8_batch) into images; 0 when out of memory. */
int app_batch_decode(app_batch *b, const gmlp_config *cfg);
/* Frees what classification no longer needs. */
void app_batch_drop_images(app_batch *b);
void app_batch_free(app_batch *b);

#endif
