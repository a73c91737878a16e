/* What the devices made of one image, apart from any output format: its top
 * classes and/or its pooled features (as the image asked), or why it failed.  The writers (format.h), the server's replies and
 * MPI's messages are made from it; none is parsed back. */
#ifndef APP_RESULT_H
#define APP_RESULT_H

#include <stdint.h>

typedef struct app_result {
    const char *error; /* why the image failed; NULL when it was classified */
    int k;             /* its classes, the most probable first */
    const int32_t *index;
    const float *prob;
    const char *const *labels; /* labels[i] names index[i] */
    int dim;                   /* its pooled features (gmlp_features), dim of them; 0 and NULL when not asked */
    const float *features;
} app_result;

#endif
