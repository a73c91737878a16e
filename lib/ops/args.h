/* Kernel argument binding shared by the op wrappers. */
#ifndef GMLP_ARGS_H
#define GMLP_ARGS_H

#include "cl/context.h"

/* Argument kinds for gmlp_set_args: each vararg is preceded by its kind;
 * A_ULONG takes a cl_ulong. */
enum { A_MEM, A_INT, A_FLOAT, A_ULONG, A_END };

/* Sets k's arguments in order from (kind, value) pairs ending with A_END. */
gmlp_status gmlp_set_args(gmlp_context *ctx, cl_kernel k, ...);

#endif
