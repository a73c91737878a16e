#include "program.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cl/clerr.h"
#include "cl/context.h"
#include "cl/sources.h"
#include "gmlp_version.h"
#include "core/alloc.h"
#include "core/portable.h"

#define CACHE_MAGIC "GMLPBIN1"

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* The prelude, then file == NULL: every shared source, else the solo one named. */
static int selected(const gmlp_cl_source *s, const char *file)
{
    return s->kind == GMLP_SRC_PRELUDE || (file ? s->kind == GMLP_SRC_SOLO && !strcmp(s->name, file)
                                                : s->kind == GMLP_SRC_SHARED);
}

char *gmlp_program_source(const char *file)
{
    size_t total = 1;
    int found = !file;
    for (const gmlp_cl_source *s = gmlp_cl_sources; s->name; s++)
        if (selected(s, file)) {
            total += (size_t)s->length;
            found |= s->kind == GMLP_SRC_SOLO;
        }
    char *src = gmlp_malloc(found ? total : 1), *p = src;
    if (!src || !found) {
        if (src)
            *src = 0;
        return src;
    }
    for (const gmlp_cl_source *s = gmlp_cl_sources; s->name; s++)
        if (selected(s, file)) {
            memcpy(p, s->text, (size_t)s->length);
            p += s->length;
        }
    *p = 0;
    return src;
}

/* mkdir -p; failures surface later as a cache miss. */
static void make_dirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            gmlp_mkdir(path);
            *p = '/';
        }
    }
    gmlp_mkdir(path);
}

/* dir/<128-bit hash of parts><ext>, dir made if missing; 0 when there is
 * no cache directory or the path is too long. */
static int hashed_path(const char *dir, const char *const *parts, size_t n_parts, const char *ext, char *buf,
                       size_t size)
{
    if (!*dir)
        return 0;
    uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x84222325cbf29ce4ull;
    for (size_t i = 0; i < n_parts; i++) {
        size_t n = strlen(parts[i]) + 1; /* the NUL separates fields */
        h1 = fnv1a(h1, parts[i], n);
        h2 = fnv1a(h2, parts[i], n);
    }
    char made[1024];
    snprintf(made, sizeof made, "%s", dir);
    make_dirs(made);
    int n = snprintf(buf, size, "%s/%016llx%016llx%s", dir, (unsigned long long)h1, (unsigned long long)h2, ext);
    return n > 0 && (size_t)n < size;
}

static int cache_path(const char *dir, const char *src, const char *options, const gmlp_devinfo *dev, char *buf,
                      size_t size)
{
    const char *parts[] = {src, options, dev->platform_name, dev->name, dev->vendor, dev->version, dev->driver,
                           GMLP_VERSION_STRING};
    return hashed_path(dir, parts, sizeof parts / sizeof *parts, ".clbin", buf, size);
}

/* ctx's device file, of these kernel sources too where digest is set */
static int device_file(const gmlp_context *ctx, const char *digest, const char *ext, char *buf, size_t size)
{
    const gmlp_devinfo *dev = &ctx->dev;
    const char *parts[] = {dev->platform_name, dev->name, dev->vendor, dev->version, dev->driver, GMLP_VERSION_STRING,
                           digest};
    return hashed_path(ctx->set.cache_dir, parts, sizeof parts / sizeof *parts - !digest, ext, buf, size);
}

int gmlp_cache_device_file(const gmlp_context *ctx, const char *ext, char *buf, size_t size)
{
    return device_file(ctx, NULL, ext, buf, size);
}

int gmlp_cache_kernels_file(const gmlp_context *ctx, const char *ext, char *buf, size_t size)
{
    return device_file(ctx, gmlp_cl_sources_digest, ext, buf, size);
}

static cl_int build(cl_program prog, const gmlp_devinfo *dev, const char *options)
{
    return clBuildProgram(prog, 1, &dev->device, options, NULL, NULL);
}

static cl_program load_cached(gmlp_context *ctx, const char *path, const char *options)
{
    const gmlp_devinfo *dev = &ctx->dev;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char magic[8];
    uint64_t len = 0;
    unsigned char *bin = NULL;
    cl_program prog = NULL;
    if (fread(magic, 1, 8, f) == 8 && !memcmp(magic, CACHE_MAGIC, 8) && fread(&len, sizeof len, 1, f) == 1 &&
        len > 0 && len < (1u << 30) && (bin = gmlp_malloc(len)) && fread(bin, 1, len, f) == len) {
        size_t blen = len;
        const unsigned char *bins[] = {bin};
        cl_int e, status;
        prog = clCreateProgramWithBinary(ctx->cl, 1, &dev->device, &blen, bins, &status, &e);
        if (e != CL_SUCCESS || status != CL_SUCCESS) {
            if (prog)
                clReleaseProgram(prog);
            prog = NULL;
        } else if (build(prog, dev, options) != CL_SUCCESS) {
            clReleaseProgram(prog);
            prog = NULL;
        }
    }
    free(bin);
    fclose(f);
    gmlp_log(&ctx->set.log, GMLP_LOG_INFO, "kernel cache %s: %s", prog ? "hit" : "unusable", path);
    return prog;
}

