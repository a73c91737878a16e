#!/bin/sh
# Every kernel file compiles standalone, as shipped and with each set of
# host defines the library uses, for GPUs we have no hardware for:
# Intel Gen12LP (tgllp) and Arc (dg2) with ocloc, AMD GCN5 (gfx906), CDNA2
# (gfx90a), RDNA2 (gfx1030) and RDNA3 (gfx1100) with clang-15 + libclc.
# Prints the register / scratch use the compilers report.
# Exits 77 (skip) when neither compiler is installed.
set -u
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
libclc=/usr/lib/clc/amdgcn--amdhsa.bc
have_ocloc=0; command -v ocloc >/dev/null && have_ocloc=1
have_amd=0; command -v clang-15 >/dev/null && [ -f "$libclc" ] && have_amd=1
if [ $have_ocloc = 0 ] && [ $have_amd = 0 ]; then
    echo "SKIP: neither ocloc (intel-opencl-icd) nor clang-15 + libclc-15 is installed"
    exit 77
fi
# the work-group sizes the host may choose (lib/cl/context.c: pick_wg)
define_sets="none -DGMLP_WG=64 -DGMLP_WG=32 -DGMLP_WG=16 -DGMLP_WG=1"
pass=0
fail=0
for f in "$src"/*.cl; do
    k=$(basename "$f" .cl)
    for defs in $define_sets; do
        [ "$defs" = none ] && defs=""
        if [ $have_ocloc = 1 ]; then
            for dev in tgllp dg2; do
                if ocloc compile -q -file "$f" -device $dev -options "-cl-std=CL1.2 $defs" -out_dir "$tmp" \
                    >"$tmp/log" 2>&1; then
                    pass=$((pass + 1))
                else
                    fail=$((fail + 1)); echo "FAIL: $k $dev '$defs'"; cat "$tmp/log"
                fi
            done
        fi
        if [ $have_amd = 1 ]; then
            for cpu in gfx906 gfx90a gfx1030 gfx1100; do
                if clang-15 -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -target amdgcn-amd-amdhsa \
                    -mcpu=$cpu -nogpulib -O2 -Xclang -mlink-bitcode-file -Xclang "$libclc" $defs \
                    -Rpass-analysis=kernel-resource-usage -c "$f" -o "$tmp/k.o" >"$tmp/log" 2>&1; then
                    pass=$((pass + 1))
                    if [ -z "$defs" ]; then
                        vgpr=$(grep -o 'VGPRs: [0-9]*' "$tmp/log" | head -n 1)
                        scratch=$(grep -o 'ScratchSize \[bytes/lane\]: [0-9]*' "$tmp/log" | head -n 1 | grep -o '[0-9]*$')
                        echo "$k $cpu: $vgpr, scratch ${scratch:-?} bytes/lane"
                        [ "${scratch:-0}" = 0 ] || { fail=$((fail + 1)); echo "FAIL: $k spills on $cpu"; }
                    fi
                else
                    fail=$((fail + 1)); echo "FAIL: $k $cpu '$defs'"; cat "$tmp/log"
                fi
            done
        fi
    done
done
echo "portability: $pass compilations passed, $fail failed"
[ $fail = 0 ]
