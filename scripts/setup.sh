#!/usr/bin/env bash
# Shared set-up for the quick-start commands: installs the Debian packages
# that are missing (with sudo only when not root), configures and builds.
# Sourced by scripts/classify and scripts/test; BUILD_DIR defaults to build/.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$root/build}

packages=(gcc pkg-config python3 meson ninja-build ocl-icd-opencl-dev opencl-headers ocl-icd-libopencl1
          pocl-opencl-icd clinfo libclblast-dev libjansson-dev libstb-dev zlib1g-dev)
# Test-only extras; their suites skip where a distribution lacks them: the
# Fashion-MNIST test set, the offline Intel/AMD compilers, clang's libFuzzer.
optional=(dataset-fashion-mnist intel-opencl-icd clang-15 libclc-15)
missing() {
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
    done
}
need=$(missing "${packages[@]}")
want=$(missing "${optional[@]}")
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
    for p in $want; do
        $sudo apt-get install -y -qq --no-install-recommends "$p" >&2 ||
            echo "setup: optional package $p is not available; its tests will be skipped" >&2
    done
fi

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    meson setup "$BUILD_DIR" "$root" --buildtype=release ${MESON_SETUP_ARGS:-} >&2
fi
ninja -C "$BUILD_DIR" >&2
