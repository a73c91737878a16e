#include "ops/args.h"

#include <stdarg.h>

gmlp_status gmlp_set_args(gmlp_context *ctx, cl_kernel k, ...)
{
    va_list ap;
    va_start(ap, k);
    cl_uint i = 0;
    cl_int e = CL_SUCCESS;
    for (int kind; e == CL_SUCCESS && (kind = va_arg(ap, int)) != A_END; i++) {
        if (kind == A_MEM) {
            cl_mem m = va_arg(ap, cl_mem);
            e = clSetKernelArg(k, i, sizeof m, &m);
        } else if (kind == A_INT) {
            cl_int v = va_arg(ap, int);
            e = clSetKernelArg(k, i, sizeof v, &v);
        } else if (kind == A_ULONG) {
            cl_ulong v = va_arg(ap, cl_ulong);
            e = clSetKernelArg(k, i, sizeof v, &v);
        } else {
            cl_float v = (cl_float)va_arg(ap, double);
            e = clSetKernelArg(k, i, sizeof v, &v);
        }
    }
    va_end(ap);
    return e == CL_SUCCESS ? GMLP_OK : gmlp_ctx_cl_fail(ctx, "clSetKernelArg", e);
}
