/* The one reader of the environment (DEVELOPERS: no other code in lib/ calls
 * getenv).  Each variable fills the option a caller left at its default:
 * GMLP_DEVICE, GMLP_GEMM, GMLP_CACHE_DIR (else XDG_CACHE_HOME, HOME, LOCALAPPDATA),
 * GMLP_LOG, GMLP_CL_OPTIONS, GMLP_DEVICE_MEMORY_LIMIT, GMLP_PRECISION
 * (the precision of models loaded with GMLP_PRECISION_AUTO) and
 * GMLP_COMMAND_BUFFERS (0: recorded forwards replay by plain enqueues even
 * where the device offers cl_khr_command_buffer), GMLP_LM_STEP (0: cached
 * LM decoding by the per-op kernels, not the fused step), GMLP_SAMPLE_DEVICE
 * (0: generation samples on the host, not the device), GMLP_FUSE (0: every
 * LayerNorm as a kernel of its own; 1: fused wherever the kernel can, whatever
 * the tables say; unset: as they say), GMLP_PACK (0: image models' linear
 * weights as the file stores them, out x in; 1: in x out on any device;
 * unset: as the tables say) and GMLP_GEMM_SPLIT
 * (tests and benches: every product of the library's kernel split along k
 * into that many parts, 1 none, whatever the tables say). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "ops/ops.h"

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

const char *gmlp_env_device(void)
{
    return env("GMLP_DEVICE");
}

gmlp_log_level gmlp_env_log_level(void)
{
    const char *v = env("GMLP_LOG");
    if (!v || !strcmp(v, "0"))
        return GMLP_LOG_NONE;
    static const char *const names[] = {"error", "info", "debug"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(v, names[i]))
            return (gmlp_log_level)(GMLP_LOG_ERROR + i);
    return GMLP_LOG_DEBUG; /* "1", "yes": everything */
}

/* bytes with an optional k, M or G (powers of 1024); 0 when malformed. */
static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long n = strtoull(s, &end, 10);
    int shift = *end == 'k' || *end == 'K' ? 10 : *end == 'm' || *end == 'M' ? 20 : *end == 'g' || *end == 'G' ? 30 : 0;
    if (end == s || *s == '-' || end[shift ? 1 : 0] || n > (SIZE_MAX >> shift))
        return 0;
    *out = (size_t)(n << shift);
    return 1;
}

static int copy(char *dst, size_t size, const char *src)
{
    return snprintf(dst, size, "%s", src) < (int)size;
}

/* *on = 1, or 0 where the variable name says 0, off, no or false (1, on,
 * yes and true also accepted; anything else refused). */
static gmlp_status env_switch(const char *name, int *on, gmlp_error *err)
{
    static const char *const off_words[] = {"0", "off", "no", "false"}, *const on_words[] = {"1", "on", "yes", "true"};
    const char *v = env(name);
    *on = 1;
    if (!v)
        return GMLP_OK;
    for (int i = 0; i < 4; i++) {
        if (!strcmp(v, off_words[i]))
            *on = 0;
        if (!strcmp(v, off_words[i]) || !strcmp(v, on_words[i]))
            return GMLP_OK;
    }
    return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT, "%s=%s: expected 0 or 1", name, v);
}

/* A choice the device tables make: *v = 0 where the variable says 0, 2
 * (GMLP_FUSE_ALL, GMLP_PACK_ALL: on whatever the tables say) where it says
 * 1, else 1 (as the tables say). */
static gmlp_status env_tables(const char *name, int *v, gmlp_error *err)
{
    GMLP_TRY(env_switch(name, v, err));
    if (env(name) && *v)
        *v = 2;
    return GMLP_OK;
}

