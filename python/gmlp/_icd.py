"""Which OpenCL drivers libgmlp sees, settled before the ICD loader first loads.

The ICD loader (libOpenCL.so.1, which the binary wheels carry) reads its list of drivers once per
process, from $OCL_ICD_VENDORS or else /etc/OpenCL/vendors.  `pip install gmlp-cl[cpu]` installs
Intel's OpenCL CPU runtime from PyPI into the environment's lib/ (intel-opencl-rt), where no loader
looks.  So, before libgmlp loads (gmlp/_lib.py) and before a program of the wheel starts (its
launcher, python/launcher.py.in, calls exec_program), settle():

- leaves everything as it is where the user set OCL_ICD_VENDORS (or OCL_ICD_FILENAMES,
  OPENCL_VENDOR_PATH), or where no CPU runtime is installed;
- else asks the loader whether the machine's own drivers give any device (a GPU's driver, PoCL...):
  where they do, they are used as without the extra;
- else writes an .icd naming the runtime's library into the user's cache folder
  ($GMLP_CACHE_DIR, else $XDG_CACHE_HOME/gmlp, else ~/.cache/gmlp, else a temporary folder) and sets
  OCL_ICD_VENDORS to that folder, for this process and the programs it starts.

No root, nothing under /etc, nothing written into site-packages (it may be read-only).  This file
uses the standard library only: the launchers load it by path, without importing the package.
"""
from __future__ import annotations

import ctypes
import glob
import hashlib
import os
import site
import subprocess
import sys
import tempfile

HINT = "pip install 'gmlp-cl[cpu]' for one on the CPU, or install your GPU's OpenCL driver"
"""How to get an OpenCL device, for the messages of the launchers and of `python -m gmlp`."""

_USER_VARIABLES = ("OCL_ICD_VENDORS", "OCL_ICD_FILENAMES", "OPENCL_VENDOR_PATH")
_SYSTEM_VENDORS = "/etc/OpenCL/vendors"
_here = os.path.dirname(os.path.abspath(__file__))

state = "unsettled"
"""What settle() found: 'user' (the user's variables), 'system' (the machine's drivers give a
device, or may: not asked), 'cpu' (the [cpu] extra's runtime), 'none' (no device anywhere), or
'unsettled' before settle() runs."""


def cpu_runtime() -> str | None:
    """Intel's OpenCL CPU runtime of the [cpu] extra (intel-opencl-rt), as installed into this
    environment's lib/ (pip install, a venv, pipx) or the user's (pip install --user); None if absent."""
    for prefix in (sys.prefix, getattr(site, "USER_BASE", None) or ""):
        path = os.path.join(prefix, "lib", "libintelocl.so")
        if prefix and os.path.isfile(path):
            return path
    return None


def icd_loader() -> str:
    """The ICD loader libgmlp links: the wheel's copy (auditwheel puts it in gmlp_cl.libs/ beside the
    package), else the system's."""
    found = sorted(glob.glob(os.path.join(os.path.dirname(_here), "gmlp_cl.libs", "libOpenCL*.so*")))
    return found[0] if found else "libOpenCL.so.1"


def count_devices(loader: str) -> int:
    """The OpenCL devices of every platform the loader finds (this loads the loader and the drivers
    into the calling process, whose driver list is then fixed: settle() asks in a child process
    unless the caller is about to exec)."""
    try:
        cl = ctypes.CDLL(loader)
    except OSError:
        return 0
    cl.clGetPlatformIDs.argtypes = [ctypes.c_uint, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint)]
    cl.clGetDeviceIDs.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint, ctypes.c_void_p,
                                  ctypes.POINTER(ctypes.c_uint)]
    n = ctypes.c_uint(0)
    if cl.clGetPlatformIDs(0, None, ctypes.byref(n)) != 0 or n.value == 0:
        return 0
    ids = (ctypes.c_void_p * n.value)()
    if cl.clGetPlatformIDs(n.value, ids, None) != 0:
        return 0
    total = 0
    for p in ids:
        m = ctypes.c_uint(0)
        if cl.clGetDeviceIDs(p, 0xFFFFFFFF, 0, None, ctypes.byref(m)) == 0:  # CL_DEVICE_TYPE_ALL
            total += m.value
    return total


