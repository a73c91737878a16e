/* The OpenCL C sources embedded at build time (cl_kernels/cl2c.py). */
#ifndef GMLP_SOURCES_H
#define GMLP_SOURCES_H

#include <stddef.h>

typedef enum gmlp_src_kind {
    GMLP_SRC_PRELUDE, /* in front of every program: kernel_abi.h, common.cl */
    GMLP_SRC_SHARED,  /* built together into the context's shared program */
    GMLP_SRC_SOLO,    /* built alone, one program per set of -D options */
} gmlp_src_kind;

typedef struct gmlp_cl_source {
    const char *name; /* file name, e.g. "layernorm.cl" */
    const char *text; /* NUL-terminated */
    int length;
    gmlp_src_kind kind;
} gmlp_cl_source;

/* Terminated by an entry with name == NULL. */
extern const gmlp_cl_source gmlp_cl_sources[];
/* All of them hashed (FNV-1a, 64-bit, in hex), at build time. */
extern const char gmlp_cl_sources_digest[];

#endif
