"""Faster CPU training with Debian's torch: nn.Linear as a 1x1 convolution.

Debian's python3-torch 1.13 computes matmuls with the reference (netlib) BLAS,
about 3 GFLOP/s on this machine, while its oneDNN convolutions run at 40-70.
For training only, patch_linears() makes every nn.Linear of a model compute
the same product as a 1x1 convolution: the same maths, the parameters and the
state_dict untouched, so the saved model is exactly what an unpatched module
loads.  With an optimised BLAS (PyTorch from PyPI) it gains nothing; pass
--no-onednn to the training scripts to compare.
"""
import types

import torch.nn as nn
import torch.nn.functional as F


def conv_linear_forward(self, x):
    """nn.Linear.forward through F.conv2d: x (..., in) -> (..., out)."""
    shape = x.shape
    xt = x.reshape(-1, shape[-1]).t().contiguous()[None, :, :, None]  # 1 x in x rows x 1
    y = F.conv2d(xt, self.weight[:, :, None, None], self.bias)         # 1 x out x rows x 1
    return y[0, :, :, 0].t().reshape(*shape[:-1], self.weight.shape[0])


def patch_linears(model):
    for mod in model.modules():
        if isinstance(mod, nn.Linear):
            mod.forward = types.MethodType(conv_linear_forward, mod)
    return model
