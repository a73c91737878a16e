/* The OpenCL C sources embedded at build time (cl_kernels/embed.py). */
#ifndef GMLP_SOURCES_H
#define GMLP_SOURCES_H

#include <stddef.h>

typedef struct gmlp_cl_source {
    const char *name; /* file name, e.g. "layernorm.cl" */
    const char *text; /* NUL-terminated */
    int length;
    int solo; /* built alone in variants (gmlp_program_build), not into the shared program */
} gmlp_cl_source;

/* Terminated by an entry with name == NULL. */
extern const gmlp_cl_source gmlp_cl_sources[];

#endif
