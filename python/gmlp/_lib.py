"""libgmlp through ctypes: the library installed beside this package, the
structs and prototypes of gmlp.h that the binding uses, and the errors.

ctypes releases the GIL for every call into a CDLL, so device work in one
thread leaves the others running.  The structs mirror gmlp.h field for field;
tests/python/test_layout.py checks them against the C compiler's offsets.
"""
from __future__ import annotations

import ctypes
import enum
import pathlib
from ctypes import CFUNCTYPE, POINTER, Structure, c_char_p, c_float, c_int, c_int32, c_size_t, c_uint64, c_void_p
from typing import Callable

from . import _icd


def _load() -> ctypes.CDLL:
    here = pathlib.Path(__file__).resolve().parent
    found = sorted(here.glob("libgmlp.so*"))  # the wheel's copy (meson's -Dpython=true)
    if not found:
        raise ImportError(f"gmlp: no libgmlp.so in {here}: install the package with 'pip install .' from the "
                          "gmlp-cl source tree")
    _icd.settle()  # before the ICD loader reads its driver list: the [cpu] extra's runtime where no other answers
    try:
        return ctypes.CDLL(str(found[0]))
    except OSError as e:
        raise ImportError(f"gmlp: cannot load {found[0]}: {e} (libgmlp needs the OpenCL ICD loader "
                          "libOpenCL.so.1 and jansson, and CLBlast where it was built with it; Debian: "
                          "ocl-icd-libopencl1 libjansson4 libclblast1)") from e


lib = _load()


class Status(enum.IntEnum):
    """gmlp_status: the library's stable error codes (GMLP_ERR_NAME is Status.NAME)."""

    OK = 0
    INVALID_ARGUMENT = 1
    IO = 2
    FORMAT = 3
    UNSUPPORTED = 4
    NO_DEVICE = 5
    OPENCL = 6
    BUILD = 7
    HOST_MEMORY = 8
    DEVICE_MEMORY = 9
    WRONG_MODEL = 10


class Error(RuntimeError):
    """A failed call: ``status`` is its Status, ``str(e)`` the library's message.

    Argument errors (Status.INVALID_ARGUMENT) are also ValueErrors."""

    status: Status

    def __init__(self, status: Status, message: str) -> None:
        super().__init__(message)
        self.status = status


class _ArgumentError(Error, ValueError):
    """An Error with Status.INVALID_ARGUMENT."""


def error(status: int, message: str) -> Error:
    """The exception for a status: argument errors are also ValueErrors."""
    st = Status(status)
    return (_ArgumentError if st == Status.INVALID_ARGUMENT else Error)(st, message)


def argument_error(message: str) -> Error:
    return error(Status.INVALID_ARGUMENT, message)


def last_error(ctx: int | None) -> str:
    """gmlp_last_error: the context's, or with None the calling thread's."""
    return lib.gmlp_last_error(ctx).decode("utf-8", "replace")


def check(status: int, ctx: int | None) -> None:
    """Raises the Error of a failed call whose message is on ctx (None: the thread's)."""
    if status != Status.OK:
        raise error(status, last_error(ctx))


class Config(Structure):
    """gmlp_config, its size set (the library reads and writes the fields it says the caller has)."""

    _fields_ = [
        ("size", c_size_t),
        ("arch", c_int),
        ("in_chans", c_int), ("img_h", c_int), ("img_w", c_int), ("num_classes", c_int),
        ("depth", c_int), ("dim", c_int), ("ffn_dim", c_int), ("seq_len", c_int),
        ("mean", c_float * 3), ("std", c_float * 3),
        ("crop_pct", c_float),
        ("patch_h", c_int), ("patch_w", c_int),
        ("token_dim", c_int),
        ("interpolation", c_int),
        ("norm_eps", c_float),
        ("sgu_eps", c_float),
        ("num_params", c_size_t),
        ("weights", c_int),
        ("weight_bytes", c_size_t),
        ("vocab_size", c_int),
        ("heads", c_int),
        ("attn_dim", c_int),
        ("causal", c_int),
        ("gate_act", c_int),
        ("shift_tokens", c_int),
        ("circulant", c_int),
        ("crop_mode", c_int),
        ("stem_norm", c_int),
    ]

    def __init__(self, **fields: object) -> None:
        super().__init__(size=ctypes.sizeof(Config), **fields)


