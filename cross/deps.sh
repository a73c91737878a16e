#!/usr/bin/env bash
# The third-party libraries of the Windows build, cross-built with MinGW-w64 from Debian 12's own
# sources (the same versions and Debian patches as the Linux build's packages), as static archives
# with their pkg-config files, into a prefix that also holds the OpenCL import library and headers:
#   cross/deps.sh CACHE   -> prints the prefix, CACHE/<key>/ (built only when missing)
# The key names the Debian source versions, the compiler's and this script's, so that a new
# Debian revision (a security fix) or a changed recipe builds a new prefix; reruns reuse it.
# Debian's sources come through a private apt source list (CACHE/apt/), the system's left as it is.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=$1
cc=x86_64-w64-mingw32-gcc-posix
packages=(jansson libjpeg-turbo libwebp libstb)

apt_dir=$cache/apt
mkdir -p "$apt_dir/lists/partial"
cat >"$apt_dir/sources.list" <<'EOF'
deb-src http://deb.debian.org/debian bookworm main
deb-src http://deb.debian.org/debian bookworm-updates main
deb-src http://deb.debian.org/debian-security bookworm-security main
EOF
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/nonexistent
          -o "Dir::State::Lists=$apt_dir/lists" -o Debug::NoLocking=1 -o "APT::Sandbox::User=$(id -un)")
# offline, the lists of the last update name the versions (and so the prefix built from them)
apt-get "${apt_opts[@]}" update -qq >&2 || echo "windows: apt-get update failed: the source lists as they were" >&2
versions=$(for p in "${packages[@]}"; do
    echo "$p=$(apt-cache "${apt_opts[@]}" showsrc "$p" | awk '$1 == "Version:" {print $2}' | sort -V | tail -n 1)"
done)
key=$( (echo "$versions"; $cc --version | head -n 1; cat "$0" "$here/OpenCL.def") | sha256sum | cut -c1-16)
prefix=$cache/$key
if [ -f "$prefix/.complete" ]; then
    echo "$prefix"
    exit 0
fi
echo "windows: building the third-party libraries with MinGW-w64 into $prefix: ${versions//$'\n'/ }" >&2
rm -rf "$prefix"
src=$prefix/src
mkdir -p "$src" "$prefix/lib/pkgconfig" "$prefix/include"
mapfile -t sources <<<"$versions"  # NAME=VERSION each
(cd "$src" && apt-get "${apt_opts[@]}" source -qq --download-only "${sources[@]}" >&2)
for p in "${packages[@]}"; do
    # with Debian's patches; no signature check: apt checked the files against the signed index
    dpkg-source --no-check -x "$src/${p}_"*.dsc "$src/$p" >/dev/null
done

jobs=$(nproc)
cmake_build() {  # NAME [cmake options]: configure, build and install one CMake project
    local name=$1
    shift
    if ! { cmake -S "$src/$name" -B "$src/$name-build" -G Ninja -DCMAKE_SYSTEM_NAME=Windows \
               -DCMAKE_SYSTEM_PROCESSOR=x86_64 -DCMAKE_C_COMPILER=$cc -DCMAKE_RC_COMPILER=x86_64-w64-mingw32-windres \
               -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR="$prefix/lib" \
               -DCMAKE_FIND_ROOT_PATH="$prefix" "$@" &&
           ninja -C "$src/$name-build" -j "$jobs" install; } >"$src/$name.log" 2>&1; then
        cat "$src/$name.log" >&2
        echo "windows: building $name failed" >&2
        exit 1
    fi
}

pc() {  # NAME DESCRIPTION VERSION LIBRARY: a pkg-config file for a library of the prefix
    # shellcheck disable=SC2016  # ${prefix} is pkg-config's
    printf 'prefix=%s\nName: %s\nDescription: %s\nVersion: %s\nLibs: -L${prefix}/lib -l%s\nCflags: -I${prefix}/include\n' \
        "$prefix" "$1" "$2" "$3" "$4" >"$prefix/lib/pkgconfig/$1.pc"
}
cmake_build jansson -DJANSSON_BUILD_SHARED_LIBS=OFF -DJANSSON_BUILD_DOCS=OFF -DJANSSON_WITHOUT_TESTS=ON \
    -DJANSSON_EXAMPLES=OFF
# without the SIMD extensions (no NASM needed); the top-5 test under Wine compares with the Linux build
cmake_build libjpeg-turbo -DENABLE_SHARED=OFF -DWITH_SIMD=OFF -DWITH_TURBOJPEG=OFF
cmake_build libwebp -DBUILD_SHARED_LIBS=OFF -DWEBP_BUILD_ANIM_UTILS=OFF -DWEBP_BUILD_CWEBP=OFF \
    -DWEBP_BUILD_DWEBP=OFF -DWEBP_BUILD_GIF2WEBP=OFF -DWEBP_BUILD_IMG2WEBP=OFF -DWEBP_BUILD_VWEBP=OFF \
    -DWEBP_BUILD_WEBPINFO=OFF -DWEBP_BUILD_WEBPMUX=OFF -DWEBP_BUILD_EXTRAS=OFF -DWEBP_BUILD_LIBWEBPMUX=OFF

# stb: Debian builds each header's implementation into libstb; the programs use stb_image alone
mkdir -p "$prefix/include/stb"
cp "$src/libstb/stb_image.h" "$prefix/include/stb/"
# (compiled where it lies: its asserts name the file, not the cache's path)
(cd "$src/libstb" && $cc -O2 -fwrapv -DSTB_IMAGE_IMPLEMENTATION -x c -c stb_image.h -o "$src/stb_image.o")
x86_64-w64-mingw32-ar rcs "$prefix/lib/libstb.a" "$src/stb_image.o"
pc stb stb_image 0.0 stb

# OpenCL: Khronos' headers (Debian's opencl-headers) and an import library of OpenCL.dll (the ICD
# loader a driver installs; Wine's own under Wine), named .a so that static links find it too
cp -r /usr/include/CL "$prefix/include/"
x86_64-w64-mingw32-dlltool -d "$here/OpenCL.def" -l "$prefix/lib/libOpenCL.a"
pc OpenCL "OpenCL ICD loader (OpenCL.dll)" 3.0 OpenCL

# their licences, for the zip (Debian's copyright files name every one)
mkdir -p "$prefix/licenses"
for p in "${packages[@]}"; do
    cp "$src/$p/debian/copyright" "$prefix/licenses/$p.copyright"
done
echo "$versions" >"$prefix/versions"
rm -rf "$src" "${prefix:?}/bin" "$prefix/share" "$prefix/cmake" "$prefix/lib/cmake"  # the libraries alone
touch "$prefix/.complete"
echo "$prefix"
