#include "program.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cl/clerr.h"
#include "cl/sources.h"
#include "core/error.h"

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

/* solo == NULL: the shared program's sources, else the one named. */
static int selected(const gmlp_cl_source *s, const char *solo)
{
    return solo ? s->solo && !strcmp(s->name, solo) : !s->solo;
}

static char *concat_sources(const char *solo)
{
    size_t total = 1;
    for (const gmlp_cl_source *s = gmlp_cl_sources; s->name; s++)
        if (selected(s, solo))
            total += (size_t)s->length + 1;
    char *src = malloc(total), *p = src;
    if (!src)
        return NULL;
    for (const gmlp_cl_source *s = gmlp_cl_sources; s->name; s++) {
        if (!selected(s, solo))
            continue;
        memcpy(p, s->text, (size_t)s->length);
        p += s->length;
        *p++ = '\n';
    }
    *p = 0;
    return src;
}

int gmlp_cache_dir(char *buf, size_t size)
{
    const char *dir = getenv("GMLP_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (dir && *dir)
        n = snprintf(buf, size, "%s", dir);
    else if (xdg && *xdg)
        n = snprintf(buf, size, "%s/gmlp", xdg);
    else if (home && *home)
        n = snprintf(buf, size, "%s/.cache/gmlp", home);
    else
        return 0;
    return n > 0 && (size_t)n < size;
}

/* mkdir -p; failures surface later as a cache miss. */
static void make_dirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            mkdir(path, 0755);
            *p = '/';
        }
    }
    mkdir(path, 0755);
}

static int cache_path(const char *src, const char *options, const gmlp_devinfo *dev, char *buf, size_t size)
{
    char dir[1024];
    if (!gmlp_cache_dir(dir, sizeof dir))
        return 0;
    const char *parts[] = {src, options, dev->platform_name, dev->name, dev->vendor, dev->version, dev->driver,
                           gmlp_version()};
    uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x84222325cbf29ce4ull;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        size_t n = strlen(parts[i]) + 1; /* the NUL separates fields */
        h1 = fnv1a(h1, parts[i], n);
        h2 = fnv1a(h2, parts[i], n);
    }
    make_dirs(dir);
    int n = snprintf(buf, size, "%s/%016llx%016llx.clbin", dir, (unsigned long long)h1, (unsigned long long)h2);
    return n > 0 && (size_t)n < size;
}

static cl_int build(cl_program prog, const gmlp_devinfo *dev, const char *options)
{
    return clBuildProgram(prog, 1, &dev->device, options, NULL, NULL);
}

static cl_program load_cached(cl_context ctx, const gmlp_devinfo *dev, const char *path, const char *options)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char magic[8];
    uint64_t len = 0;
    unsigned char *bin = NULL;
    cl_program prog = NULL;
    if (fread(magic, 1, 8, f) == 8 && !memcmp(magic, CACHE_MAGIC, 8) && fread(&len, sizeof len, 1, f) == 1 &&
        len > 0 && len < (1u << 30) && (bin = malloc(len)) && fread(bin, 1, len, f) == len) {
        size_t blen = len;
        const unsigned char *bins[] = {bin};
        cl_int e, status;
        prog = clCreateProgramWithBinary(ctx, 1, &dev->device, &blen, bins, &status, &e);
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
    gmlp_log("kernel cache %s: %s", prog ? "hit" : "unusable", path);
    return prog;
}

static void store_cached(cl_program prog, const char *path)
{
    size_t len = 0;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof len, &len, NULL) != CL_SUCCESS || !len)
        return;
    unsigned char *bin = malloc(len);
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
        if (!ok || rename(tmp, path) != 0)
            remove(tmp);
    }
    free(bin);
}

static gmlp_status build_error(cl_program prog, const gmlp_devinfo *dev, const char *options, cl_int e, char *err,
                               size_t errsize)
{
    int n = snprintf(err, errsize, "clBuildProgram failed (%s) on '%s' with options '%s'; build log:\n",
                     gmlp_cl_error_name(e), dev->name, options);
    if (n > 0 && (size_t)n < errsize) {
        size_t room = errsize - (size_t)n, got = 0;
        if (clGetProgramBuildInfo(prog, dev->device, CL_PROGRAM_BUILD_LOG, room, err + n, &got) != CL_SUCCESS) {
            /* log larger than the buffer: fetch it whole, keep the start */
            char *log = got ? malloc(got) : NULL;
            if (log && clGetProgramBuildInfo(prog, dev->device, CL_PROGRAM_BUILD_LOG, got, log, NULL) == CL_SUCCESS)
                snprintf(err + n, room, "%s", log);
            free(log);
        }
        err[errsize - 1] = 0;
    }
    gmlp_log("%s", err);
    return GMLP_ERR_BUILD;
}

gmlp_status gmlp_program_build(cl_context ctx, const gmlp_devinfo *dev, const char *solo, const char *options,
                               cl_program *out, char *err, size_t errsize)
{
    *out = NULL;
    char opts[2048];
    const char *extra = getenv("GMLP_CL_OPTIONS");
    snprintf(opts, sizeof opts, "%s %s", options, extra ? extra : "");
    char *src = concat_sources(solo);
    if (!src)
        return gmlp_errf(err, errsize, GMLP_ERR_HOST_MEMORY, "out of host memory building kernels");
    if (!*src) {
        free(src);
        return gmlp_errf(err, errsize, GMLP_ERR_BUILD, "no embedded kernel source '%s'", solo ? solo : "");
    }
    char path[1100];
    int cacheable = cache_path(src, opts, dev, path, sizeof path);
    cl_program prog = cacheable ? load_cached(ctx, dev, path, opts) : NULL;
    if (prog) {
        free(src);
        *out = prog;
        return GMLP_OK;
    }
    cl_int e;
    const char *srcs[] = {src};
    prog = clCreateProgramWithSource(ctx, 1, srcs, NULL, &e);
    free(src);
    if (e != CL_SUCCESS)
        return gmlp_errf(err, errsize, GMLP_ERR_OPENCL, "clCreateProgramWithSource failed: %s",
                         gmlp_cl_error_name(e));
    e = build(prog, dev, opts);
    if (e != CL_SUCCESS) {
        gmlp_status st = build_error(prog, dev, opts, e, err, errsize);
        clReleaseProgram(prog);
        return st;
    }
    if (cacheable)
        store_cached(prog, path);
    *out = prog;
    return GMLP_OK;
}
