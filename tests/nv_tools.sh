# Sourced by the NVIDIA offline checks (test_portability.sh,
# test_wgmma_splice.sh): ptxas, from PATH or CUDA's place; nvbin, the folder
# of cuobjdump and nvdisasm (cuobjdump needs nvdisasm on PATH), from PATH or
# the tools venv's PyPI copies (scripts/setup.sh), empty where neither has
# them.
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
nvbin=
if command -v cuobjdump >/dev/null && command -v nvdisasm >/dev/null; then
    nvbin=$(dirname "$(command -v cuobjdump)")
else
    for d in "$(dirname "${BASH_SOURCE[0]}")"/../.venv-tools/lib/python3*/site-packages/nvidia/*/bin; do
        [ -x "$d/cuobjdump" ] && [ -x "$d/nvdisasm" ] && nvbin=$d
    done
fi
