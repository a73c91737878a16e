/* gmlp-classify --eval: the labelled images (ImageFolder trees, whose leaf
 * folder names a file's class as timm's ImageFolder does, or path,label CSV
 * files), what the pipeline's typed results say of each (top-1, whether the
 * label is among the top 5), and the report: top-1 and top-5 accuracy as
 * timm.utils.accuracy computes them, per-class precision and recall, the
 * confusion matrix (JSON, Markdown, SVG).  eval_set.c reads the images,
 * eval.c keeps the results, eval_report.c writes the report. */
#ifndef APP_EVAL_H
#define APP_EVAL_H

#include <stdint.h>
#include <stdio.h>

#include "format.h"
#include "inputs.h"
#include "result.h"

#define APP_EVAL_TOP 5 /* the wider of the two accuracies */

typedef struct app_eval {
    /* the images, sorted by path (bytewise), with their labels */
    char **paths;
    int32_t *label;
    size_t n;
    char **classes; /* the data set's class names: classes[label] */
    int n_classes;
    size_t outside; /* image files in no class (at a tree's root, a folder not in --class-map) */
    /* what the run made of each: 0 not yet, 1 classified, 2 failed */
    unsigned char *state;
    int32_t *top1;
    unsigned char *in_top5;
    /* the model's label of each class index a result named (names[i], NULL when none did) */
    char **names;
    int32_t n_names;
} app_eval;

/* The labelled images of args: a folder is an ImageFolder root (its images at any depth, the class by the
 * name of the folder holding each), a file a CSV of path,label lines (a path relative to the CSV's folder;
 * the label a class index, or a name of --class-map; an optional first line "path,label").  Classes by
 * class_map (a file of class names, one a line: line i is class i, as timm's class_map), else the
 * folders' names in timm's natural order.  Their paths are added to in.  0 with a message on stderr. */
int app_eval_open(app_eval *e, char *const *args, int n_args, const char *class_map, app_inputs *in);
/* One image's result, by its path (one not in the set is ignored). */
void app_eval_take(app_eval *e, const char *path, const app_result *r);
/* --resume: the rows an earlier run wrote to path (by w) taken as that run's results.  0 with a message. */
int app_eval_resume(app_eval *e, const char *path, const app_writer *w);
void app_eval_free(app_eval *e);

/* Where the run went, for the report's head. */
typedef struct app_eval_run {
    const char *model, *devices, *precision;
} app_eval_run;
/* The report of a complete run: Markdown (or, json, one JSON document) into f; the confusion matrix as an
 * SVG file at svg (unless NULL).  0 when writing failed, with a message. */
int app_eval_report(const app_eval *e, const app_eval_run *run, FILE *f, int json, const char *svg);

#endif
