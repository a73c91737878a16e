/* gmlp_cl.h must be self-contained too (it brings CL/cl.h and gmlp.h). */
#include "gmlp_cl.h"

int main(void)
{
    gmlp_context *ctx;
    return gmlp_context_create_cl(NULL, NULL, NULL, NULL, &ctx) == GMLP_ERR_INVALID_ARGUMENT && !ctx ? 0 : 1;
}
