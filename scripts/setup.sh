#!/usr/bin/env bash
# Shared set-up for the quick-start commands: installs the Debian packages
# that are missing (with sudo only when not root), configures and builds.
# Sourced by scripts/classify and scripts/test; BUILD_DIR defaults to build/.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$root/build}

packages=(gcc pkg-config python3 meson ninja-build ocl-icd-opencl-dev opencl-headers ocl-icd-libopencl1
          pocl-opencl-icd clinfo libclblast-dev libjansson-dev libstb-dev zlib1g-dev dataset-fashion-mnist
          intel-opencl-icd clang-15 libclc-15)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq >&2
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    meson setup "$BUILD_DIR" "$root" --buildtype=release ${MESON_SETUP_ARGS:-} >&2
fi
ninja -C "$BUILD_DIR" >&2
