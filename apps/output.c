#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "portable.h"

static char *sidecar_path(const char *path)
{
    size_t n = strlen(path);
    char *p = malloc(n + 16);
    if (p)
        snprintf(p, n + 16, "%s.gmlp-run.json", path);
    return p;
}

static int write_sidecar(const char *path, const app_run_id *id)
{
    char *side = sidecar_path(path);
    json_t *j = json_pack("{s:o, s:i, s:s, s:b}", "model", app_json_bytes(id->model, strlen(id->model)), "top", id->top,
                          "precision", id->precision, "features", id->features);
    int ok = side && j && json_dump_file(j, side, JSON_INDENT(2)) == 0;
    if (!ok)
        fprintf(stderr, "gmlp-classify: cannot write %s\n", side ? side : "the run file");
    json_decref(j);
    free(side);
    return ok;
}

/* 1 when the output was made by the same model, --top and precision; else 2 with a message. */
static int check_sidecar(const char *path, const app_run_id *id)
{
    char *side = sidecar_path(path);
    json_error_t e;
    json_t *j = side ? json_load_file(side, 0, &e) : NULL;
    const char *model = json_string_value(json_object_get(j, "model"));
    json_int_t top = json_integer_value(json_object_get(j, "top"));
    const char *precision = json_string_value(json_object_get(j, "precision"));
    precision = precision ? precision : "fp32";
    const int features = json_is_true(json_object_get(j, "features")); /* absent: written before --features */
    int ok = 2;
    if (!model)
        fprintf(stderr,
                "gmlp-classify: --resume: cannot tell which model and --top wrote %s (%s is missing or unreadable)\n",
                path, side ? side : "its run file");
    else if (strcmp(model, id->model))
        fprintf(stderr, "gmlp-classify: --resume: %s was written with the model %s, not %s\n", path, model, id->model);
    else if (features != id->features)
        fprintf(stderr, "gmlp-classify: --resume: %s holds %s, not %s (%s --features)\n", path,
                features ? "features" : "classes", features ? "classes" : "features",
                features ? "give" : "without");
    else if (top != id->top && !features)
        fprintf(stderr, "gmlp-classify: --resume: %s was written with --top %lld, not %d\n", path, (long long)top,
                id->top);
    else if (strcmp(precision, id->precision))
        fprintf(stderr, "gmlp-classify: --resume: %s was written in precision %s, not %s\n", path, precision,
                id->precision);
    else
        ok = 1;
    json_decref(j);
    free(side);
    return ok;
}

/* A new file at path, refused when it exists: 1, 0 (run-time failure) or 2, with a message. */
static int create(const char *path, const char *mode, FILE **f)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_BINARY, 0666);
    if (fd >= 0 && (*f = fdopen(fd, mode)))
        return 1;
    if (errno == EEXIST)
        fprintf(stderr, "gmlp-classify: %s exists; it is not overwritten (--resume continues it)\n", path);
    else
        fprintf(stderr, "gmlp-classify: cannot create %s: %s\n", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    return errno == EEXIST ? 2 : 0;
}

int app_output_open(const char *path, const app_writer *w, const app_run_id *id, int resume_run, int retry_errors,
                    app_done *done, app_out *out)
{
    *out = (app_out){.need_header = w->header_dims != NULL};
    *done = (app_done){0};
    if (!strcmp(path, "-")) {
        if (resume_run || w->side) {
            fprintf(stderr, "gmlp-classify: %s needs an --output file, not stdout\n", resume_run ? "--resume" : w->name);
            return 2;
        }
        out->f = stdout;
    } else {
        struct stat st;
        if (stat(path, &st) == 0) {
            if (resume_run) {
                int same = check_sidecar(path, id);
                return same == 1 ? app_resume(path, w, retry_errors, done, out) : same;
            }
            fprintf(stderr, "gmlp-classify: %s exists; it is not overwritten (--resume continues it)\n", path);
            return 2;
        }
        char *side = w->side ? app_writer_side_path(w, path) : NULL;
        int st1 = w->side && !side ? 0 : side ? create(side, "ab", &out->side) : 1;
        int st2 = st1 == 1 ? create(path, "wb", &out->f) : st1;
        if (st2 == 1 && !write_sidecar(path, id))
            st2 = 0;
        if (st2 != 1) {
            if (out->f)
                fclose(out->f);
            if (out->side)
                fclose(out->side);
            out->f = out->side = NULL;
            if (st1 == 1) /* the files are this run's */
                app_output_remove(path, w);
            free(side);
            return st2;
        }
        free(side);
    }
    if (w->header && !w->header_dims) {
        fputs(w->header, out->f);
        fflush(out->f);
    }
    return 1;
}

void app_output_remove(const char *path, const app_writer *w)
{
    char *side = sidecar_path(path), *beside = w->side ? app_writer_side_path(w, path) : NULL;
    unlink(path);
    if (side)
        unlink(side);
    if (beside)
        unlink(beside);
    free(side);
    free(beside);
}
