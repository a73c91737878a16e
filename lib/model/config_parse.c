/* The values of __metadata__ as numbers and names: strict decimals, lists of
 * them, image and patch sizes, choices among names, label counts, and the
 * LayerNorm eps values over the architecture's defaults. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "model/arch.h"
#include "model/config.h"

int gmlp_parse_float(const char *s, float *out)
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
    *out = (float)v;
    return 1;
}

int gmlp_parse_floats(const char *s, float *out, int max)
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
        if (!gmlp_parse_float(buf, &out[n++]))
            return -1;
        if (!comma)
            return n;
        s = comma + 1;
    }
}

int gmlp_parse_size(const char *s, int hw[2])
{
    float v[2];
    int n = gmlp_parse_floats(s, v, 2);
    for (int k = 0; k < n; k++)
        if (!(v[k] >= 1 && v[k] <= GMLP_MAX_DIM && v[k] == floorf(v[k])))
            n = -1;
    if (n < 1)
        return 0;
    hw[0] = (int)v[0];
    hw[1] = (int)v[n - 1];
    return 1;
}

int gmlp_cfg_choice(const char *s, const char *const *names)
{
    for (int k = 0; names[k]; k++)
        if (!strcmp(s, names[k]))
            return k;
    return -1;
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
