#!/usr/bin/env bash
# Every OpenCL program the library may build, with each set of options it
# may build it with (listed by the library itself: tests/kernel_programs),
# compiles for GPUs we have no hardware for: Intel Gen12LP (tgllp) and Arc
# (dg2) with ocloc, AMD GCN5 (gfx906), CDNA2 (gfx90a), RDNA2 (gfx1030) and
# RDNA3 (gfx1100) with clang-15 + libclc, and NVIDIA Ampere (sm_80) and
# Hopper (sm_90): clang-15 with libclc's nvptx64--nvidiacl.bc emits PTX for
# sm_80 (it knows no sm_90), which ptxas (CUDA toolkit) assembles for both;
# without ptxas the NVIDIA targets print SKIP.  Variants listed as
# "gemm_tiled.cl@nvidia" (deeper slices only NVIDIA GPUs get) compile for NVIDIA only.  Prints the register and scratch
# use the compilers report (AMD: VGPRs and scratch bytes per lane; Intel:
# scratch bytes per thread, from the patch tokens ocloc disasm dumps) and
# fails on any scratch, i.e. on spilling (NVIDIA: registers per thread; any
# stack frame or spill fails).  Intel scratch that cannot be parsed ("?")
# fails for GEMM variants.  The tensor-core GEMM (gemm_mma.cl, which the
# list leaves out: the library builds it only where the capability ladder
# passed) compiles in each precision's instruction and the model's forms, for
# sm_90 each form, for sm_80 each row's first: no spill, and the
# instruction's HMMA (the ldmatrix rows'
# LDSM too, FP16's half operands' saturation HMNMX2) in the SASS (cuobjdump
# and nvdisasm: PyPI's nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm, which
# scripts/setup.sh installs into the tools venv; with CI set, their absence
# fails).  Exits 77 (skip) when neither compiler is installed.
#   test_portability.sh KERNEL_PROGRAMS
set -u
programs=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
libclc=/usr/lib/clc/amdgcn--amdhsa.bc
have_ocloc=0; command -v ocloc >/dev/null && have_ocloc=1
have_amd=0; command -v clang-15 >/dev/null && [ -f "$libclc" ] && have_amd=1
nvclc=/usr/lib/clc/nvptx64--nvidiacl.bc
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
have_nv=0; command -v clang-15 >/dev/null && [ -f "$nvclc" ] && [ -x "$ptxas" ] && have_nv=1
[ $have_nv = 1 ] || echo "SKIP: NVIDIA sm_80/sm_90 (needs clang-15, libclc-15's nvptx64--nvidiacl.bc and ptxas)"
if [ $have_ocloc = 0 ] && [ $have_amd = 0 ] && [ $have_nv = 0 ]; then
    echo "SKIP: neither ocloc (intel-opencl-icd) nor clang-15 + libclc-15 is installed"
    exit 77
fi
mkdir "$tmp/src"
w=$tmp/main # the scratch directory of what runs in this shell (spawn: a job's own)
mkdir "$w"
"$programs" "$tmp/src" gemm_mma.cl >"$tmp/list" || { echo "FAIL: $programs"; exit 1; }

# Short name of a variant for the report: "gemm 64x64x16/4x4 A:half B:float".
label() {
    case $2 in
    *GMLP_GEMM*)
        echo "$2" | tr ' ' '\n' | grep GMLP_GEMM | sed 's/^-DGMLP_GEMM_//' | {
            while IFS== read -r k v; do eval "$k=$v"; done
            ta=float; [ "$A_HALF" = 1 ] && ta=half; [ "${A_BF16:-0}" = 1 ] && ta=bf16
            tb=float; [ "$B_HALF" = 1 ] && tb=half; [ "${B_BF16:-0}" = 1 ] && tb=bf16
            tc=; [ "${C_BF16:-0}" = 1 ] && tc=" C:bf16"; [ "${C_HALF:-0}" = 1 ] && tc=" C:half"
            tr=NN; [ "$TA$TB" = 01 ] && tr=NT; [ "$TA$TB" = 10 ] && tr=TN; [ "$TA$TB" = 11 ] && tr=TT
            echo "${1%.cl} ${TM}x${TN}x${TK}/${WM}x${WN} $tr v$VW A:$ta B:$tb$tc"
        } ;;
    *) echo "${1%.cl} $2" ;;
    esac
}

