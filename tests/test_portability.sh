#!/bin/sh
# Every kernel file compiles standalone, as shipped and with each set of
# host defines the library uses, for GPUs we have no hardware for:
# Intel Gen12LP (tgllp) and Arc (dg2) with ocloc, AMD GCN5 (gfx906), CDNA2
# (gfx90a), RDNA2 (gfx1030) and RDNA3 (gfx1100) with clang-15 + libclc.
# Prints the register and scratch use the compilers report (AMD: VGPRs and
# scratch bytes per lane; Intel: scratch bytes per thread, from the patch
# tokens ocloc disasm dumps) and fails on any scratch, i.e. on spilling.
# Exits 77 (skip) when neither compiler is installed.
set -u
src=$1
lib=$src/../lib
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
libclc=/usr/lib/clc/amdgcn--amdhsa.bc
have_ocloc=0; command -v ocloc >/dev/null && have_ocloc=1
have_amd=0; command -v clang-15 >/dev/null && [ -f "$libclc" ] && have_amd=1
if [ $have_ocloc = 0 ] && [ $have_amd = 0 ]; then
    echo "SKIP: neither ocloc (intel-opencl-icd) nor clang-15 + libclc-15 is installed"
    exit 77
fi

# The define sets of kernel file $1, one per line, options separated by
# commas; "none" compiles with the file's own defaults.
define_sets() {
    echo none
    case $1 in
    gemm)
        # every tiling in lib/ops/gemm_kernel.c ({tm, tn, tk, wm, wn}), with
        # neither, A, B or both operands stored as half
        sed -n 's/.*{\([0-9]*\), \([0-9]*\), \([0-9]*\), \([0-9]*\), \([0-9]*\)}.*/\1 \2 \3 \4 \5/p' \
            "$lib/ops/gemm_kernel.c" |
            while read -r tm tn tk wm wn; do
                for h in 00 10 01 11; do
                    a=${h%?}; b=${h#?}
                    echo "-DGMLP_GEMM_TM=$tm,-DGMLP_GEMM_TN=$tn,-DGMLP_GEMM_TK=$tk,-DGMLP_GEMM_WM=$wm,-DGMLP_GEMM_WN=$wn,-DGMLP_GEMM_A_HALF=$a,-DGMLP_GEMM_B_HALF=$b"
                done
            done
        ;;
    *)
        # the work-group sizes the host may choose (lib/cl/context.c: pick_wg)
        printf '%s\n' -DGMLP_WG=64 -DGMLP_WG=32 -DGMLP_WG=16 -DGMLP_WG=1
        ;;
    esac
}

# Short name of a define set for the report: "64x64x16/4x4 A:half B:float".
label() {
    case $1 in
    none) echo "defaults" ;;
    *GMLP_GEMM*)
        echo "$1" | tr ',' '\n' | sed 's/^-DGMLP_GEMM_//' | {
            while IFS== read -r k v; do eval "$k=$v"; done
            ta=float; [ "$A_HALF" = 1 ] && ta=half
            tb=float; [ "$B_HALF" = 1 ] && tb=half
            echo "${TM}x${TN}x${TK}/${WM}x${WN} A:$ta B:$tb"
        } ;;
    *) echo "$1" | tr ',' ' ' ;;
    esac
}

# Intel scratch bytes per thread: patch token 18 (MEDIA_VFE_STATE) holds
# PerThreadScratchSpace in bytes 4..7; no token, no scratch.  "?" when the
# binary is not in the patch-token format.
intel_scratch() {
    rm -rf "$tmp/dis"
    ocloc disasm -file "$1" -device "$2" -dump "$tmp/dis" >/dev/null 2>&1
    [ -f "$tmp/dis/PTM.txt" ] || { echo "?"; return; }
    awk 'function hx(s, i, v) {
             for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(tolower(s), i, 1)) - 1
             return v
         }
         /^\t4 Token 18$/ {t = 1}
         t && /^\tHex/ {n = hx($9) * 16777216 + hx($8) * 65536 + hx($7) * 256 + hx($6); exit}
         END {print n + 0}' "$tmp/dis/PTM.txt"
}

pass=0
fail=0
for f in "$src"/*.cl; do
    k=$(basename "$f" .cl)
    sets=$(define_sets "$k")
    [ "$k" = gemm ] && [ "$(echo "$sets" | wc -l)" -lt 5 ] && { fail=$((fail + 1)); echo "FAIL: no tilings found in $lib/ops/gemm_kernel.c"; }
    for set in $sets; do
        defs=$(echo "$set" | tr ',' ' ')
        [ "$set" = none ] && defs=""
        name=$(label "$set")
        if [ $have_ocloc = 1 ]; then
            for dev in tgllp dg2; do
                rm -rf "$tmp/ocl"
                if ocloc compile -q -file "$f" -device $dev -options "-cl-std=CL1.2 $defs" -out_dir "$tmp/ocl" \
                    >"$tmp/log" 2>&1; then
                    pass=$((pass + 1))
                    scratch=$(intel_scratch "$(ls "$tmp"/ocl/*.bin | head -n 1)" $dev)
                    if [ "$k" = gemm ] || [ "$set" = none ]; then
                        echo "$k $dev [$name]: scratch $scratch bytes/thread"
                    fi
                    [ "$scratch" = 0 ] || [ "$scratch" = "?" ] || { fail=$((fail + 1)); echo "FAIL: $k spills on $dev [$name]"; }
                else
                    fail=$((fail + 1)); echo "FAIL: $k $dev [$name]"; cat "$tmp/log"
                fi
            done
        fi
        if [ $have_amd = 1 ]; then
            for cpu in gfx906 gfx90a gfx1030 gfx1100; do
                if clang-15 -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -target amdgcn-amd-amdhsa \
                    -mcpu=$cpu -nogpulib -O2 -Xclang -mlink-bitcode-file -Xclang "$libclc" $defs \
                    -Rpass-analysis=kernel-resource-usage -c "$f" -o "$tmp/k.o" >"$tmp/log" 2>&1; then
                    pass=$((pass + 1))
                    vgpr=$(grep -o 'VGPRs: [0-9]*' "$tmp/log" | head -n 1)
                    scratch=$(grep -o 'ScratchSize \[bytes/lane\]: [0-9]*' "$tmp/log" | head -n 1 | grep -o '[0-9]*$')
                    if [ "$k" = gemm ] || [ "$set" = none ]; then
                        echo "$k $cpu [$name]: $vgpr, scratch ${scratch:-?} bytes/lane"
                    fi
                    [ "${scratch:-0}" = 0 ] || { fail=$((fail + 1)); echo "FAIL: $k spills on $cpu [$name]"; }
                else
                    fail=$((fail + 1)); echo "FAIL: $k $cpu [$name]"; cat "$tmp/log"
                fi
            done
        fi
    done
done
echo "portability: $pass compilations passed, $fail failed"
[ $fail = 0 ]
