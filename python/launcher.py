#!python
"""A program of the binary wheel (gmlp-classify, gmlp-generate, gmlp-server, gmlp-bench: this file
is installed once under each name): runs the binary of its name that the package gmlp carries
(gmlp/bin/) after gmlp/_icd.py has settled which OpenCL drivers it will see.  The package is
found, not imported: the launcher loads neither libgmlp nor NumPy."""
import importlib.util
import os
import sys

_here = os.path.dirname(importlib.util.find_spec("gmlp").origin)
_spec = importlib.util.spec_from_file_location("_gmlp_icd", os.path.join(_here, "_icd.py"))
_icd = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_icd)
_icd.exec_program(os.path.basename(sys.argv[0]), sys.argv[1:])
