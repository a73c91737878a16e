#!/usr/bin/env python3
"""The main loop of a kernel's machine code: NVIDIA's SASS (cuobjdump -sass),
AMD's GCN/RDNA assembly (clang -S), Intel's Gen assembly (ocloc disasm's
IGA text) or x86 (objdump -d of a CPU runtime's kernel), told apart by
their lines.  Of the loops (a backward branch to an earlier label or
address, the span between them), the one with the most of the matrix
instruction MNEMONIC, the innermost on a tie; on x86, whose kernels a CPU
runtime wraps in loops over the work-items (each holding the k loop), of
the innermost loops holding MNEMONIC the one with the fewest instructions
for each of it.  SASS matches the
mnemonic exactly (HMMA.16816.F32 is FP16's, not a prefix of BF16's); AMD's
and Intel's by prefix (v_mfma, v_wmma, dpas: their shapes follow), x86's
too (vfmadd231ps, vdpbf16ps).  Prints
"INSTRUCTIONS MATRIX_INSTRUCTIONS PER_ONE" for that span (both paths of a
branch inside it count), or "0 0 none" without such a loop.

    asm_loop.py KERNEL.{sass,s,asm,objdump} MNEMONIC
"""
import re
import sys

SASS = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P[0-9T]\s+)?([A-Z][A-Za-z0-9_.]*)([^;]*);")
AMD_LABEL = re.compile(r"^(\.LBB\w+):")
AMD_INS = re.compile(r"^\s+([a-z][a-z0-9_]*)\b(.*)")
AMD_BRANCH = re.compile(r"^s_(c?branch\w*)$")
INTEL_LABEL = re.compile(r"^(L\d+):")
INTEL_INS = re.compile(r"^(\([^)]*\))?\s+([a-z][a-z0-9_.]*)(.*)")
INTEL_BRANCHES = {"goto", "jmpi", "while", "brc", "brd"}
X86 = re.compile(r"\s+([0-9a-f]+):\s+([a-z][a-z0-9]*)\s*(.*)")


def sass(lines):
    """(position, mnemonic, target position or None) from SASS, positions its addresses."""
    out = []
    for line in lines:
        m = SASS.match(line)
        if not m:
            continue
        target = None
        if m.group(3).startswith("BRA"):
            t = re.search(r"0x([0-9a-f]+)", m.group(4))
            target = int(t.group(1), 16) if t else None
        out.append((int(m.group(1), 16), m.group(3), target))
    return out


def x86(lines):
    """(position, mnemonic, target position or None) from objdump -d --no-show-raw-insn, positions its
    addresses."""
    out = []
    for line in lines:
        m = X86.match(line)
        if m:
            t = re.match(r"([0-9a-f]+) <", m.group(3)) if m.group(2).startswith("j") else None
            out.append((int(m.group(1), 16), m.group(2), int(t.group(1), 16) if t else None))
    return out


def labelled(lines, label, ins, branch_targets):
    """(position, mnemonic, [target labels]) from assembly with labels, positions the instructions' order,
    then the targets resolved to the labels' positions (the next instruction's)."""
    raw, at = [], {}
    for line in lines:
        m = label.match(line)
        if m:
            at[m.group(1)] = len(raw)
            continue
        m = ins.match(line)
        if m:
            op, rest = m.group(m.lastindex - 1), m.group(m.lastindex)
            raw.append((op, branch_targets(op, rest)))
    out = []
    for pos, (op, targets) in enumerate(raw):
        back = [at[t] for t in targets if t in at and at[t] <= pos]
        out.append((pos, op, min(back) if back else None))
    return out


def amd_targets(op, rest):
    if not AMD_BRANCH.match(op):
        return []
    return re.findall(r"\.LBB\w+", rest.split(";")[0])


def intel_targets(op, rest):
    return re.findall(r"\bL\d+\b", rest.split("//")[0]) if op.split(".")[0] in INTEL_BRANCHES else []


def main():
    path, want = sys.argv[1], sys.argv[2]
    with open(path) as f:
        lines = f.read().splitlines()
    on_x86 = any(X86.match(line) for line in lines)
    if on_x86:
        ins, match = x86(lines), (lambda op: op.startswith(want))
    elif any(SASS.match(line) for line in lines):
        ins, match = sass(lines), (lambda op: op == want)
    elif any(AMD_LABEL.match(line) for line in lines) or any(line.startswith("\ts_") for line in lines):
        ins, match = labelled(lines, AMD_LABEL, AMD_INS, amd_targets), (lambda op: op.startswith(want))
    else:
        ins, match = labelled(lines, INTEL_LABEL, INTEL_INS, intel_targets), (lambda op: op.startswith(want))
    loops = []  # (first, last, instructions, matrix instructions)
    for pos, _, target in ins:
        if target is None or target > pos:
            continue
        body = [op for p, op, _ in ins if target <= p <= pos]
        n = sum(match(op) for op in body)
        if n:
            loops.append((target, pos, len(body), n))
    if on_x86:  # the innermost (no other such loop inside), the fewest instructions for each
        loops = [x for x in loops if not any(y != x and x[0] <= y[0] and y[1] <= x[1] for y in loops)]
        best = max(loops, key=lambda x: (-x[2] / x[3], x[3]), default=None)
    else:  # the most, the innermost on a tie
        best = max(loops, key=lambda x: (x[3], -x[2]), default=None)
    print(f"{best[2]} {best[3]} {best[2] / best[3]:.1f}" if best else "0 0 none")


if __name__ == "__main__":
    main()
