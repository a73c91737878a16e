#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char thread_error[GMLP_ERRMSG_SIZE] = "no error";

gmlp_status gmlp_verrf(char *buf, size_t size, gmlp_status st, const char *fmt, va_list ap)
{
    if (buf && size)
        vsnprintf(buf, size, fmt, ap);
    return st;
}

gmlp_status gmlp_errf(char *buf, size_t size, gmlp_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gmlp_verrf(buf, size, st, fmt, ap);
    va_end(ap);
    gmlp_log("%s: %s", gmlp_status_string(st), buf ? buf : "");
    return st;
}

char *gmlp_thread_error(void)
{
    return thread_error;
}

void gmlp_log(const char *fmt, ...)
{
    const char *env = getenv("GMLP_LOG");
    if (!env || !*env || !strcmp(env, "0"))
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("gmlp: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

const char *gmlp_status_string(gmlp_status status)
{
    switch (status) {
    case GMLP_OK: return "success";
    case GMLP_ERR_INVALID_ARGUMENT: return "invalid argument";
    case GMLP_ERR_IO: return "I/O error";
    case GMLP_ERR_FORMAT: return "malformed model file";
    case GMLP_ERR_UNSUPPORTED: return "unsupported model";
    case GMLP_ERR_NO_DEVICE: return "no OpenCL device";
    case GMLP_ERR_OPENCL: return "OpenCL error";
    case GMLP_ERR_BUILD: return "OpenCL kernel build failed";
    case GMLP_ERR_HOST_MEMORY: return "out of host memory";
    case GMLP_ERR_DEVICE_MEMORY: return "out of device memory";
    case GMLP_ERR_WRONG_MODEL: return "operation does not fit this model";
    }
    return "unknown status";
}
