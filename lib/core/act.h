/* The activations' names (GMLP_ACT_*, gmlp.h's GMLP_GATE_*): metadata
 * gmlp.act's values, what gmlp_act_name gives and the Python binding shows. */
#ifndef GMLP_ACT_H
#define GMLP_ACT_H

#include "kernel_abi.h"

/* By value, then NULL (a list gmlp_cfg_choice reads). */
extern const char *const gmlp_act_names[GMLP_ACTS + 1];

#endif
