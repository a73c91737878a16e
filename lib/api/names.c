/* The names of the enums gmlp_config holds: the library's tables (the
 * architecture table's rows, core/act.c), which the metadata's parsers read
 * too. */
#include "gmlp.h"
#include "core/act.h"
#include "model/arch.h"
#include "model/config.h"

const char *gmlp_arch_name(int arch)
{
    const gmlp_arch_desc *a = gmlp_arch_get(arch);
    return a ? a->name : NULL;
}

int gmlp_arch_named(const char *name)
{
    return name ? gmlp_arch_by_name(name) : -1;
}

const char *gmlp_act_name(int act)
{
    return act >= 0 && act < GMLP_ACTS ? gmlp_act_names[act] : NULL;
}

int gmlp_act_named(const char *name)
{
    return name ? gmlp_cfg_choice(name, gmlp_act_names) : -1;
}
