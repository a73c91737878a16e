/* The list of images to classify: files and folders given on the command line
 * or in a --files-from list, folders expanded in a stable order. */
#ifndef APP_INPUTS_H
#define APP_INPUTS_H

#include <stddef.h>
#include <stdio.h>

typedef struct app_inputs {
    char **paths; /* in the order given; folder entries sorted bytewise */
    size_t n, cap;
    size_t skipped; /* files in folders that are not images by extension, and dotfiles */
    int recursive;  /* -r: descend into subfolders (symlinked folders are not followed) */
} app_inputs;

/* One argument: a folder adds its image files, anything else is added as is
 * (an explicit file is always tried).  0 on out of memory or an unreadable
 * folder, with a message on stderr. */
int app_inputs_add(app_inputs *in, const char *arg);
/* One path per line of f (a CR before the newline is dropped, empty lines skipped). */
int app_inputs_add_list(app_inputs *in, FILE *f);
/* Drops later repeats of a path, keeping the first. */
void app_inputs_dedupe(app_inputs *in);
void app_inputs_free(app_inputs *in);
/* Whether a file name has an image extension (case-insensitive). */
int app_is_image_name(const char *name);

#endif
