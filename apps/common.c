#include "common.h"

#include "gmlp.h"

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "portable.h"

#ifndef GMLP_DATADIR
#define GMLP_DATADIR "/usr/local/share/gmlp-cl"
#endif

const char *app_default_model(const char *env, const char *file)
{
    const char *e = getenv(env);
    if (e && *e)
        return e;
    /* beside the program: an installed tree (bin/../share/gmlp-cl/models, even
     * when moved elsewhere) or the build tree (apps/../models); no source path
     * is compiled in */
    static char path[4096];
    char exe[4096];
    if (app_exe_dir(exe, sizeof exe)) {
        const char *rel[] = {"../share/gmlp-cl/models", "../models"};
        for (int i = 0; i < 2; i++)
            if (snprintf(path, sizeof path, "%s/%s/%s", exe, rel[i], file) < (int)sizeof path &&
                access(path, R_OK) == 0)
                return path;
    }
    snprintf(path, sizeof path, "%s/models/%s", GMLP_DATADIR, file);
    return path;
}

int app_parse_numbers(const char *s, double *v, int max)
{
    for (int n = 0; n < max;) {
        char *end;
        errno = 0;
        v[n++] = strtod(s, &end);
        if (end == s || errno || !isfinite(v[n - 1]))
            return 0;
        if (*end != ',')
            return *end ? 0 : n;
        s = end + 1;
    }
    return 0;
}

int app_parse_int(const char *s, long long lo, long long hi, long long *out)
{
    double v;
    if (app_parse_numbers(s, &v, 1) != 1 || v != floor(v) || v < (double)lo || v > (double)hi)
        return 0;
    *out = (long long)v;
    return 1;
}

json_t *app_json_bytes(const char *s, size_t n)
{
    json_t *j = json_stringn(s, n);
    if (j)
        return j;
    char *u = malloc(2 * n + 1), *p = u;
    for (size_t i = 0; u && i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            *p++ = (char)c;
        } else {
            *p++ = (char)(0xC0 | c >> 6);
            *p++ = (char)(0x80 | (c & 0x3F));
        }
    }
    j = u ? json_stringn(u, (size_t)(p - u)) : NULL;
    free(u);
    return j;
}

void app_print_version(const char *program)
{
    cl_uint platforms = 0;
    if (clGetPlatformIDs(0, NULL, &platforms) != CL_SUCCESS)
        platforms = 0; /* no ICD loader configuration, or no platform: still a version */
    printf("%s %s\nlibgmlp %s, %u OpenCL platform%s\n", program, GMLP_VERSION_STRING, gmlp_version(),
           (unsigned)platforms, platforms == 1 ? "" : "s");
}

const char *app_format_prob(float p, char *buf)
{
    snprintf(buf, 32, "%.9g", (double)p);
    return buf;
}

int app_bad_value(const char *program, const char *option, const char *value, const char *expected)
{
    fprintf(stderr, "%s: invalid value '%s' for %s: expected %s\n", program, value, option, expected);
    return 0;
}

int app_parse_precision(const char *program, const char *arg, gmlp_precision *mode)
{
    if (gmlp_precision_parse(arg, mode) == GMLP_OK && *mode != GMLP_PRECISION_AUTO)
        return 1;
    return app_bad_value(program, "--precision", arg, "fp32, tf32, fp16 or bf16");
}

gmlp_precision app_precision_default(void)
{
    gmlp_precision mode = GMLP_PRECISION_AUTO;
    const char *env = getenv("GMLP_PRECISION");
    if (env)
        gmlp_precision_parse(env, &mode); /* a bad one leaves mode as it was */
    return mode == GMLP_PRECISION_AUTO ? GMLP_PRECISION_FP32 : mode;
}

int app_model_precision(const gmlp_model *model, const char **mode, char *engine, size_t size)
{
    gmlp_precision m;
    if (gmlp_model_precision(model, &m, engine, size) != GMLP_OK)
        return 0;
    *mode = gmlp_precision_name(m);
    return 1;
}

const char *const app_interpolations[6] = {
    [GMLP_INTERP_BICUBIC] = "bicubic", [GMLP_INTERP_BILINEAR] = "bilinear", [GMLP_INTERP_NEAREST] = "nearest",
    [GMLP_INTERP_BOX] = "box",         [GMLP_INTERP_HAMMING] = "hamming",   [GMLP_INTERP_LANCZOS] = "lanczos",
};
const char *const app_crop_modes[3] = {
    [GMLP_CROP_CENTER] = "center", [GMLP_CROP_SQUASH] = "squash", [GMLP_CROP_BORDER] = "border"};
