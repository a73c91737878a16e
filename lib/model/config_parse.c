/* The values of __metadata__ as numbers and names: strict decimals, lists of
 * them, image and patch sizes, choices among names, label counts, and the
 * LayerNorm eps values over the architecture's defaults. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "model/arch.h"
#include "model/config.h"

int gmlp_parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v) || fabs(v) > 1e30)
        return 0;
    while (*end == ' ')
        end++;
    if (*end)
        return 0;
    *out = v;
    return 1;
}

int gmlp_parse_float(const char *s, float *out)
{
    double v;
    if (!gmlp_parse_double(s, &v))
        return 0;
    *out = (float)v;
    return 1;
}

int gmlp_parse_doubles(const char *s, double *out, int max)
{
    int n = 0;
    char buf[64];
    while (1) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        if (n == max || len == 0 || len >= sizeof buf)
            return -1;
        memcpy(buf, s, len);
        buf[len] = 0;
        if (!gmlp_parse_double(buf, &out[n++]))
            return -1;
        if (!comma)
            return n;
        s = comma + 1;
    }
}

const char *gmlp_parse_digits(const char *s, long max, long *out)
{
    long v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9' && v <= max; p++)
        v = v * 10 + (*p - '0');
    if (p == s || v > max)
        return NULL;
    *out = v;
    return p;
}

/* A positive integer up to GMLP_MAX_DIM, digits alone; past it, or NULL. */
static const char *parse_dim(const char *s, int *out)
{
    long v;
    if (!(s = gmlp_parse_digits(s, GMLP_MAX_DIM, &v)) || v < 1)
        return NULL;
    *out = (int)v;
    return s;
}

int gmlp_parse_size(const char *s, int hw[2])
{
    if (!(s = parse_dim(s, &hw[0])))
        return 0;
    hw[1] = hw[0];
    if (*s == ',' && !(s = parse_dim(s + 1, &hw[1])))
        return 0;
    return *s == 0;
}

int gmlp_cfg_choice(const char *s, const char *const *names)
{
    for (int k = 0; names[k]; k++)
        if (!strcmp(s, names[k]))
            return k;
    return -1;
}

const char *gmlp_cfg_choices(const char *const *names, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (int k = 0; names[k] && len < size; k++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", !k ? "" : names[k + 1] ? ", " : " or ", names[k]);
    return buf;
}

int gmlp_cfg_count_labels(const char *s)
{
    int n = *s ? 1 : 0;
    for (const char *p = s; *p; p++)
        n += *p == '\n' && p[1]; /* a trailing newline adds no label */
    return n;
}

gmlp_status gmlp_cfg_parse_eps(const gmlp_st_file *f, gmlp_config *cfg, gmlp_error *err)
{
    static const char *const eps_keys[] = {"gmlp.norm_eps", "gmlp.sgu_eps"};
    cfg->norm_eps = gmlp_arch_of(cfg)->norm_eps;
    cfg->sgu_eps = gmlp_arch_of(cfg)->sgu_eps;
    float *eps[] = {&cfg->norm_eps, &cfg->sgu_eps};
    const char *s;
    for (int i = 0; i < 2; i++)
        if ((s = gmlp_st_meta(f, eps_keys[i])) && !(gmlp_parse_float(s, eps[i]) && *eps[i] > 0 && *eps[i] < 1))
            return gmlp_fail(err, GMLP_ERR_FORMAT, "metadata %s '%s' must be a decimal in (0, 1)",
                             eps_keys[i], s);
    return GMLP_OK;
}
