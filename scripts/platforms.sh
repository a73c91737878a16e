#!/usr/bin/env bash
# OpenCL implementations for the device suites, each one alone through
# OCL_ICD_VENDORS (sourced by scripts/test; nothing goes into /etc):
#   pocl     PoCL (Debian's pocl-opencl-icd)
#   intel    Intel's OpenCL CPU runtime from its PyPI wheels (pinned below),
#            downloaded once and unpacked under $BUILD_DIR/opencl/
#   rusticl  Mesa's rusticl on llvmpipe (Debian's mesa-opencl-icd)
#   NAME     any other /etc/OpenCL/vendors/NAME.icd, as installed
#   platform_env NAME   exports what NAME needs; 1 when it cannot be had
intel_wheels=(intel-opencl-rt==2026.2.0 intel-cmplr-lib-rt==2026.2.0 tbb==2023.2.0)

# Unpacks the wheels (a wheel is a zip file) and writes an .icd naming
# libintelocl.so; its own ICD loader (libOpenCL.so) goes, so that Debian's
# loader is the one that reads OCL_ICD_VENDORS.
intel_setup() {
    local dir=$1 w
    [ "$(cat "$dir/wheels/pinned" 2>/dev/null)" = "${intel_wheels[*]}" ] && return 0
    rm -rf "$dir" && mkdir -p "$dir/wheels" "$dir/vendors" || return 1
    [ -x "$dir/venv/bin/pip" ] || /usr/bin/python3 -m venv "$dir/venv" >&2 || return 1
    "$dir/venv/bin/pip" download -q --disable-pip-version-check --no-deps -d "$dir/wheels" "${intel_wheels[@]}" >&2 ||
        return 1
    for w in "$dir"/wheels/*.whl; do
        /usr/bin/python3 -m zipfile -e "$w" "$dir/unpacked" || return 1
    done
    rm -f "$dir"/unpacked/*/data/lib/libOpenCL.so*
    echo "$(echo "$dir"/unpacked/intel_opencl_rt-*/data/lib)/libintelocl.so" >"$dir/vendors/intel-cpu.icd"
    echo "${intel_wheels[*]}" >"$dir/wheels/pinned"
}

platform_env() {
    unset RUSTICL_ENABLE
    case $1 in
    intel)
        local dir=$BUILD_DIR/opencl/intel
        intel_setup "$dir" || { echo "setup: Intel's OpenCL CPU runtime could not be installed" >&2; return 1; }
        export OCL_ICD_VENDORS=$dir/vendors
        local libs
        libs=$(printf '%s:' "$dir"/unpacked/*/data/lib)
        export LD_LIBRARY_PATH=${libs%:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
        ;;
    rusticl)
        export OCL_ICD_VENDORS=/etc/OpenCL/vendors/rusticl.icd RUSTICL_ENABLE=llvmpipe
        ;;
    *)
        export OCL_ICD_VENDORS=/etc/OpenCL/vendors/$1.icd
        ;;
    esac
    [ -d "$OCL_ICD_VENDORS" ] || [ -f "$OCL_ICD_VENDORS" ] || { echo "setup: no OpenCL platform $1 ($OCL_ICD_VENDORS)" >&2; return 1; }
}
