#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

#define BAR_WIDTH 20

/* RFC 4180: quoted (quotes doubled) when it holds a comma, quote or line break. */
static void csv_field(app_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        app_buf_add(b, s, strlen(s));
        return;
    }
    app_buf_add(b, "\"", 1);
    for (const char *q; (q = strchr(s, '"')); s = q + 1)
        app_buf_add(b, s, (size_t)(q - s + 1)), app_buf_add(b, "\"", 1);
    app_buf_add(b, s, strlen(s));
    app_buf_add(b, "\"", 1);
}

static json_t *jstr(const char *s)
{
    return app_json_bytes(s, strlen(s));
}

/* One JSON object on one line; probabilities as %.9g. */
static void json_line(app_buf *b, json_t *row)
{
    char *s = row ? json_dumps(row, JSON_REAL_PRECISION(9)) : NULL;
    if (!s)
        b->oom = 1;
    else
        app_buf_printf(b, "%s\n", s);
    free(s);
    json_decref(row);
}

static void text_line(app_buf *b, double p, const char *name)
{
    char bar[BAR_WIDTH + 1];
    int n = (int)lround(p * BAR_WIDTH);
    memset(bar, '#', (size_t)n);
    memset(bar + n, ' ', (size_t)(BAR_WIDTH - n));
    bar[BAR_WIDTH] = 0;
    app_buf_printf(b, "  %6.2f%%  %s  %s\n", 100 * p, bar, name);
}

void app_rows_result(app_buf *b, app_format f, const char *file, int k, const int32_t *index, const float *prob,
                     const char *const *labels)
{
    char num[32];
    json_t *top = NULL;
    if (f == APP_FORMAT_TEXT)
        app_buf_printf(b, "%s\n", file);
    else if (f != APP_FORMAT_CSV && !(top = json_array()))
        b->oom = 1; /* a row lost: the batch fails */
    for (int i = 0; i < k; i++) {
        if (f == APP_FORMAT_TEXT) {
            text_line(b, prob[i], labels[i]);
        } else if (f == APP_FORMAT_CSV) {
            csv_field(b, file);
            app_buf_printf(b, ",%d,%d,", i + 1, (int)index[i]);
            csv_field(b, labels[i]);
            app_buf_printf(b, ",%s,\n", app_format_prob(prob[i], num));
        } else {
            if (json_array_append_new(top, json_pack("{s:i, s:o, s:f}", "index", (int)index[i], "label",
                                                     jstr(labels[i]), "prob", (double)prob[i])))
                b->oom = 1;
        }
    }
    if (top)
        json_line(b, json_pack("{s:o, s:o}", "file", jstr(file), "top", top));
}

void app_rows_error(app_buf *b, app_format f, const char *file, const char *error)
{
    if (f == APP_FORMAT_CSV) {
        csv_field(b, file);
        app_buf_add(b, ",0,,,,", 6);
        csv_field(b, error);
        app_buf_add(b, "\n", 1);
    } else if (f != APP_FORMAT_TEXT) {
        json_line(b, json_pack("{s:o, s:o}", "file", jstr(file), "error", jstr(error)));
    }
}

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
    json_t *j = json_pack("{s:o, s:i, s:s}", "model", jstr(id->model), "top", id->top, "precision", id->precision);
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

int app_output_open(const char *path, app_format f, const app_run_id *id, int resume_run, int retry_errors,
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
                return same == 1 ? app_resume(path, f, retry_errors, done, out) : same;
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
    if (f == APP_FORMAT_CSV) {
        fputs(APP_CSV_HEADER, *out);
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
