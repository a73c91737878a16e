#!/bin/sh
# The python suite: `pip install .` into a venv under the build folder, then
# pytest on tests/python.  The venv (pyproject.toml's build requirements,
# dependencies and test extra, from PyPI) is made again only when
# pyproject.toml or the interpreter change; the package is always built and
# installed from the current source, meson-python keeping its build folder so
# that only what changed is compiled again.
#   run.sh PYTHON WORKDIR SOURCE_ROOT
set -eu
python=$1 work=$2 src=$3
venv=$work/venv
stamp="$("$python" -c 'import sys; print(sys.version)' | head -n 1) $(sha256sum <"$src/pyproject.toml")"
if [ "$(cat "$venv/gmlp-stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$work"
    "$python" -m venv "$venv"
    "$venv/bin/python" - "$src/pyproject.toml" >"$venv/requirements.txt" <<'PY'
import sys, tomllib
p = tomllib.load(open(sys.argv[1], "rb"))
print("\n".join(p["build-system"]["requires"] + p["project"]["dependencies"]
                + p["project"]["optional-dependencies"]["test"]))
PY
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$venv/requirements.txt"
    echo "$stamp" >"$venv/gmlp-stamp"
fi
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps --force-reinstall --no-build-isolation \
    --config-settings=build-dir="$work/wheel-build" "$src"
cd "$work"
export PYTHONDONTWRITEBYTECODE=1 # nothing written into the source tree
exec "$venv/bin/python" -m pytest -p no:cacheprovider -ra "$src/tests/python"
