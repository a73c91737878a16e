/* Names for OpenCL and CLBlast status codes, for error messages. */
#ifndef GMLP_CLERR_H
#define GMLP_CLERR_H

#include <CL/cl.h>

const char *gmlp_cl_error_name(cl_int err);
const char *gmlp_clblast_error_name(int err);

#endif
