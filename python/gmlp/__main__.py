"""python -m gmlp: the version of libgmlp and the OpenCL devices it sees (and where they come from)."""
import sys

from . import __version__, _icd, devices

_SOURCES = {
    "user": "the drivers OCL_ICD_VENDORS names",
    "system": "this machine's OpenCL drivers",
    "cpu": "Intel's OpenCL CPU runtime from PyPI (gmlp-cl[cpu])",
}


def main() -> int:
    print(f"gmlp-cl {__version__}")
    found = devices()
    if not found:
        if _icd.state == "user":
            print("no OpenCL device among the drivers that OCL_ICD_VENDORS (or OCL_ICD_FILENAMES, "
                  "OPENCL_VENDOR_PATH) names")
        else:
            print(f"no OpenCL device: {_icd.HINT}")
        return 1
    print(f"{len(found)} OpenCL device(s), from {_SOURCES.get(_icd.state, _icd.state)}:")
    for line in found:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
