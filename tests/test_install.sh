#!/bin/sh
# Installs the build into a scratch prefix, then compiles and runs a program
# against it using only `pkg-config --cflags --libs gmlp`.
set -eu
build=$1
src=$2
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --no-rebuild --strip --destdir "$dest/root" >"$dest/install.log"
pc=$(find "$dest/root" -name gmlp.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: no gmlp.pc installed"; exit 1; }
# the sysroot maps the installed prefix's paths into the scratch folder
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$dest/root
flags=$(pkg-config --cflags --libs gmlp)
echo "pkg-config: $flags"
cc -std=c11 -Wall -Wextra -Werror "$src/install_smoke.c" -o "$dest/smoke" $flags
libdir=$(dirname "$(dirname "$pc")")
LD_LIBRARY_PATH=$libdir "$dest/smoke" "$src/data/e2e/gmlp_rgb.safetensors"
# only the API declared in the public headers is exported
for sym in $(nm -D --defined-only "$libdir/libgmlp.so" | awk '$2 == "T" {print $3}'); do
    cat "$src"/../include/gmlp*.h | grep -q "[ *]$sym(" ||
        { echo "FAIL: $sym is exported but not in gmlp.h, gmlp_cl.h or gmlp_diag.h"; exit 1; }
done
# both headers installed, gmlp_cl.h usable with the same flags
echo '#include <gmlp_cl.h>
#include <gmlp_diag.h>
int main(void) { return gmlp_context_create_cl(0, 0, 0, 0, 0) == GMLP_ERR_INVALID_ARGUMENT ? 0 : 1; }' >"$dest/cl.c"
cc -std=c11 -Wall -Wextra -Werror "$dest/cl.c" -o "$dest/cl" $flags
LD_LIBRARY_PATH=$libdir "$dest/cl"
# the ABI version (meson.build's gmlp_soversion), not the release's major number
soname=$(objdump -p "$libdir/libgmlp.so" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = libgmlp.so.2 ] || { echo "FAIL: SONAME $soname, expected libgmlp.so.2"; exit 1; }
# gmlp-bench links the shared library, like any user of it
bench=$(find "$dest/root" -name gmlp-bench -type f | head -n 1)
if [ -n "$bench" ]; then
    objdump -p "$bench" | grep -q "NEEDED *libgmlp.so.2" || { echo "FAIL: the installed gmlp-bench does not link libgmlp.so"; exit 1; }
fi
# no source-tree path in what is installed
if grep -rlF "$(cd "$src/.." && pwd)" "$dest/root" >/dev/null; then
    echo "FAIL: installed files name the source tree:"; grep -rlF "$(cd "$src/.." && pwd)" "$dest/root"; exit 1
fi
echo "install test passed"
