#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

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
    json_t *j = json_pack("{s:o, s:i, s:s}", "model", app_json_bytes(id->model, strlen(id->model)), "top", id->top, "precision", id->precision);
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
    int ok = 2;
    if (!model)
        fprintf(stderr,
                "gmlp-classify: --resume: cannot tell which model and --top wrote %s (%s is missing or unreadable)\n",
                path, side ? side : "its run file");
    else if (strcmp(model, id->model))
        fprintf(stderr, "gmlp-classify: --resume: %s was written with the model %s, not %s\n", path, model, id->model);
    else if (top != id->top)
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

int app_output_open(const char *path, const app_writer *w, const app_run_id *id, int resume_run, int retry_errors,
                    app_done *done, FILE **out)
{
    *out = NULL;
    *done = (app_done){0};
    if (!strcmp(path, "-")) {
        if (resume_run) {
            fprintf(stderr, "gmlp-classify: --resume needs an --output file, not stdout\n");
            return 2;
        }
        *out = stdout;
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
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd < 0 || !(*out = fdopen(fd, "wb"))) {
            fprintf(stderr, "gmlp-classify: cannot create %s: %s\n", path, strerror(errno));
            if (fd >= 0)
                close(fd);
            return 0;
        }
        if (!write_sidecar(path, id)) {
            fclose(*out);
            *out = NULL;
            app_output_remove(path);
            return 0;
        }
    }
    if (w->header) {
        fputs(w->header, *out);
        fflush(*out);
    }
    return 1;
}

void app_output_remove(const char *path)
{
    char *side = sidecar_path(path);
    unlink(path);
    if (side)
        unlink(side);
    free(side);
}
