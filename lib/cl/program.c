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

/* a rewritten program's key holds its rewrite's tag too */
static int cache_path(const char *dir, const char *src, const char *options, const gmlp_devinfo *dev,
                      const gmlp_program_rewrite *rw, char *buf, size_t size)
{
    const char *parts[] = {src, options, dev->platform_name, dev->name, dev->vendor, dev->version, dev->driver,
                           GMLP_VERSION_STRING, rw ? rw->tag : ""};
    return hashed_path(dir, parts, sizeof parts / sizeof *parts - !rw, ".clbin", buf, size);
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

/* A program from binary bin (len bytes) built with options, *e the first
 * error; after one the caller releases the program (a failed build's log
 * read first). */
static cl_program from_binary(gmlp_context *ctx, const unsigned char *bin, size_t len, const char *options,
                              cl_int *e)
{
    const unsigned char *bins[] = {bin};
    cl_int status = CL_SUCCESS;
    cl_program prog = clCreateProgramWithBinary(ctx->cl, 1, &ctx->dev.device, &len, bins, &status, e);
    if (*e == CL_SUCCESS && status != CL_SUCCESS)
        *e = status;
    if (*e == CL_SUCCESS)
        *e = build(prog, &ctx->dev, options);
    return prog;
}

static cl_program load_cached(gmlp_context *ctx, const char *path, const char *options,
                              const gmlp_program_rewrite *rw)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char magic[8];
    uint64_t len = 0;
    unsigned char *bin = NULL;
    cl_program prog = NULL;
    if (fread(magic, 1, 8, f) == 8 && !memcmp(magic, CACHE_MAGIC, 8) && fread(&len, sizeof len, 1, f) == 1 &&
        len > 0 && len < (1u << 30) && (bin = gmlp_malloc(len)) && fread(bin, 1, len, f) == len &&
        (!rw || rw->accepts((const char *)bin, len))) {
        cl_int e;
        prog = from_binary(ctx, bin, len, options, &e);
        if (e != CL_SUCCESS && prog)
            clReleaseProgram(prog), prog = NULL;
    }
    free(bin);
    fclose(f);
    gmlp_log(&ctx->set.log, GMLP_LOG_INFO, "kernel cache %s: %s", prog ? "hit" : "unusable", path);
    return prog;
}

/* prog's binary (*len bytes, malloc'd); NULL if it has none or out of memory */
static unsigned char *program_binary(cl_program prog, size_t *len)
{
    *len = 0;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof *len, len, NULL) != CL_SUCCESS || !*len)
        return NULL;
    unsigned char *bin = gmlp_malloc(*len);
    unsigned char *bins[] = {bin};
    if (bin && clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) != CL_SUCCESS) {
        free(bin);
        bin = NULL;
    }
    return bin;
}

static void store_cached(const unsigned char *bin, size_t len, const char *path)
{
    char tmp[1200];
    FILE *f = NULL;
    if (bin && snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()) < (int)sizeof tmp &&
        (f = fopen(tmp, "wb"))) {
        uint64_t l64 = len;
        int ok = fwrite(CACHE_MAGIC, 1, 8, f) == 8 && fwrite(&l64, sizeof l64, 1, f) == 1 &&
                 fwrite(bin, 1, len, f) == len;
        ok = (fclose(f) == 0) && ok;
        /* rename is atomic: concurrent processes never see half a file */
        if (!ok || gmlp_rename(tmp, path) != 0)
            remove(tmp);
    }
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

/* Whether the library's binary cache serves dev: not where the implementation
 * keeps compiled kernels in a cache of its own (GMLP_RUNTIME_OWN_CACHE):
 * ours would duplicate theirs, and where reading a program's binary costs a
 * compile, it doubles the first build.  PoCL (POCL_KERNEL_CACHE, on by
 * default; POCL_CACHE_DIR, else ~/.cache/pocl): CL_PROGRAM_BINARIES compiles
 * every kernel once more, for any work-group size (e2e's cold run: 122 CPU-s
 * with the library's cache, 52 without).  Intel's runtime, rusticl and GPU
 * drivers keep the library's. */
static int cache_serves(const gmlp_devinfo *dev)
{
    return !(gmlp_runtime_facts(dev) & GMLP_RUNTIME_OWN_CACHE);
}

/* prog (built from source) rewritten by rw and built again from the result, *bin (*len bytes) the rewritten
 * binary for the cache; prog released either way */
static gmlp_status rebuild_rewritten(gmlp_context *ctx, cl_program prog, const char *options,
                                     const gmlp_program_rewrite *rw, cl_program *out, char **bin, size_t *len)
{
    size_t got;
    unsigned char *built = program_binary(prog, &got);
    clReleaseProgram(prog);
    if (!built)
        return gmlp_fail(&ctx->err, GMLP_ERR_BUILD, "%s: no binary of the program to rewrite on '%s'", rw->tag,
                         ctx->dev.name);
    gmlp_status st = rw->rewrite(&ctx->err, (const char *)built, got, bin, len);
    free(built);
    if (st != GMLP_OK)
        return st;
    cl_int e;
    *out = from_binary(ctx, (const unsigned char *)*bin, *len, options, &e);
    if (e == CL_SUCCESS)
        return GMLP_OK;
    st = *out ? build_error(ctx, *out, options, e) : gmlp_fail_cl(&ctx->err, "clCreateProgramWithBinary", e);
    if (*out)
        clReleaseProgram(*out);
    *out = NULL;
    free(*bin);
    *bin = NULL;
    return st;
}

gmlp_status gmlp_program_build(gmlp_context *ctx, const char *file, const char *options, cl_program *out)
{
    return gmlp_program_build_rewritten(ctx, file, options, NULL, out);
}

gmlp_status gmlp_program_build_rewritten(gmlp_context *ctx, const char *file, const char *options,
                                         const gmlp_program_rewrite *rw, cl_program *out)
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
    int cacheable = serves && cache_path(ctx->set.cache_dir, src, opts, &ctx->dev, rw, path, sizeof path);
    cl_program prog = cacheable ? load_cached(ctx, path, opts, rw) : NULL;
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
    char *rewritten = NULL;
    size_t len = 0;
    if (rw) {
        GMLP_TRY(rebuild_rewritten(ctx, prog, opts, rw, &prog, &rewritten, &len));
        if (cacheable)
            store_cached((const unsigned char *)rewritten, len, path);
        free(rewritten);
    } else if (cacheable) {
        unsigned char *bin = program_binary(prog, &len);
        store_cached(bin, len, path);
        free(bin);
    }
    *out = prog;
    return GMLP_OK;
}
