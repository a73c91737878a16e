/* A batch: a run of consecutive input paths (gmlp-classify) or of images in
 * memory (gmlp-server), what decoding made of them and, once classified, a
 * result per image (result.h). */
#ifndef APP_BATCH_H
#define APP_BATCH_H

#include <gmlp.h>
#include <stddef.h>

#include "result.h"

/* An image in memory: its encoded bytes and what the server keeps beside it. */
typedef struct app_blob {
    unsigned char *data; /* owned */
    size_t size;
    int top;      /* classes in its row (the request's ?top=K); 0: none */
    int features; /* 1: its pooled features too (/v1/embeddings) */
    size_t owner, slot; /* the caller's: whose image it is, and its place in that reply */
} app_blob;

typedef struct app_batch {
    size_t id; /* position in the run: batches are written in id order */
    size_t n;
    char **paths; /* owned: the files, or the names of the blobs */
    app_blob *blobs; /* owned: n images in memory (cap room), or NULL when paths are files */
    size_t cap;
    /* decoded: the n_ok images that decoded, in order, and each failure's reason */
    float *images;
    char **why; /* NULL where the image decoded */
    size_t n_ok;
    int oom; /* decoding ran out of host memory: the batch fails */
    /* classified: results[i] is paths[i]'s; the arrays its top classes and features point into */
    app_result *results;
    int32_t *index;
    float *prob;
    float *features; /* the decoded images' pooled features, dim each, where any image asked for them */
    int dim;         /* the model's features per image (set on every classified batch) */
    const char **labels;
    char **errors; /* owned: why an image that decoded failed, else NULL */
    char *strings; /* owned: the labels and errors of results received from an MPI rank */
    struct app_batch *next; /* queue link */
} app_batch;

app_batch *app_batch_new(size_t id, char *const *paths, size_t n);
/* An empty batch for up to cap images in memory. */
app_batch *app_batch_new_blobs(size_t id, size_t cap);
/* Appends an image in memory named name (n < cap); the batch takes data
 * (malloc'd) in every case.  0 when out of memory. */
int app_batch_add_blob(app_batch *b, const char *name, app_blob blob);
/* Decodes every path or blob (app_image_decode: huge images refused before decoding) and
 * preprocesses them (gmlp_preprocess_rgb8_batch) into images; 0 when out of memory. */
int app_batch_decode(app_batch *b, const gmlp_config *cfg);
/* Room for the results: n of them, with k classes and n_features floats of features in all; 0 when out of
 * memory. */
int app_batch_results(app_batch *b, size_t k, size_t n_features);
/* Frees the results (a device failed: the batch is classified again). */
void app_batch_drop_results(app_batch *b);
/* Frees the images: classification no longer needs them. */
void app_batch_drop_images(app_batch *b);
void app_batch_free(app_batch *b);

#endif
