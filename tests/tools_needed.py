"""The tests that run the tools venv's packages (torch, timm, g-mlp-pytorch):
without one a suite skips (exit 77), or fails where CI is set."""
import os
import sys


def missing(e):
    ci = bool(os.environ.get("CI"))
    print(f"{'FAIL' if ci else 'SKIP'}: {e} (Python {sys.executable}); scripts/test makes the tools venv")
    sys.exit(1 if ci else 77)
