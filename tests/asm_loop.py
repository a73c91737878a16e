#!/usr/bin/env python3
"""The main loop of a kernel's machine code: NVIDIA's SASS (cuobjdump -sass),
AMD's GCN/RDNA assembly (clang -S) or Intel's Gen assembly (ocloc disasm's
IGA text), told apart by their lines.  Of the loops (a backward branch to an
earlier label or address, the span between them), the one with the most of
the matrix instruction MNEMONIC, the innermost on a tie.  SASS matches the
mnemonic exactly (HMMA.16816.F32 is FP16's, not a prefix of BF16's); AMD's
and Intel's by prefix (v_mfma, v_wmma, dpas: their shapes follow).  Prints
"INSTRUCTIONS MATRIX_INSTRUCTIONS PER_ONE" for that span (both paths of a
branch inside it count), or "0 0 none" without such a loop.

    asm_loop.py KERNEL.{sass,s,asm} MNEMONIC
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
    if any(SASS.match(line) for line in lines):
        ins, match = sass(lines), (lambda op: op == want)
    elif any(AMD_LABEL.match(line) for line in lines) or any(line.startswith("\ts_") for line in lines):
        ins, match = labelled(lines, AMD_LABEL, AMD_INS, amd_targets), (lambda op: op.startswith(want))
    else:
        ins, match = labelled(lines, INTEL_LABEL, INTEL_INS, intel_targets), (lambda op: op.startswith(want))
    best = None  # ((matrix instructions, -length), length, matrix instructions)
    for pos, _, target in ins:
        if target is None or target > pos:
            continue
        body = [op for p, op, _ in ins if target <= p <= pos]
        n = sum(match(op) for op in body)
        if n and (best is None or (n, -len(body)) > best[0]):
            best = ((n, -len(body)), len(body), n)
    print(f"{best[1]} {best[2]} {best[1] / best[2]:.1f}" if best else "0 0 none")


if __name__ == "__main__":
    main()
