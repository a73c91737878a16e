"""The structs and enums python/gmlp/_lib.py mirrors, against the C compiler's view of gmlp.h
(tests/python/layout.c): a field added to gmlp.h without its twin here fails."""
from __future__ import annotations

import ctypes
import functools
import subprocess

import gmlp
from conftest import program
from gmlp import _lib

MIRRORS = {"gmlp_config": _lib.Config, "gmlp_load_options": _lib.LoadOptions,
           "gmlp_generate_options": _lib.GenerateOptions}


@functools.lru_cache(maxsize=None)
def c_layout() -> tuple[dict, dict, dict]:
    structs: dict = {}
    fields: dict = {}
    enums: dict = {}
    out = subprocess.run([program("GMLP_TEST_LAYOUT")], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        kind, *rest = line.split()
        if kind == "struct":
            structs[rest[0]] = int(rest[1])
        elif kind == "field":
            fields.setdefault(rest[0], {})[rest[1]] = (int(rest[2]), int(rest[3]))
        else:
            enums.setdefault(rest[0], {})[rest[1]] = int(rest[2])
    return structs, fields, enums


def test_structs_match_gmlp_h() -> None:
    structs, fields, _ = c_layout()
    for name, cls in MIRRORS.items():
        assert ctypes.sizeof(cls) == structs[name], name
        mine = {f: (getattr(cls, f).offset, getattr(cls, f).size) for f, _ in cls._fields_}
        assert mine == fields[name], name


def test_options_defaults_fill_the_whole_struct() -> None:
    assert _lib.Config().size == ctypes.sizeof(_lib.Config)
    for cls, fill in ((_lib.Config, _lib.lib.gmlp_config_default),
                      (_lib.LoadOptions, _lib.lib.gmlp_load_options_default),
                      (_lib.GenerateOptions, _lib.lib.gmlp_generate_options_default)):
        opts = cls()
        fill(ctypes.byref(opts))
        assert opts.size == ctypes.sizeof(cls)


def test_enums_match_gmlp_h() -> None:
    """arch and gate_act: the names are the library's (gmlp_arch_name, gmlp_act_name) for every value below
    gmlp.h's GMLP_ARCHS and GMLP_GATES."""
    _, _, enums = c_layout()
    assert {s.name: s.value for s in gmlp.Status} == enums["status"]
    for kind, names in (("arch", _lib.ARCH), ("interpolation", _lib.INTERPOLATION), ("crop_mode", _lib.CROP_MODE),
                        ("gate_act", _lib.GATE_ACT), ("weights", _lib.WEIGHTS)):
        assert {n: i for i, n in enumerate(names)} == enums[kind], kind
