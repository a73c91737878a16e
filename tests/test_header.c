/* gmlp.h must be self-contained: it is the first and only include here. */
#include "gmlp.h"

int main(void)
{
    gmlp_config cfg = {.size = sizeof cfg};
    return gmlp_version()[0] && cfg.arch == GMLP_ARCH_GMLP ? 0 : 1;
}