gmlp_status gmlp_env_settings(const gmlp_context_options *opts, gmlp_settings *out, const char **device,
                              gmlp_error *err)
{
    memset(out, 0, sizeof *out);
    *device = opts->device ? opts->device : env("GMLP_DEVICE");
    const char *v;
    out->gemm = opts->gemm;
    out->gemm_forced = opts->gemm != GMLP_GEMM_AUTO || env("GMLP_GEMM");
    if (out->gemm == GMLP_GEMM_AUTO) {
        v = env("GMLP_GEMM");
        if (!v || !strcmp(v, "kernel"))
            out->gemm = GMLP_GEMM_KERNEL;
        else if (!strcmp(v, "clblast"))
            out->gemm = GMLP_GEMM_CLBLAST;
        else
            return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT, "GMLP_GEMM=%s: expected kernel or clblast", v);
    }
    if (!gmlp_gemm_backend_find(out->gemm)) /* unknown, or not in this build (CLBlast) */
        return gmlp_gemm_backend_refuse(err, opts->gemm == GMLP_GEMM_AUTO ? "GMLP_GEMM" : "gmlp_context_options.gemm",
                                        out->gemm);
    int ok = 1;
    if (opts->cache_dir)
        ok = copy(out->cache_dir, sizeof out->cache_dir, opts->cache_dir);
    else if ((v = env("GMLP_CACHE_DIR")))
        ok = copy(out->cache_dir, sizeof out->cache_dir, v);
    else if ((v = env("XDG_CACHE_HOME")))
        ok = snprintf(out->cache_dir, sizeof out->cache_dir, "%s/gmlp", v) < (int)sizeof out->cache_dir;
    else if ((v = env("HOME")))
        ok = snprintf(out->cache_dir, sizeof out->cache_dir, "%s/.cache/gmlp", v) < (int)sizeof out->cache_dir;
    else if ((v = env("LOCALAPPDATA"))) /* Windows, where HOME is seldom set */
        ok = snprintf(out->cache_dir, sizeof out->cache_dir, "%s/gmlp", v) < (int)sizeof out->cache_dir;
    if (!ok)
        out->cache_dir[0] = 0; /* a path too long to hold: no disk cache rather than a wrong one */
    v = opts->cl_options ? opts->cl_options : env("GMLP_CL_OPTIONS");
    if (v && !copy(out->cl_options, sizeof out->cl_options, v))
        return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT, "extra build options longer than %zu characters",
                         sizeof out->cl_options - 1);
    out->mem_limit = opts->device_memory_limit == SIZE_MAX ? 0 : opts->device_memory_limit;
    if (!opts->device_memory_limit && (v = env("GMLP_DEVICE_MEMORY_LIMIT")) && !parse_size(v, &out->mem_limit))
        return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT,
                         "GMLP_DEVICE_MEMORY_LIMIT=%s: expected a number of bytes, optionally with k, M or G", v);
    if ((int)opts->log_level < GMLP_LOG_AUTO || opts->log_level > GMLP_LOG_DEBUG)
        return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT, "gmlp_context_options.log_level: unknown level %d",
                         (int)opts->log_level);
    out->log.level = opts->log_level == GMLP_LOG_AUTO ? gmlp_env_log_level() : opts->log_level;
    out->log.cb = opts->log;
    out->log.user = opts->log_user;
    out->profiling = opts->profiling != 0;
    gmlp_precision mode = GMLP_PRECISION_AUTO;
    if ((v = env("GMLP_PRECISION")) && gmlp_precision_parse(v, &mode) != GMLP_OK)
        return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT, "GMLP_PRECISION=%s: expected fp32, tf32, fp16 or bf16", v);
    out->precision = mode;
    if ((v = env("GMLP_GEMM_SPLIT"))) {
        char *end;
        long parts = strtol(v, &end, 10);
        if (*end || parts < 1 || parts > GMLP_GEMM_SPLIT_MAX)
            return gmlp_fail(err, GMLP_ERR_INVALID_ARGUMENT, "GMLP_GEMM_SPLIT=%s: expected 1 to %d parts", v,
                             GMLP_GEMM_SPLIT_MAX);
        out->gemm_split = (int)parts;
    }
    GMLP_TRY(env_switch("GMLP_COMMAND_BUFFERS", &out->command_buffers, err));
    GMLP_TRY(env_switch("GMLP_LM_STEP", &out->lm_step, err));
    GMLP_TRY(env_switch("GMLP_ENGINES", &out->engines, err));
    GMLP_TRY(env_tables("GMLP_FUSE", &out->fuse, err)); /* 1: wherever the kernel has the halves */
    GMLP_TRY(env_tables("GMLP_PACK", &out->pack, err));
    return env_switch("GMLP_SAMPLE_DEVICE", &out->sample_device, err);
}