# Intel scratch bytes per thread: patch token 18 (MEDIA_VFE_STATE) holds
# PerThreadScratchSpace in bytes 4..7; no token, no scratch.  "?" when the
# binary is not in the patch-token format.
intel_scratch() {
    rm -rf "$w/dis"
    ocloc disasm -file "$1" -device "$2" -dump "$w/dis" >/dev/null 2>&1
    [ -f "$w/dis/PTM.txt" ] || { echo "?"; return; }
    awk 'function hx(s, i, v) {
             for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(tolower(s), i, 1)) - 1
             return v
         }
         /^\t4 Token 18$/ {t = 1}
         t && /^\tHex/ {n = hx($9) * 16777216 + hx($8) * 65536 + hx($7) * 256 + hx($6); exit}
         END {print n + 0}' "$w/dis/PTM.txt"
}

# The compilations run as jobs, as many at a time as the machine has cores
# (GMLP_TEST_JOBS): spawn runs a command in the background with its own
# scratch directory $w and its own pass and fail counts; collect waits for
# them all, prints their output in the order spawned and adds up the counts.
jobs_max=${GMLP_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
njob=0 done_jobs=0
spawn() {
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
    njob=$((njob + 1))
    (
        w=$tmp/w$njob pass=0 fail=0
        mkdir -p "$w"
        "$@" >"$tmp/out.$njob" 2>&1
        echo "$pass $fail" >"$tmp/count.$njob"
        rm -rf "$w"
    ) &
}
collect() {
    wait
    while [ $done_jobs -lt $njob ]; do
        done_jobs=$((done_jobs + 1))
        cat "$tmp/out.$done_jobs"
        read -r p f <"$tmp/count.$done_jobs" || { p=0 f=1; echo "FAIL: job $done_jobs left no counts"; }
        pass=$((pass + p)) fail=$((fail + f))
    done
}

pass=0
fail=0
variants=0
# one program variant on every target: FILE DEFS
check_variant() {
    local file=$1 defs=$2
    # "gemm_tiled.cl@nvidia": a variant the library gives NVIDIA GPUs only
    only=
    case $file in *@*) only=${file#*@}; file=${file%%@*} ;; esac
    case $file in gemm_xmx.cl | gemm_mfma.cl) return ;; esac # the matrix engines' sections below
    f=$tmp/src/$file
    name="$(label "$file" "$defs")${only:+ ($only only)}"
    if [ $have_ocloc = 1 ] && [ -z "$only" ]; then
        for dev in tgllp dg2; do
            rm -rf "$w/ocl"
            if ocloc compile -q -file "$f" -device $dev -options "-cl-std=CL1.2 $defs" -out_dir "$w/ocl" \
                >"$w/log" 2>&1; then
                pass=$((pass + 1))
                scratch=$(intel_scratch "$(ls "$w"/ocl/*.bin | head -n 1)" $dev)
                echo "$name $dev: scratch $scratch bytes/thread"
                case $scratch:$file in
                0:*) ;;
                "?":gemm_*.cl) fail=$((fail + 1)); echo "FAIL: $name on $dev: scratch not readable" ;;
                "?":*) ;;
                *) fail=$((fail + 1)); echo "FAIL: $name spills on $dev" ;;
                esac
            else
                fail=$((fail + 1)); echo "FAIL: $name $dev"; cat "$w/log"
            fi
        done
    fi
    if [ $have_amd = 1 ] && [ -z "$only" ]; then
        for cpu in gfx906 gfx90a gfx1030 gfx1100; do
            # shellcheck disable=SC2086
            if clang-15 -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -target amdgcn-amd-amdhsa \
                -mcpu=$cpu -nogpulib -O2 -Xclang -mlink-bitcode-file -Xclang "$libclc" $defs \
                -Rpass-analysis=kernel-resource-usage -c "$f" -o "$w/k.o" >"$w/log" 2>&1; then
                pass=$((pass + 1))
                vgpr=$(grep -o 'VGPRs: [0-9]*' "$w/log" | sort -t' ' -k2 -n | tail -n 1)
                scratch=$(grep -o 'ScratchSize \[bytes/lane\]: [0-9]*' "$w/log" | grep -o '[0-9]*$' | sort -n | tail -n 1)
                echo "$name $cpu: max $vgpr, scratch ${scratch:-?} bytes/lane"
                [ "${scratch:-0}" = 0 ] || { fail=$((fail + 1)); echo "FAIL: $name spills on $cpu"; }
            else
                fail=$((fail + 1)); echo "FAIL: $name $cpu"; cat "$w/log"
            fi
        done
    fi
    if [ $have_nv = 1 ] && { [ -z "$only" ] || [ "$only" = nvidia ]; }; then
        # shellcheck disable=SC2086
        if clang-15 -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -target nvptx64-nvidia-nvcl -march=sm_80 \
            -O2 -Wno-linker-warnings -Xclang -mlink-bitcode-file -Xclang "$nvclc" $defs -S "$f" -o "$w/k.ptx" \
            >"$w/log" 2>&1; then
            # a vector access to local memory needs an array aligned to the vector: the
            # language aligns a float array to 4 only, and ld.shared.v4 on it faulted on an H100
            misaligned=$(awk '/\.shared \.align/ { a = $3 + 0; if (min == "" || a < min) min = a }
                /(ld|st)\.shared\.v4/ { v = 16 } /(ld|st)\.shared\.v2/ { if (v < 8) v = 8 }
                END { if (v && min != "" && min < v) print v "-byte local-memory vectors on a " min "-byte aligned array" }' \
                "$w/k.ptx")
            [ -z "$misaligned" ] || { fail=$((fail + 1)); echo "FAIL: $name nvptx: $misaligned"; }
            for sm in sm_80 sm_90; do
                if "$ptxas" -v -arch=$sm "$w/k.ptx" -o "$w/k.cubin" >"$w/log" 2>&1; then
                    pass=$((pass + 1))
                    regs=$(grep -o 'Used [0-9]* registers' "$w/log" | grep -o '[0-9]*' | sort -n | tail -n 1)
                    bad=$(grep -o '[0-9]* bytes stack frame, [0-9]* bytes spill stores, [0-9]* bytes spill loads' \
                        "$w/log" | grep -v '^0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads' | head -n 1)
                    echo "$name $sm: max $regs registers${bad:+, $bad}"
                    [ -z "$bad" ] || { fail=$((fail + 1)); echo "FAIL: $name spills on $sm"; }
                else
                    fail=$((fail + 1)); echo "FAIL: $name ptxas $sm"; cat "$w/log"
                fi
            done
        else
            fail=$((fail + 1)); echo "FAIL: $name nvptx"; cat "$w/log"
        fi
    fi
}
while read -r file defs; do
    variants=$((variants + 1))
    spawn check_variant "$file" "$defs" </dev/null
