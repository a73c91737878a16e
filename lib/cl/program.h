/* Builds the library's embedded kernels for one device, through an on-disk
 * cache of program binaries. */
#ifndef GMLP_PROGRAM_H
#define GMLP_PROGRAM_H

#include <CL/cl.h>

#include "cl/device.h"

/* solo: NULL for the shared program (every source not marked solo), else
 * the name of one solo source ("gemm.cl").  options: compiler options chosen
 * by the library; $GMLP_CL_OPTIONS is appended.  On a build failure the
 * message carries the device's build log. */
gmlp_status gmlp_program_build(cl_context ctx, const gmlp_devinfo *dev, const char *solo, const char *options,
                               cl_program *out, char *err, size_t errsize);

/* The cache folder ($GMLP_CACHE_DIR, $XDG_CACHE_HOME/gmlp or ~/.cache/gmlp)
 * into buf; 0 if none can be named. */
int gmlp_cache_dir(char *buf, size_t size);

#endif
