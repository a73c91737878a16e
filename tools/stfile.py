"""Writing safetensors files the way every tool here does: metadata keys sorted
(byte-identical re-runs), written through a temporary file, and readable by
others (safetensors creates files 0600).  Also the ``--meta KEY=VALUE`` flag
the exporters share."""
import collections
import json
import os
import struct
import sys


def sort_metadata(path):
    """safetensors' save_file writes __metadata__ in hash order; rewrite the
    header with the metadata keys sorted so that re-running gives
    byte-identical files (the tensor order, offsets and padding are kept)."""
    with open(path, "rb") as f:
        buf = f.read()
    n = struct.unpack("<Q", buf[:8])[0]
    raw = buf[8:8 + n]
    hdr = json.loads(raw, object_pairs_hook=collections.OrderedDict)

    def dump(h):
        s = json.dumps(h, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        return s + b" " * (-(8 + len(s)) % 8)

    if dump(hdr) != raw:  # another safetensors version: leave its bytes alone
        print(f"note: {path}: unfamiliar header layout, metadata order not normalised",
              file=sys.stderr)
        return
    if "__metadata__" in hdr:
        hdr["__metadata__"] = collections.OrderedDict(sorted(hdr["__metadata__"].items()))
    new = dump(hdr)
    assert len(new) == n
    with open(path, "wb") as f:
        f.write(buf[:8] + new + buf[8 + n:])


def write(tensors, path, metadata):
    """save_file(tensors, path, metadata) with sorted metadata, replacing
    ``path`` only once the file is complete, with the umask's permissions."""
    from safetensors.torch import save_file

    tmp = path + ".tmp"
    save_file(tensors, tmp, metadata=metadata)
    sort_metadata(tmp)
    os.replace(tmp, path)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def parse_meta(pairs, error):
    """``--meta KEY=VALUE`` flags as a dict; ``error`` (argparse's) on a bad one."""
    meta = {}
    for kv in pairs:
        if "=" not in kv:
            error(f"--meta {kv!r}: expected KEY=VALUE")
        k, v = kv.split("=", 1)
        meta[k] = v
    return meta
