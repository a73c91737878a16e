/* The GEMM backends the table in gemm_backend.c lists, each defined beside
 * its code.  Only gemm_backend.c names them; everything else finds them
 * there (gmlp_gemm_backend_find, ops.h). */
#ifndef GMLP_GEMM_BACKEND_H
#define GMLP_GEMM_BACKEND_H

#include "ops/ops.h"

/* CLBlast then the epilogue kernel (gemm_clblast.c; built with -Dclblast). */
extern const gmlp_gemm_backend_i gmlp_gemm_backend_clblast;

#endif
