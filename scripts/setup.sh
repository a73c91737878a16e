#!/usr/bin/env bash
# Shared set-up for the quick-start commands: installs the Debian packages
# that are missing (with sudo only when not root), configures and builds.
#   source scripts/setup.sh apps    what the library and the apps need (scripts/classify, generate, bench)
#   source scripts/setup.sh tests   that, the test-only packages and the tools venv (scripts/test)
# BUILD_DIR defaults to build/; MESON_SETUP_ARGS go to the first meson setup.
# CLBlast (libclblast-dev, an optional GEMM backend) is installed unless
# MESON_SETUP_ARGS holds -Dclblast=disabled (a build without it).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$root/build}
case ${1:-} in
apps | tests) setup_mode=$1 ;;
*) echo "usage: source scripts/setup.sh apps|tests" >&2; exit 2 ;;
esac

packages=(gcc pkg-config python3 meson ninja-build ocl-icd-opencl-dev opencl-headers ocl-icd-libopencl1
          pocl-opencl-icd libjansson-dev libstb-dev libjpeg-dev libwebp-dev
          libmicrohttpd-dev)  # gmlp-server (built only where it is found)
case " ${MESON_SETUP_ARGS:-} " in
*" -Dclblast=disabled "*) ;;
*) packages+=(libclblast-dev) ;;
esac
# Test-only, one line each.  Required:
test_packages=(
    zlib1g-dev             # model: reads the Fashion-MNIST IDX files
    python3-venv           # python: the venv `pip install .` installs the package into
    libopenmpi-dev openmpi-bin  # mpi: gmlp-classify under mpirun (-Dmpi=enabled)
    curl python3-requests  # server: gmlp-server's clients
    openssl                # server: the TLS test's certificates
)
# Optional: the suites that need them skip where a distribution lacks them.
test_optional=(
    dataset-fashion-mnist  # model: the Fashion-MNIST test set
    intel-opencl-icd       # portability: ocloc, the offline Intel compiler
    clang-15 libclc-15     # portability: the offline AMD compiler; fuzz: libFuzzer
    oclgrind               # oclgrind: the kernels under a race and bounds checker
    mesa-opencl-icd        # scripts/test --platform rusticl: Mesa's OpenCL (no device without RUSTICL_ENABLE)
    python3-venv python3-torch python3-torchvision libopenblas0-openmp  # export: the tools venv
)
# PyPI packages of the tools venv ($root/.venv-tools, on top of Debian's torch).
test_pip=(timm==1.0.31 safetensors g-mlp-pytorch==0.1.5 einops==0.8.2 openai==3.57.0  # openai: the server suite
    nvidia-cuda-nvcc==13.5.37 nvidia-cuda-cuobjdump==13.5.37 nvidia-cuda-nvdisasm==13.5.37)  # portability:
    # ptxas and the tensor-core GEMMs' SASS (the instructions per HMMA the suite bounds are this ptxas's)

# Optional packages apt could not install are listed here and not tried again
# (so apt-get update does not run on every call); delete the file to retry.
unavailable=$BUILD_DIR/.setup-unavailable
missing() {
    for p in "$@"; do
        grep -qxF "$p" "$unavailable" 2>/dev/null && continue
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
    done
}
if [ "$setup_mode" = tests ]; then
    packages+=("${test_packages[@]}")
    want=$(missing "${test_optional[@]}")
else
    want=""
fi
need=$(missing "${packages[@]}")
installed=0
if [ -n "$need$want" ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq >&2
    if [ -n "$need" ]; then
        echo "setup: installing" $need >&2
        # shellcheck disable=SC2086
        $sudo apt-get install -y -qq --no-install-recommends $need >&2
    fi
    mkdir -p "$BUILD_DIR"
    for p in $want; do
        if ! $sudo apt-get install -y -qq --no-install-recommends "$p" >&2; then
            echo "setup: optional package $p is not available; its tests will be skipped" >&2
            echo "$p" >>"$unavailable"
        fi
    done
    installed=1
fi

# The tools venv: timm and safetensors from PyPI (Debian's pip is externally
# managed) over Debian's torch; the export tests run with $GMLP_TOOLS_PYTHON.
if [ "$setup_mode" = tests ] && [ -z "${GMLP_TOOLS_PYTHON:-}" ]; then
    venv=$root/.venv-tools
    if [ "$(cat "$venv/gmlp-requirements" 2>/dev/null)" != "${test_pip[*]}" ] && ! grep -qxF tools-venv "$unavailable" 2>/dev/null; then
        if /usr/bin/python3 -c "import torch" 2>/dev/null &&
            /usr/bin/python3 -m venv --system-site-packages "$venv" >&2 &&
            "$venv/bin/pip" install -q --disable-pip-version-check "${test_pip[@]}" >&2; then
            echo "${test_pip[*]}" >"$venv/gmlp-requirements"
        else
            echo "setup: no tools venv (Debian's torch, or ${test_pip[*]} from PyPI, unavailable); the export" \
                "tests will be skipped (delete $unavailable to retry)" >&2
            mkdir -p "$BUILD_DIR"
            echo tools-venv >>"$unavailable"
        fi
    fi
    [ ! -x "$venv/bin/python" ] || export GMLP_TOOLS_PYTHON=$venv/bin/python
fi

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    meson setup "$BUILD_DIR" "$root" --buildtype=release ${MESON_SETUP_ARGS:-} >&2
elif [ "$installed" = 1 ]; then
    meson setup --reconfigure "$BUILD_DIR" "$root" >&2  # find what was just installed
fi
# tests: gmlp-classify with MPI, so that the mpi suite runs rather than skips
if [ "$setup_mode" = tests ] &&
    ! meson introspect --buildoptions "$BUILD_DIR" | grep -q '"name": "mpi", "value": "enabled"'; then
    meson configure "$BUILD_DIR" -Dmpi=enabled >&2
fi
ninja -C "$BUILD_DIR" >&2
