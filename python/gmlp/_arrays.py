"""NumPy arrays as libgmlp takes them: C-contiguous, of one dtype.  A wrong
dtype is converted when every value survives the conversion and refused
otherwise; an array that already fits is passed on without a copy."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._lib import argument_error


def exact(x: Any, dtype: type, what: str) -> np.ndarray:
    """x as a C-contiguous array of dtype, converted only where lossless."""
    a = np.asarray(x)
    if a.dtype == dtype:
        return np.ascontiguousarray(a)
    if a.dtype.kind not in "biuf":
        raise argument_error(f"{what}: dtype {a.dtype} is not a number type")
    c: np.ndarray = np.ascontiguousarray(a, dtype=dtype)
    if not np.can_cast(a.dtype, dtype, "safe"):
        with np.errstate(invalid="ignore", over="ignore"):
            same = c.astype(a.dtype) == a
        if a.dtype.kind == "f" and np.dtype(dtype).kind == "f":
            same |= np.isnan(a)  # NaN stays NaN
        if not same.all():
            raise argument_error(f"{what}: {a.dtype} values that {np.dtype(dtype).name} cannot hold exactly; "
                                 f"convert them yourself (e.g. .astype(np.{np.dtype(dtype).name}))")
    return c


def batch_of(a: np.ndarray, item: tuple[int, ...], what: str) -> tuple[np.ndarray, bool]:
    """a as (B, *item), and whether it was a single item (of shape item)."""
    if a.shape == item:
        return a[None], True
    if a.ndim == len(item) + 1 and a.shape[1:] == item:
        return a, False
    dims = ", ".join(map(str, item))
    raise argument_error(f"{what}: shape {a.shape}; this model takes (B, {dims}), or ({dims}) for one")


def address(a: np.ndarray) -> int:
    """The address of a's first element, for a c_void_p argument."""
    return a.__array_interface__["data"][0]
