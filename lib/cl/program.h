/* Builds the library's embedded kernels for a context's device, through an
 * on-disk cache of program binaries keyed by source, options, device, driver
 * and library version (except where the implementation caches compiled
 * kernels itself); any cache problem falls back to a build from source. */
#ifndef GMLP_PROGRAM_H
#define GMLP_PROGRAM_H

#include <CL/cl.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "gmlp.h"

typedef struct gmlp_context gmlp_context;

/* A rewrite of a program's binary as the implementation built it (NVIDIA's:
 * PTX text) into the binary of the program to build instead, for what
 * OpenCL C cannot say (an architecture's instructions spliced in by an op):
 * tag names the rewrite and its version in the cache key; accepts says
 * whether a cached binary is one it wrote (refused on load otherwise). */
typedef struct gmlp_program_rewrite {
    const char *tag;
    gmlp_status (*rewrite)(gmlp_error *err, const char *bin, size_t len, char **out, size_t *out_len);
    bool (*accepts)(const char *bin, size_t len);
} gmlp_program_rewrite;

/* The prelude, then file == NULL: every shared source (the context's shared
 * program), else the solo source of that name ("gemm.cl").  options: the
 * library's -D options; the context's extra build options are appended.  A
 * failure is GMLP_ERR_BUILD with the device's build log in ctx->err. */
gmlp_status gmlp_program_build(gmlp_context *ctx, const char *file, const char *options, cl_program *out);
/* The same, rw (not NULL) rewriting the built binary, then the program
 * built again from the rewritten one (clCreateProgramWithBinary: NVIDIA's
 * "program from PTX text"); cached rewritten. */
gmlp_status gmlp_program_build_rewritten(gmlp_context *ctx, const char *file, const char *options,
                                         const gmlp_program_rewrite *rw, cl_program *out);

/* The text gmlp_program_build compiles for file (NULL: the shared program),
 * malloc'd; "" when file names no solo source, NULL when out of memory. */
char *gmlp_program_source(const char *file);

/* A file of the cache directory for ctx's device, driver and library version
 * alone (tuning results): DIR/<hash>ext, the directory made if missing; 0
 * (buf unset) when the context has no cache directory. */
int gmlp_cache_device_file(const gmlp_context *ctx, const char *ext, char *buf, size_t size);

/* The same for the embedded kernel sources too (a matrix engine's
 * self-test verdicts: they hold for the kernel tested; a library built from
 * other sources under the same version must test again, never take a
 * stale "pass"). */
int gmlp_cache_kernels_file(const gmlp_context *ctx, const char *ext, char *buf, size_t size);

#endif