static void store_cached(cl_program prog, const char *path)
{
    size_t len = 0;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof len, &len, NULL) != CL_SUCCESS || !len)
        return;
    unsigned char *bin = gmlp_malloc(len);
    if (!bin)
        return;
    unsigned char *bins[] = {bin};
    char tmp[1200];
    FILE *f = NULL;
    if (snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()) < (int)sizeof tmp &&
        clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) == CL_SUCCESS &&
        (f = fopen(tmp, "wb"))) {
        uint64_t l64 = len;
        int ok = fwrite(CACHE_MAGIC, 1, 8, f) == 8 && fwrite(&l64, sizeof l64, 1, f) == 1 &&
                 fwrite(bin, 1, len, f) == len;
        ok = (fclose(f) == 0) && ok;
        /* rename is atomic: concurrent processes never see half a file */
        if (!ok || gmlp_rename(tmp, path) != 0)
            remove(tmp);
    }
    free(bin);
}

static gmlp_status build_error(gmlp_context *ctx, cl_program prog, const char *options, cl_int e)
{
    char *log = NULL;
    size_t got = 0;
    if (clGetProgramBuildInfo(prog, ctx->dev.device, CL_PROGRAM_BUILD_LOG, 0, NULL, &got) == CL_SUCCESS && got &&
        (log = gmlp_malloc(got)) &&
        clGetProgramBuildInfo(prog, ctx->dev.device, CL_PROGRAM_BUILD_LOG, got, log, NULL) != CL_SUCCESS) {
        free(log);
        log = NULL;
    }
    /* the message keeps the start of a long log */
    gmlp_status st = gmlp_fail(&ctx->err, GMLP_ERR_BUILD, "clBuildProgram failed (%s, %d) on '%s' with options '%s'; "
                               "build log:\n%s", gmlp_cl_error_name(e), (int)e, ctx->dev.name, options, log ? log : "");
    free(log);
    return st;
}

/* The implementations that keep compiled kernels in a disk cache of their own,
 * by CL_PLATFORM_NAME: the library's binary cache would duplicate theirs, and
 * where reading a program's binary costs a compile, it doubles the first
 * build.  PoCL (POCL_KERNEL_CACHE, on by default; POCL_CACHE_DIR, else
 * ~/.cache/pocl): CL_PROGRAM_BINARIES compiles every kernel once more, for
 * any work-group size (e2e's cold run: 122 CPU-s with the library's cache,
 * 52 without).  Intel's runtime, rusticl and GPU drivers keep the library's. */
static const char *const self_caching[] = {"Portable Computing Language"};

/* Whether the library's binary cache serves dev. */
static int cache_serves(const gmlp_devinfo *dev)
{
    for (size_t i = 0; i < sizeof self_caching / sizeof *self_caching; i++)
        if (!strcmp(dev->platform_name, self_caching[i]))
            return 0;
    return 1;
}

gmlp_status gmlp_program_build(gmlp_context *ctx, const char *file, const char *options, cl_program *out)
{
    *out = NULL;
    char opts[2048];
    snprintf(opts, sizeof opts, "-cl-std=CL1.2 %s %s", options, ctx->set.cl_options);
    char *src = gmlp_program_source(file);
    if (!src)
        return gmlp_fail(&ctx->err, GMLP_ERR_HOST_MEMORY, "out of host memory building kernels");
    if (!*src) {
        free(src);
        return gmlp_fail(&ctx->err, GMLP_ERR_BUILD, "no embedded kernel source '%s'", file ? file : "");
    }
    char path[1100];
    int serves = cache_serves(&ctx->dev);
    if (!serves && *ctx->set.cache_dir)
        gmlp_log(&ctx->set.log, GMLP_LOG_INFO, "kernel cache: %s's own (it caches compiled kernels)",
                 ctx->dev.platform_name);
    int cacheable = serves && cache_path(ctx->set.cache_dir, src, opts, &ctx->dev, path, sizeof path);
    cl_program prog = cacheable ? load_cached(ctx, path, opts) : NULL;
    if (prog) {
        free(src);
        *out = prog;
        return GMLP_OK;
    }
    cl_int e;
    const char *srcs[] = {src};
    prog = clCreateProgramWithSource(ctx->cl, 1, srcs, NULL, &e);
    free(src);
    if (e != CL_SUCCESS)
        return gmlp_fail_cl(&ctx->err, "clCreateProgramWithSource", e);
    e = build(prog, &ctx->dev, opts);
    if (e != CL_SUCCESS) {
        gmlp_status st = build_error(ctx, prog, opts, e);
        clReleaseProgram(prog);
        return st;
    }
    if (cacheable)
        store_cached(prog, path);
    *out = prog;
    return GMLP_OK;
}