done <"$tmp/list"
collect
[ "$variants" -ge 10 ] || { fail=$((fail + 1)); echo "FAIL: only $variants program variants listed"; }

# The tensor cores: SASS through cuobjdump, which needs nvdisasm on PATH (the
# tools venv's copies where PATH has none).
nvbin=
if command -v cuobjdump >/dev/null && command -v nvdisasm >/dev/null; then
    nvbin=$(dirname "$(command -v cuobjdump)")
else
    for d in "$(dirname "$0")"/../.venv-tools/lib/python3*/site-packages/nvidia/*/bin; do
        [ -x "$d/cuobjdump" ] && [ -x "$d/nvdisasm" ] && nvbin=$d
    done
fi
if [ $have_nv = 0 ] || [ -z "$nvbin" ]; then
    why="the tensor-core GEMM's SASS (needs clang-15, libclc-15's nvptx64--nvidiacl.bc, ptxas, cuobjdump and nvdisasm)"
    if [ -z "$nvbin" ] && [ -n "${CI:-}" ]; then
        fail=$((fail + 1)); echo "FAIL: $why: cuobjdump or nvdisasm missing (scripts/setup.sh installs them)"
    else
        echo "SKIP: $why"
    fi
else
    export PATH="$nvbin:$PATH"
    # one form of a tiling: FORM PRECISION HMMA TM TN TK STAGES LDSM ARCHS (WM, WN: the row's)
    check_mma_form() {
        local form=$1 tb ah bh ch defs ld name regs smem bad hmma ldsm hmnmx archs=$9
        shift
        tb=${form%%:*} ah=${form#*:}; ah=${ah%%:*} bh=${form#*:*:}; bh=${bh%%:*} ch=0
        case $form in *:*:*:*) ch=${form##*:} ;; esac
        defs="-DGMLP_GEMM_UNROLL=1 -DGMLP_GEMM_A_HALF=$((ah == 1)) -DGMLP_GEMM_B_HALF=$((bh == 1))"
        [ "$ch" = 2 ] && defs="$defs -DGMLP_GEMM_C_BF16=1"
        [ "$ch" = 1 ] && defs="$defs -DGMLP_GEMM_C_HALF=1"
        defs="$defs -DGMLP_GEMM_A_BF16=$((ah == 2)) -DGMLP_GEMM_B_BF16=$((bh == 2)) -DGMLP_GEMM_TA=0 -DGMLP_GEMM_TB=$tb"
        defs="$defs -DGMLP_GEMM_VW=4 -DGMLP_GEMM_TM=$3 -DGMLP_GEMM_TN=$4 -DGMLP_GEMM_TK=$5 -DGMLP_GEMM_WM=$wm"
        defs="$defs -DGMLP_GEMM_WN=$wn -DGMLP_GEMM_PRECISION=$1 -DGMLP_MMA_STAGES=$6 -DGMLP_MMA_LDSM=$7"
        ld=; [ "$7" = 1 ] && ld=" ldmatrix"
        name="$(label gemm_mma.cl "$defs") s$6$ld ${2#HMMA.}"
        # shellcheck disable=SC2086
        if ! clang-15 -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -target nvptx64-nvidia-nvcl \
            -march=sm_80 -O2 -Wno-linker-warnings -Xclang -mlink-bitcode-file -Xclang "$nvclc" $defs \
            -S "$tmp/src/gemm_mma.cl" -o "$w/k.ptx" >"$w/log" 2>&1; then
            fail=$((fail + 1)); echo "FAIL: $name nvptx"; cat "$w/log"; return
        fi
        for sm in $archs; do
            if ! "$ptxas" -v -arch=$sm "$w/k.ptx" -o "$w/k.cubin" >"$w/log" 2>&1; then
                fail=$((fail + 1)); echo "FAIL: $name ptxas $sm"; cat "$w/log"; continue
            fi
            regs=$(grep -o 'Used [0-9]* registers' "$w/log" | grep -o '[0-9]*' | sort -n | tail -n 1)
            smem=$(grep -o '[0-9]* bytes smem' "$w/log" | head -n 1)
            bad=$(grep -o '[0-9]* bytes stack frame, [0-9]* bytes spill stores, [0-9]* bytes spill loads' \
                "$w/log" | grep -v '^0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads' | head -n 1)
            # the instruction exactly ("HMMA.16816.F32" is FP16's, not a prefix of BF16's)
            cuobjdump -sass "$w/k.cubin" >"$w/k.sass" 2>&1
            hmma=$(grep -o 'HMMA[.A-Z0-9]*' "$w/k.sass" | grep -cxF "$2")
            ldsm=$(grep -c 'LDSM' "$w/k.sass")
            hmnmx=$(grep -c 'HMNMX2' "$w/k.sass")
            echo "$name $sm: $regs registers, $smem, $hmma $2${ld:+, $ldsm LDSM}${bad:+, $bad}"
            if [ -n "$bad" ]; then
                fail=$((fail + 1)); echo "FAIL: $name spills on $sm"
            elif [ "$hmma" = 0 ]; then
                fail=$((fail + 1)); echo "FAIL: $name on $sm: no $2 in the SASS"
            elif [ -n "$ld" ] && { [ "$6" = 0 ] || [ "$bh" = 2 ] || { [ "$1" = 2 ] && [ "$bh" = 1 ]; }; } &&
                [ "$ldsm" = 0 ]; then
                fail=$((fail + 1)); echo "FAIL: $name on $sm: no LDSM in the SASS"
            elif [ "$1" = 2 ] && { [ "$ah" = 1 ] || [ "$bh" = 1 ]; } && [ "$hmnmx" = 0 ]; then
                # half operands taken as the instruction's bits: saturated by max / min of f16x2
                fail=$((fail + 1)); echo "FAIL: $name on $sm: no HMNMX2 (FP16's saturation) in the SASS"
            else
                pass=$((pass + 1))
            fi
        done
    }
    # lib/ops/gemm_tilings.c's tensor-core tilings, a line per tiling and precision (kernel_programs
    # --mma): each in one of the model's forms, in turn; a default tiling in all four, in its first precision
    # TB:A:B[:C], A, B and C 0 float, 1 half, 2 bfloat16 (C float unless given): NT, NT with half weights, NN, NN
    # with half weights
    all_forms="1:0:0 1:0:1 0:0:0 0:1:0"
    "$programs" --mma >"$tmp/mma" || { fail=$((fail + 1)); echo "FAIL: $programs --mma"; }
    i=0 seen=" "
    while read -r prec tm tn tk wm wn stages ldsm default floats; do
        case $prec in 1) hmma=HMMA.1688.F32.TF32 ;; 2) hmma=HMMA.16816.F32 ;; *) hmma=HMMA.16816.F32.BF16 ;; esac
        set -- $all_forms
        shift $((i % 4))
        forms=$1 i=$((i + 1))
        case $seen in *" ${tm}x${tn}x${tk}s${stages}l$ldsm "*) ;; *)
            seen="$seen${tm}x${tn}x${tk}s${stages}l$ldsm "
            [ "$default" = 1 ] && forms=$all_forms ;;
        esac
        # a default's BF16 with bfloat16 weights, as a BF16 model stores them (the bits packed as they are)
        # (and the ldmatrix rows', whose cp.async staging loads by ldmatrix only bfloat16 operands)
        [ "$prec" = 3 ] && { [ "$default" = 1 ] || [ "$ldsm" = 1 ]; } && forms="$forms 1:0:2"
        # and FP16's cp.async ldmatrix rows of half operands (loaded by ldmatrix, then saturated)
        [ "$prec" = 2 ] && [ "$ldsm" = 1 ] && [ "$stages" != 0 ] && [ "$floats" = 1 ] && forms="$forms 1:1:1"
        # a tiling whose cp.async slices of float operands overflow NVIDIA's 48 KiB (the host builds it for
        # 16-bit operands only): its precision's 16-bit forms, NT and NN
        h16=$((prec == 3 ? 2 : 1))
        [ "$floats" = 0 ] && forms="1:$h16:$h16 0:$h16:$h16"
        # a default's BF16 forms of a BF16 model's bfloat16 activations: fc2 of the gated product (NT, float
        # out), fc1 of the Mixer and ResMLP (NT, bfloat16 out), the spatial matmul (NN, bfloat16 out)
        [ "$prec" = 3 ] && [ "$default" = 1 ] && forms="$forms 1:2:2 1:2:2:2 0:2:2:2"
        # and FP16's of an FP16 model's half weights and activations, the same products
        [ "$prec" = 2 ] && [ "$default" = 1 ] && forms="$forms 1:1:1 1:1:1:1 0:1:1:1"
        # Hopper (sm_90) each form; Ampere (sm_80) the row's first (ptxas takes 3-6 s a form of these kernels,
        # most of this suite's time)
        archs="sm_80 sm_90"
        for form in $forms; do
            spawn check_mma_form "$form" "$prec" "$hmma" "$tm" "$tn" "$tk" "$stages" "$ldsm" "$archs" </dev/null
            archs=sm_90
        done
    done <"$tmp/mma"
    collect
fi
# The Intel and AMD matrix engines (gemm_xmx.cl, gemm_mfma.cl, which the list
# leaves out: the library builds them only where the capability ladder
# passed): a handful of variants per engine, each with as many of its
# instruction in the machine code as its tiles and k-steps per slice (fewer:
# the loops were not unrolled; IGC does so when its first, unrolled try
# spilled, and leaves no scratch to see), no call (ocloc leaves an unknown
# builtin an unresolved call) and no scratch.  Intel: dg2 (SIMD8) and pvc
# (SIMD16; TF32 there only: its dpas through inline vISA), never tgllp, which has no XMX yet "builds" dpas into invalid
# code; ocloc disasm needs libiga64.so, of which Debian ships libiga64.so.1.
# AMD: MFMA on gfx908 (no bf16_1k there), gfx90a and gfx940, WMMA on gfx1100
# in wave32 and wave64.
# With CI set, a missing compiler fails.
engine_defs() { # PRECISION TM TN TK WM WN TB A_HALF B_HALF
    echo "-DGMLP_GEMM_PRECISION=$1 -DGMLP_GEMM_TM=$2 -DGMLP_GEMM_TN=$3 -DGMLP_GEMM_TK=$4 -DGMLP_GEMM_WM=$5" \
        "-DGMLP_GEMM_WN=$6 -DGMLP_GEMM_TA=0 -DGMLP_GEMM_TB=$7 -DGMLP_GEMM_A_HALF=$8 -DGMLP_GEMM_B_HALF=$9 -DGMLP_GEMM_VW=1"
}
engine_prec() { # PRECISION ...: its name
    case $1 in 0) echo FP32 ;; 1) echo TF32 ;; 2) echo FP16 ;; 3) echo BF16 ;; esac
}
engine_missing() {
    if [ -n "${CI:-}" ]; then fail=$((fail + 1)); echo "FAIL: $1 (CI)"; else echo "SKIP: $1"; fi
}
mkdir "$tmp/eng"
"$programs" "$tmp/eng" gemm_xmx.cl gemm_mfma.cl >/dev/null || { fail=$((fail + 1)); echo "FAIL: $programs gemm_xmx.cl"; }
if [ $have_ocloc = 0 ]; then
    engine_missing "Intel XMX (needs ocloc: intel-opencl-icd)"
else
    iga=$(ldconfig -p | grep -o '/[^ ]*/libiga64\.so\.1$' | head -n 1)
    mkdir "$tmp/iga"
    [ -z "$iga" ] || ln -s "$iga" "$tmp/iga/libiga64.so"
    # device, SIMD, dpas expected; precision, tiling, form (engine_defs)
    while read -r dev simd want rest; do
        # shellcheck disable=SC2086
        defs="-DGMLP_XMX_SIMD=$simd $(engine_defs $rest)"
        name="$(label gemm_xmx.cl "$defs") $(engine_prec "${rest%% *}") SIMD$simd"
        rm -rf "$w/ocl"
        if ! ocloc compile -q -file "$tmp/eng/gemm_xmx.cl" -device "$dev" -options "-cl-std=CL1.2 $defs" \
            -out_dir "$w/ocl" >"$w/log" 2>&1; then
            fail=$((fail + 1)); echo "FAIL: $name $dev"; cat "$w/log"; continue
        fi
        scratch=$(export LD_LIBRARY_PATH="$tmp/iga${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
            intel_scratch "$(ls "$w"/ocl/*.bin | head -n 1)" "$dev")
        asm=$w/dis/gmlp_gemm_xmx_KernelHeap.asm
        dpas=$(grep -c '^ *dpas' "$asm" 2>/dev/null) calls=$(grep -c 'call' "$asm" 2>/dev/null)
        echo "$name $dev: ${dpas:-no} dpas (of $want), ${calls:-?} calls, scratch $scratch bytes/thread"
        if [ "${dpas:-0}" != "$want" ] || [ "$calls" != 0 ] || [ "$scratch" != 0 ]; then
            fail=$((fail + 1)); echo "FAIL: $name on $dev"
        else
            pass=$((pass + 1))
        fi
    done <<EOF
