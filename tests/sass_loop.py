#!/usr/bin/env python3
"""The main loop of a kernel's SASS (cuobjdump -sass): of the loops (a
backward branch to an earlier address, the span between them), the one with
the most of the instruction MNEMONIC (the matrix instruction, exactly:
HMMA.16816.F32 is FP16's, not a prefix of BF16's), the innermost on a tie.
Prints "INSTRUCTIONS MATRIX_INSTRUCTIONS PER_ONE" for that span (both paths
of a branch inside it count), or "0 0 none" without such a loop.

    sass_loop.py KERNEL.sass MNEMONIC
"""
import re
import sys

LINE = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P[0-9T]\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")


def main():
    path, want = sys.argv[1], sys.argv[2]
    ins = []  # (address, mnemonic, branch target or None)
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            target = None
            if m.group(3).startswith("BRA"):
                t = re.search(r"0x([0-9a-f]+)", m.group(4))
                target = int(t.group(1), 16) if t else None
            ins.append((int(m.group(1), 16), m.group(3), target))
    best = None  # ((matrix instructions, -length), length, matrix instructions)
    for addr, _, target in ins:
        if target is None or target > addr:
            continue
        body = [op for a, op, _ in ins if target <= a <= addr]
        n = sum(op == want for op in body)
        if n and (best is None or (n, -len(body)) > best[0]):
            best = ((n, -len(body)), len(body), n)
    print(f"{best[1]} {best[2]} {best[1] / best[2]:.1f}" if best else "0 0 none")


if __name__ == "__main__":
    main()
