# Sourced by the NVIDIA offline checks (test_portability.sh,
# test_wgmma_splice.sh): ptxas, and nvbin, the folder of cuobjdump and
# nvdisasm (cuobjdump needs nvdisasm on PATH), first from the tools venv's
# pinned PyPI copies (scripts/setup.sh: the figures the suite bounds are
# that ptxas's), else from PATH or CUDA's place; ptxas names a missing file,
# nvbin is empty, where none has them.
ptxas= nvbin=
for d in "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"/.venv-tools/lib/python3*/site-packages/nvidia/*/bin; do
    [ -x "$d/ptxas" ] && ptxas=$d/ptxas
    [ -x "$d/cuobjdump" ] && [ -x "$d/nvdisasm" ] && nvbin=$d
done
[ -n "$ptxas" ] || ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
if [ -z "$nvbin" ] && command -v cuobjdump >/dev/null && command -v nvdisasm >/dev/null; then
    nvbin=$(dirname "$(command -v cuobjdump)")
fi
