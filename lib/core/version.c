#include "gmlp.h"

const char *gmlp_version(void)
{
    return GMLP_VERSION_STRING;
}
