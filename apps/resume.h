/* --resume: reading back what an earlier gmlp-classify run wrote, so that the
 * images it holds are skipped and the rows a kill cut off are written again. */
#ifndef APP_RESUME_H
#define APP_RESUME_H

#include <stddef.h>
#include <stdio.h>

#include "format.h"

/* The sorted set of files an earlier output holds. */
typedef struct app_done {
    char **files;
    size_t n;
} app_done;
int app_done_has(const app_done *d, const char *file);
/* Sorts d->files, as app_done_has needs. */
void app_done_sort(app_done *d);
void app_done_free(app_done *d);

/* Reads the output at path (written by w) into done, cuts off a torn last row
 * (a CSV image's rows count as one), drops error rows with retry_errors, and
 * opens it for appending into out (a format with its own resume: w->resume).
 * 1 when open; 0 with a message on stderr. */
int app_resume(const char *path, const app_writer *w, int retry_errors, app_done *done, app_out *out);

#endif