def _system_devices(in_process: bool) -> int:
    """count_devices over the machine's own drivers; 0 without asking where no .icd is installed."""
    try:
        if not any(f.endswith(".icd") for f in os.listdir(_SYSTEM_VENDORS)):
            return 0
    except OSError:
        return 0
    if in_process:
        return count_devices(icd_loader())
    try:  # a child process, so that this one's loader has not read its list yet
        r = subprocess.run([sys.executable, "-I", "-S", os.path.abspath(__file__), icd_loader()],
                           capture_output=True, text=True, timeout=60)
        return int(r.stdout.strip() or 0)
    except (OSError, ValueError, subprocess.SubprocessError):
        return 1  # could not ask: leave the machine's drivers in charge, as without the extra


def _cache_dirs() -> list[str]:
    dirs = []
    if os.environ.get("GMLP_CACHE_DIR"):
        dirs.append(os.environ["GMLP_CACHE_DIR"])
    elif os.environ.get("XDG_CACHE_HOME"):
        dirs.append(os.path.join(os.environ["XDG_CACHE_HOME"], "gmlp"))
    elif os.environ.get("HOME"):
        dirs.append(os.path.join(os.environ["HOME"], ".cache", "gmlp"))
    dirs.append(os.path.join(tempfile.gettempdir(), f"gmlp-{os.getuid()}"))
    return dirs


def _write_vendors(runtime: str) -> str | None:
    """A folder holding one .icd that names the runtime (by its path's hash: one per environment)."""
    key = hashlib.sha256(runtime.encode()).hexdigest()[:16]
    for base in _cache_dirs():
        folder = os.path.join(base, "opencl-vendors", key)
        icd = os.path.join(folder, "intel-cpu.icd")
        try:
            with open(icd) as f:
                if f.read().strip() == runtime:
                    return folder
        except OSError:
            pass
        try:
            os.makedirs(folder, exist_ok=True)
            tmp = f"{icd}.{os.getpid()}"
            with open(tmp, "w") as f:
                f.write(runtime + "\n")
            os.replace(tmp, icd)
            return folder
        except OSError:
            continue
    return None


def settle(in_process: bool = False) -> str:
    """Settles the drivers for this process and those it starts (the module's docstring); returns
    and records `state`.  in_process: ask the loader here (a launcher, which execs next)."""
    global state
    if state != "unsettled":
        return state
    if any(v in os.environ for v in _USER_VARIABLES):
        state = "user"
        return state
    runtime = cpu_runtime()
    if runtime is None:
        # without the extra nothing changes; a launcher still asks, to say how to get a device
        state = "system" if not in_process or _system_devices(True) else "none"
        return state
    if _system_devices(in_process):
        state = "system"
        return state
    folder = _write_vendors(runtime)
    if folder is None:
        state = "none"
        return state
    os.environ["OCL_ICD_VENDORS"] = folder
    state = "cpu"
    return state


def exec_program(name: str, args: list[str]) -> None:
    """A launcher's work: settle the drivers, then exec gmlp/bin/NAME with args.  With no device
    anywhere, one line saying how to get one and status 1 (but for --help and --version)."""
    exe = os.path.join(_here, "bin", name)
    if not os.path.isfile(exe):
        print(f"{name}: the package gmlp has no program of that name ({exe})", file=sys.stderr)
        sys.exit(1)
    if settle(in_process=True) == "none" and not {"-h", "--help", "-V", "--version"} & set(args):
        print(f"{name}: no OpenCL device: {HINT}", file=sys.stderr)
        sys.exit(1)
    try:
        os.execv(exe, [name, *args])
    except OSError as e:
        print(f"{name}: cannot run {exe}: {e.strerror}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":  # the child process of _system_devices: python -I -S _icd.py LOADER
    print(count_devices(sys.argv[1]))