class LoadOptions(Structure):
    """gmlp_load_options (fill with gmlp_load_options_default)."""

    _fields_ = [("size", c_size_t), ("weights", c_int), ("precision", c_int)]


TokenCallback = CFUNCTYPE(c_int, c_void_p, c_int32)


class GenerateOptions(Structure):
    """gmlp_generate_options (fill with gmlp_generate_options_default)."""

    _fields_ = [
        ("size", c_size_t),
        ("temperature", c_float),
        ("top_k", c_int),
        ("top_p", c_float),
        ("seed", c_uint64),
        ("max_tokens", c_size_t),
        ("stop_tokens", POINTER(c_int32)),
        ("n_stop_tokens", c_size_t),
        ("on_token", TokenCallback),
        ("user", c_void_p),
    ]


# Pointers travel as c_void_p (a numpy array's .ctypes.data, an int): the
# cheapest conversion ctypes has.
_P = c_void_p
_PROTOTYPES = {
    "gmlp_version": (c_char_p, []),
    "gmlp_arch_name": (c_char_p, [c_int]),
    "gmlp_act_name": (c_char_p, [c_int]),
    "gmlp_last_error": (c_char_p, [_P]),
    "gmlp_list_devices": (c_size_t, [_P, c_size_t]),
    "gmlp_context_create": (c_int, [c_char_p, POINTER(c_void_p)]),
    "gmlp_context_destroy": (None, [_P]),
    "gmlp_context_device_name": (c_char_p, [_P]),
    "gmlp_load_options_default": (None, [POINTER(LoadOptions)]),
    "gmlp_config_default": (None, [POINTER(Config)]),
    "gmlp_model_load_ex": (c_int, [_P, c_char_p, POINTER(LoadOptions), POINTER(c_void_p)]),
    "gmlp_precision_parse": (c_int, [c_char_p, POINTER(c_int)]),
    "gmlp_precision_name": (c_char_p, [c_int]),
    "gmlp_model_precision": (c_int, [_P, POINTER(c_int), c_char_p, c_size_t]),
    "gmlp_model_free": (None, [_P]),
    "gmlp_model_config": (c_int, [_P, POINTER(Config)]),
    "gmlp_model_label": (c_char_p, [_P, c_int]),
    "gmlp_model_metadata": (c_char_p, [_P, c_char_p]),
    "gmlp_classify": (c_int, [_P, _P, c_size_t, _P]),
    "gmlp_features": (c_int, [_P, _P, c_size_t, _P]),
    "gmlp_classify_features": (c_int, [_P, _P, c_size_t, _P, _P]),
    "gmlp_preprocess_rgb8": (c_int, [POINTER(Config), _P, c_int, c_int, c_int, _P]),
    "gmlp_softmax_topk": (c_int, [_P, c_int, c_int, _P, _P]),
    "gmlp_lm_logits": (c_int, [_P, _P, c_size_t, c_size_t, _P]),
    "gmlp_generate_options_default": (None, [POINTER(GenerateOptions)]),
    "gmlp_lm_generate": (c_int, [_P, _P, c_size_t, POINTER(GenerateOptions), _P, POINTER(c_size_t)]),
}
for _name, (_restype, _argtypes) in _PROTOTYPES.items():
    _fn = getattr(lib, _name)
    _fn.restype = _restype
    _fn.argtypes = _argtypes


def _names(name: Callable[[int], bytes | None]) -> tuple[str, ...]:
    """An enum's names by value, from the library's table (name: gmlp_arch_name, gmlp_act_name)."""
    names: list[str] = []
    while (n := name(len(names))) is not None:
        names.append(n.decode())
    return tuple(names)


# Names of the enums gmlp_config holds, by value (gmlp.h): the library's where it has a table.
ARCH = _names(lib.gmlp_arch_name)
ARCH_LM = ARCH.index("gmlp_lm")
INTERPOLATION = ("bicubic", "bilinear", "nearest", "box", "hamming", "lanczos")
CROP_MODE = ("center", "squash", "border")
GATE_ACT = _names(lib.gmlp_act_name)
WEIGHTS = ("f32", "f16", "bf16")
