#!/bin/sh
# Installs the build into a scratch prefix, then compiles and runs a program
# against it using only `pkg-config --cflags --libs gmlp`.
set -eu
build=$1
src=$2
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --no-rebuild --destdir "$dest" >"$dest/install.log"
pc=$(find "$dest" -name gmlp.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: no gmlp.pc installed"; exit 1; }
# the sysroot maps the installed prefix's paths into the scratch folder
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$dest
flags=$(pkg-config --cflags --libs gmlp)
echo "pkg-config: $flags"
cc -std=c11 -Wall -Wextra -Werror "$src/install_smoke.c" -o "$dest/smoke" $flags
libdir=$(dirname "$(dirname "$pc")")
LD_LIBRARY_PATH=$libdir "$dest/smoke" "$src/data/e2e/gmlp_rgb.safetensors"
# only the API declared in gmlp.h is exported
for sym in $(nm -D --defined-only "$libdir/libgmlp.so" | awk '$2 == "T" {print $3}'); do
    grep -q "[ *]$sym(" "$src/../include/gmlp.h" || { echo "FAIL: $sym is exported but not in gmlp.h"; exit 1; }
done
ls "$libdir"/libgmlp.so.0 >/dev/null
echo "install test passed"
