/* The output file of gmlp-classify: never overwritten, continued with
 * --resume (resume.h) by the run that wrote it. */
#ifndef APP_OUTPUT_H
#define APP_OUTPUT_H

#include <stdio.h>

#include "format.h"
#include "resume.h"

/* The run an output belongs to, kept beside it (PATH.gmlp-run.json) so that a
 * --resume with another model, --top or precision is refused. */
typedef struct app_run_id {
    const char *model; /* the model's real path */
    int top;
    const char *precision; /* its name; a run file without one is of fp32, all there was */
    int features;          /* --features: the rows are features, not classes */
} app_run_id;

/* Opens PATH (and the file beside it, w->side) for a new run (refused when
 * either exists: 2 with a message) or, with resume_run, continues it
 * (app_resume) when id matches its run file.  1 when open; 0 a run-time
 * failure, 2 a usage error (message on stderr). */
int app_output_open(const char *path, const app_writer *w, const app_run_id *id, int resume_run, int retry_errors,
                    app_done *done, app_out *out);

/* Removes an output this run created and wrote no row to (the model did not
 * load, say), the file beside it and its run file, so that the next run is not refused. */
void app_output_remove(const char *path, const app_writer *w);

#endif
