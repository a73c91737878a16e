"""gmlp/_icd.py, which settles the OpenCL drivers before libgmlp loads (the binary wheels' [cpu]
extra): the user's variables win, the machine's drivers win where they give a device, else an
.icd naming the CPU runtime goes into the user's cache folder.  Each case on a fresh copy of the
module (it keeps its state per process), with a stand-in runtime path and vendors folder; the
module is loaded by path, as the launchers load it."""
import importlib.util
import os
import pathlib

import pytest

import gmlp

ICD = pathlib.Path(gmlp.__file__).parent / "_icd.py"


def fresh(monkeypatch, tmp_path, runtime, vendors):
    spec = importlib.util.spec_from_file_location("_gmlp_icd_test", ICD)
    icd = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(icd)
    monkeypatch.setattr(icd, "cpu_runtime", lambda: runtime)
    monkeypatch.setattr(icd, "_SYSTEM_VENDORS", str(vendors))
    for v in ("OCL_ICD_VENDORS", "OCL_ICD_FILENAMES", "OPENCL_VENDOR_PATH", "GMLP_CACHE_DIR"):
        monkeypatch.setenv(v, "")  # recorded, so that what settle() sets is undone after the test
        monkeypatch.delenv(v)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return icd


def test_user_variable_wins(monkeypatch, tmp_path):
    icd = fresh(monkeypatch, tmp_path, "/opt/x/lib/libintelocl.so", tmp_path)
    monkeypatch.setenv("OCL_ICD_VENDORS", "/somewhere")
    assert icd.settle() == "user"
    assert os.environ["OCL_ICD_VENDORS"] == "/somewhere"


def test_no_runtime_changes_nothing(monkeypatch, tmp_path):
    icd = fresh(monkeypatch, tmp_path, None, tmp_path)
    assert icd.settle() == "system"
    assert "OCL_ICD_VENDORS" not in os.environ
    assert not (tmp_path / "cache").exists()


def test_runtime_where_no_driver_is_installed(monkeypatch, tmp_path):
    runtime = "/opt/x/lib/libintelocl.so"
    icd = fresh(monkeypatch, tmp_path, runtime, tmp_path / "no-vendors")
    assert icd.settle() == "cpu"
    folder = pathlib.Path(os.environ["OCL_ICD_VENDORS"])
    assert folder.is_relative_to(tmp_path / "cache" / "gmlp")
    assert [p.name for p in folder.iterdir()] == ["intel-cpu.icd"]
    assert (folder / "intel-cpu.icd").read_text().strip() == runtime
    assert icd.settle() == "cpu"  # once per process


def test_machine_driver_with_a_device_wins(monkeypatch, tmp_path):
    """A driver of the machine that gives a device (asked in a child process) keeps the machine's
    driver list, the runtime installed or not."""
    if os.environ.get("OCL_ICD_VENDORS") or not gmlp.devices():
        pytest.skip("the devices of this process do not come from the machine's own driver list")
    vendors = tmp_path / "vendors"
    vendors.mkdir()
    (vendors / "x.icd").write_text("whatever\n")
    icd = fresh(monkeypatch, tmp_path, "/opt/x/lib/libintelocl.so", vendors)
    # the machine's real list (whatever gives this process its devices) stands behind the .icd
    assert icd._system_devices(in_process=False) > 0
    assert icd.settle() == "system"
    assert "OCL_ICD_VENDORS" not in os.environ


def test_a_broken_machine_driver_does_not_count(monkeypatch, tmp_path):
    """An .icd whose library is missing gives no device: the runtime would be used."""
    vendors = tmp_path / "vendors"
    vendors.mkdir()
    (vendors / "broken.icd").write_text("/nonexistent/libbroken.so\n")
    icd = fresh(monkeypatch, tmp_path, "/opt/x/lib/libintelocl.so", vendors)
    # the child process asks the loader with OCL_ICD_VENDORS naming only the broken driver
    monkeypatch.setattr(icd, "icd_loader", lambda: "libOpenCL.so.1")
    monkeypatch.setenv("OCL_ICD_VENDORS", str(vendors))
    assert icd._system_devices(in_process=False) == 0