dg2 8 4 2 64 64 16 4 8 1 0 0
dg2 8 4 3 64 64 16 4 8 0 1 0
pvc 16 2 2 32 128 16 2 8 0 0 0
pvc 16 2 3 32 128 16 2 8 1 0 1
pvc 16 4 1 32 128 16 2 8 0 0 0
pvc 16 4 1 32 128 16 2 8 1 0 1
EOF
fi
if [ $have_amd = 0 ]; then
    engine_missing "AMD MFMA / WMMA (needs clang-15 and libclc-15)"
else
    # gfx, WMMA's wave size (0: MFMA), instructions expected; precision, tiling, form (engine_defs)
    while read -r cpu wave want rest; do
        # shellcheck disable=SC2086
        defs="$(engine_defs $rest)"
        op=v_mfma
        [ "$wave" = 0 ] || { op=v_wmma; defs="-DGMLP_MFMA_WMMA=1 -DGMLP_MFMA_WAVE=$wave $defs"; }
        [ "$wave" != 64 ] || defs="-mwavefrontsize64 $defs"
        name="$(label gemm_mfma.cl "$defs") $(engine_prec "${rest%% *}") $op${wave#0}"
        # shellcheck disable=SC2086
        if ! clang-15 -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -target amdgcn-amd-amdhsa -mcpu="$cpu" \
            -nogpulib -O2 -Xclang -mlink-bitcode-file -Xclang "$libclc" $defs -Rpass-analysis=kernel-resource-usage \
            -S "$tmp/eng/gemm_mfma.cl" -o "$w/k.s" >"$w/log" 2>&1; then
            fail=$((fail + 1)); echo "FAIL: $name $cpu"; cat "$w/log"; continue
        fi
        ops=$(grep -c "^[[:space:]]*$op" "$w/k.s")
        vgpr=$(grep -o 'VGPRs: [0-9]*' "$w/log" | head -n 1) agpr=$(grep -o 'AGPRs: [0-9]*' "$w/log" | head -n 1)
        scratch=$(grep -o 'ScratchSize \[bytes/lane\]: [0-9]*' "$w/log" | grep -o '[0-9]*$' | sort -n | tail -n 1)
        echo "$name $cpu: $ops $op (of $want), $vgpr${agpr:+, $agpr}, scratch ${scratch:-?} bytes/lane"
        if [ "$ops" != "$want" ] || [ "${scratch:-?}" != 0 ]; then
            fail=$((fail + 1)); echo "FAIL: $name on $cpu"
        else
            pass=$((pass + 1))
        fi
    done <<EOF
gfx908 0 64 0 128 128 16 8 8 1 0 0
gfx90a 0 64 1 128 128 16 8 8 0 1 0
gfx90a 0 16 2 128 128 16 8 8 1 0 1
gfx90a 0 16 3 128 128 16 8 8 0 0 0
gfx940 0 64 1 128 128 16 8 8 1 0 0
gfx940 0 16 3 128 128 16 8 8 1 0 0
gfx1100 32 4 2 64 64 16 4 8 1 0 0
gfx1100 32 4 3 64 64 16 4 8 0 1 0
gfx1100 64 4 3 64 64 16 4 4 1 0 1
gfx1100 64 4 2 64 64 16 4 4 0 1 0
EOF
fi
echo "portability: $variants program variants, $pass compilations passed, $fail failed"
[ $fail = 0 ]
