#!/bin/sh
# Runs a Python test with the Python that has torch and timm: $GMLP_TOOLS_PYTHON
# (scripts/test sets it), else the tools venv scripts/setup.sh makes
# (.venv-tools), else python3.  The tests skip (77) when their imports fail.
venv=$(dirname "$0")/../.venv-tools/bin/python
if [ -n "${GMLP_TOOLS_PYTHON:-}" ]; then
    exec "$GMLP_TOOLS_PYTHON" "$@"
elif [ -x "$venv" ]; then
    exec "$venv" "$@"
fi
exec python3 "$@"
