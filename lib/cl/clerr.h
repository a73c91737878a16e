/* Names for OpenCL status codes, and the failure of an OpenCL call as a gmlp_error. */
#ifndef GMLP_CLERR_H
#define GMLP_CLERR_H

#include <CL/cl.h>

#include "core/error.h"

const char *gmlp_cl_error_name(cl_int err);

/* "CALL failed: NAME (code)", with out-of-memory codes mapped to
 * GMLP_ERR_DEVICE_MEMORY / GMLP_ERR_HOST_MEMORY, else GMLP_ERR_OPENCL. */
gmlp_status gmlp_fail_cl(gmlp_error *e, const char *call, cl_int code);

#endif
