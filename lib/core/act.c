#include "core/act.h"

#include "gmlp.h"

_Static_assert(GMLP_GATE_IDENTITY == GMLP_ACT_IDENTITY && GMLP_GATE_TANH == GMLP_ACT_TANH &&
                   GMLP_GATE_SIGMOID == GMLP_ACT_SIGMOID && GMLP_GATE_GELU == GMLP_ACT_GELU &&
                   GMLP_GATE_SILU == GMLP_ACT_SILU && GMLP_GATE_RELU == GMLP_ACT_RELU &&
                   GMLP_GATES == GMLP_ACTS,
               "gmlp.h's gate activations are cl_kernels/kernel_abi.h's");

const char *const gmlp_act_names[GMLP_ACTS + 1] = {
    [GMLP_ACT_IDENTITY] = "identity", [GMLP_ACT_TANH] = "tanh", [GMLP_ACT_SIGMOID] = "sigmoid",
    [GMLP_ACT_GELU] = "gelu",         [GMLP_ACT_SILU] = "silu", [GMLP_ACT_RELU] = "relu",
};
