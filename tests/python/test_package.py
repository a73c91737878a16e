"""The module itself: version, devices (also with no OpenCL platform at all), the error types."""
from __future__ import annotations

import os
import subprocess
import sys

import gmlp


def test_version_and_names() -> None:
    major, minor, patch = map(int, gmlp.__version__.split("."))
    assert major >= 0 and minor >= 0 and patch >= 0
    assert sorted(gmlp.__all__) == ["Error", "Model", "Precision", "Status", "__version__", "devices", "load"]
    assert issubclass(gmlp.Error, RuntimeError) and gmlp.Status.FORMAT == 3


def test_devices() -> None:
    devices = gmlp.devices()
    assert isinstance(devices, list) and all(isinstance(d, str) and d for d in devices)
    assert all(d.startswith(f"{i}:") for i, d in enumerate(devices))


def test_no_opencl_platform(tmp_path) -> None:
    """An ICD loader that finds no driver: import works, devices() is [], load says NO_DEVICE."""
    code = ("import gmlp, sys\n"
            "assert gmlp.devices() == [], gmlp.devices()\n"
            "try:\n"
            "    gmlp.load(sys.argv[1])\n"
            "except gmlp.Error as e:\n"
            "    assert e.status == gmlp.Status.NO_DEVICE, e.status\n"
            "    print(e)\n")
    env = dict(os.environ, OCL_ICD_VENDORS=str(tmp_path), OCL_ICD_FILENAMES="")
    run = subprocess.run([sys.executable, "-c", code, "model.safetensors"], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip()  # the library's message
