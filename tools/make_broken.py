#!/usr/bin/env python3
"""Writes a corpus of broken model files to tests/data/broken/.

Every file is derived from one of four tiny valid models (a timm gMLP and a timm
MLP-Mixer, 9 tokens each, a g-mlp-pytorch gMLP language model written by
tools/export_lm.py and a g-mlp-pytorch gMLPVision written by tools/export_vision.py;
randomised weights), with the safetensors bytes
written by hand (8-byte little-endian header length, JSON header padded with
spaces to a multiple of 8, then the data) so that each defect is exactly the
one intended.  manifest.txt lists one case per line:

    FILENAME <TAB> EXPECTED_STATUS <TAB> SUBSTRING

EXPECTED_STATUS is FORMAT, UNSUPPORTED or IO (gmlp_status without the
GMLP_ERR_ prefix) and SUBSTRING a lower-case fragment that the library's error
message should contain (compare case-insensitively).  Two IO cases are not
ordinary files: does_not_exist.safetensors is deliberately absent and
is_a_directory.safetensors is a directory.

As a check on the corpus itself, each case is also given to the reference
safetensors parser (files it must reject / accept) and, for tensor-level model
defects, to timm's (or g-mlp-pytorch's) strict load_state_dict.

    /usr/bin/python3 tools/make_broken.py [--out tests/data/broken]
"""
import argparse
import collections
import json
import os
import shutil
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_fixtures as mf  # noqa: E402  (build + randomise, shared with the e2e fixtures)
from export_lm import export_lm  # noqa: E402
from export_vision import export_vision  # noqa: E402

import torch  # noqa: E402
from safetensors import safe_open  # noqa: E402

SEED = 777

# valid bases: 3 channels, 6x6 image, patch 2 -> 9 tokens, dim 8
GMLP_KW = dict(in_chans=3, img_size=6, patch_size=2, embed_dim=8, mlp_ratio=3,
               num_blocks=2, num_classes=3, arch="gmlp")           # h=24, g=12
MIXER_KW = dict(in_chans=3, img_size=6, patch_size=2, embed_dim=8, mlp_ratio=(0.5, 2.0),
                num_blocks=2, num_classes=3, arch="mixer")         # t=4, c=16
RESMLP_KW = dict(in_chans=3, img_size=6, patch_size=2, embed_dim=8, mlp_ratio=2,
                 num_blocks=2, num_classes=3, arch="resmlp")       # ls1/ls2 [8], alpha [1, 1, 8], h=16
# g-mlp-pytorch LM: ffn 32 -> gate width 16, sgu.weight [2, 6, 6], to_qkv [12, 8]
LM_KW = dict(num_tokens=20, dim=8, depth=2, seq_len=6, causal=True, heads=2, attn_dim=4,
             shift_tokens=1)

# g-mlp-pytorch gMLPVision: 12 patch inputs (3 x 2x2), 9 tokens, ffn 16 -> gate 8, 2 heads, to_qkv [12, 8]
VIS_KW = dict(image_size=6, patch_size=2, num_classes=3, dim=8, depth=2, heads=2, ff_mult=2, channels=3,
              attn_dim=4)

NP_DT = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I32": "<i4"}


# ----------------------------------------------------------------------------
# safetensors writing by hand
def base_tensors(kw, seed):
    model, _ = mf.build(kw)
    mf.randomise(model, np.random.default_rng(seed))
    out = collections.OrderedDict()
    for k, v in model.state_dict().items():
        out[k] = ("F32", list(v.shape), v.double().numpy())
    return out


def read_st(path):
    """(tensors in file order, metadata) of an F32 safetensors file."""
    with open(path, "rb") as f:
        buf = f.read()
    n = struct.unpack("<Q", buf[:8])[0]
    hdr = json.loads(buf[8:8 + n], object_pairs_hook=collections.OrderedDict)
    meta = hdr.pop("__metadata__", {})
    out = collections.OrderedDict()
    for k, e in sorted(hdr.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        assert e["dtype"] == "F32", (k, e["dtype"])
        s, t = e["data_offsets"]
        arr = np.frombuffer(buf[8 + n + s:8 + n + t], "<f4").astype(np.float64).reshape(e["shape"])
        out[k] = ("F32", list(e["shape"]), arr)
    return out, meta


def lm_model(**kw):
    from g_mlp_pytorch import gMLP
    torch.manual_seed(0)  # the init is overwritten; this only keeps construction quiet and repeatable
    return gMLP(**dict(LM_KW, **kw)).eval()


def vision_model(**kw):
    from g_mlp_pytorch import gMLPVision
    torch.manual_seed(0)
    return gMLPVision(**dict(VIS_KW, **kw)).eval()


def lm_base(seed, tmpdir, vision=False):
    """The LM (or gMLPVision) base exactly as export_lm (export_vision) writes it:
    (tensors, metadata, file bytes)."""
    model = vision_model() if vision else lm_model()
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in model.state_dict().items():
            p.copy_(torch.from_numpy(rng.normal(0.0, 0.3, tuple(p.shape))))
    path = os.path.join(tmpdir, ".lm_base.tmp")
    if vision:
        export_vision(model.state_dict(), path)
    else:
        export_lm(model, path)
    with open(path, "rb") as f:
        blob = f.read()
    tensors, meta = read_st(path)
    os.remove(path)
    return tensors, meta, blob


def tensor_bytes(dtype, arr):
    if dtype in NP_DT:
        return np.ascontiguousarray(arr, dtype=NP_DT[dtype]).tobytes()
    if dtype == "F8_E4M3":  # any byte is a valid E4M3 value except 0x7f/0xff (NaN)
        return (np.arange(arr.size) % 0x70).astype(np.uint8).tobytes()
    raise ValueError(dtype)


def layout(tensors, meta=None):
    """Header (OrderedDict, __metadata__ first as safetensors writes it) and the
    data section, tensors in the given order, tightly packed from offset 0."""
    hdr = collections.OrderedDict()
    if meta is not None:
        hdr["__metadata__"] = collections.OrderedDict(meta)
    data = bytearray()
    for name, (dtype, shape, arr) in tensors.items():
        b = tensor_bytes(dtype, arr)
        hdr[name] = collections.OrderedDict(
            [("dtype", dtype), ("shape", list(shape)), ("data_offsets", [len(data), len(data) + len(b)])])
        data += b
    return hdr, bytes(data)


def header_json(hdr):
    return json.dumps(hdr, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def pack_raw(hbytes, data, hlen=None):
    hbytes = hbytes + b" " * (-(8 + len(hbytes)) % 8)
    n = len(hbytes) if hlen is None else hlen
    return struct.pack("<Q", n) + hbytes + data


def pack(hdr, data, hlen=None):
    return pack_raw(header_json(hdr), data, hlen)


def valid(tensors, meta=None):
    return pack(*layout(tensors, meta))


# ----------------------------------------------------------------------------
def rnd(shape, rng):
    return rng.normal(0.0, 0.3, shape)


def zip_bytes(files):
    """A zip archive of {name: bytes}, stored, with fixed dates (deterministic)."""
    import io
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, data in files.items():
            z.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), data)
    return buf.getvalue()


def changed(base, **changes):
    """A copy of tensors `base` with entries replaced (in place) or appended."""
    t = collections.OrderedDict(base)
    t.update(changes)
    return t


def cases(tmpdir):
    rng = np.random.default_rng(SEED)
    G = base_tensors(GMLP_KW, [SEED, 1])
    M = base_tensors(MIXER_KW, [SEED, 2])
    L, LMETA, lm_blob = lm_base([SEED, 3], tmpdir)
    N = 9
    cs = []  # (file, status, substring, bytes, reference-parser expectation, timm/LM kw or None)

    def add(fname, status, sub, blob, st="accept", timm=None, lm=None):
        cs.append((fname, status, sub, blob, st, timm or lm))

    def g(**changes):
        return changed(G, **changes)

    def without(t, *names):
        t = collections.OrderedDict(t)
        for n in names:
            del t[n]
        return t

    base = valid(G)
    ghdr, gdata = layout(G)
    hlen = struct.unpack("<Q", base[:8])[0]
    names = list(G)
    P0 = "blocks.0.mlp_channels."

    # --- container format -------------------------------------------------
    add("empty.safetensors", "FORMAT", "truncated", b"", st="reject")
    add("trunc_len_prefix.safetensors", "FORMAT", "truncated", base[:5], st="reject")
    add("trunc_in_header.safetensors", "FORMAT", "truncated", base[:8 + hlen // 2], st="reject")
    add("trunc_in_data.safetensors", "FORMAT", "truncated", base[:8 + hlen + len(gdata) // 2], st="reject")
    add("header_len_past_end.safetensors", "FORMAT", "header",
        pack(ghdr, gdata, hlen=hlen + len(gdata) + 64), st="reject")
    add("header_len_huge.safetensors", "FORMAT", "header",
        pack(ghdr, gdata, hlen=0xFFFFFFFFFFFFFFF8), st="reject")
    add("header_len_2p63.safetensors", "FORMAT", "header",
        pack(ghdr, gdata, hlen=1 << 63), st="reject")
    add("header_deep_nesting.safetensors", "FORMAT", "nest",
        pack_raw(b'{"a":' + b"[" * 100000 + b"]" * 100000 + b"}", b""), st="reject")
    add("header_len_small.safetensors", "FORMAT", "header", pack_raw(b"{", b""), st="reject")
    add("header_not_json.safetensors", "FORMAT", "json",
        pack_raw(b'{"stem.proj.weight": {"dtype": F32, shape: [8, 3, 2, 2]', gdata), st="reject")
    add("header_not_object.safetensors", "FORMAT", "not a safetensors file", pack_raw(b"[1,2,3]", b""), st="reject")
    # other kinds of file given as a model: the first bytes are no plausible header
    with open(os.path.join(HERE, "..", "tests", "data", "hf", "images", "rgb_small.png"), "rb") as f:
        add("not_st_png.safetensors", "FORMAT", "not a safetensors file (a png image)", f.read(), st="reject")
    add("not_st_zip.safetensors", "FORMAT", "not a safetensors file (a zip archive",
        zip_bytes({"archive/data.pkl": b"\x80\x02}q\x00."}), st="reject")
    add("not_st_text.safetensors", "FORMAT", "not a safetensors file",
        b"stem.proj.weight = [[0.1, 0.2]]\n", st="reject")
    add("header_trailing_garbage.safetensors", "FORMAT", "json",
        pack_raw(header_json(ghdr) + b"}x", gdata), st="reject")
    bad_utf8 = header_json(layout(G, {"user.note": "caf\u00e9"})[0]).replace("é".encode(), b"\xff")
    add("header_bad_utf8.safetensors", "FORMAT", "utf",
        pack_raw(bad_utf8, layout(G)[1]), st="reject")

    def with_offsets(edit):
        hdr = json.loads(header_json(ghdr), object_pairs_hook=collections.OrderedDict)
        data = edit(hdr, bytearray(gdata))
        return pack(hdr, bytes(data))

    def past_end(hdr, data):  # last tensor moved 8 bytes beyond the end of the data
        s, e = hdr[names[-1]]["data_offsets"]
        hdr[names[-1]]["data_offsets"] = [len(data) + 8, len(data) + 8 + e - s]
        return data

    def reversed_(hdr, data):
        t = hdr[P0 + "fc1.bias"]
        t["data_offsets"] = t["data_offsets"][::-1]
        return data

    def gap(hdr, data):  # 4 unused bytes before fc1.bias
        k = names.index(P0 + "fc1.bias")
        cut = hdr[names[k]]["data_offsets"][0]
        for n in names[k:]:
            hdr[n]["data_offsets"] = [o + 4 for o in hdr[n]["data_offsets"]]
        return data[:cut] + bytes(4) + data[cut:]

    def overlap(hdr, data):  # fc1.bias starts 4 bytes inside fc1.weight
        k = names.index(P0 + "fc1.bias")
        cut = hdr[names[k]]["data_offsets"][0]
        for n in names[k:]:
            hdr[n]["data_offsets"] = [o - 4 for o in hdr[n]["data_offsets"]]
        return data[:cut - 4] + data[cut:]

    def trailing(hdr, data):
        return data + bytes(16)

    def not_from_zero(hdr, data):
        for n in names:
            hdr[n]["data_offsets"] = [o + 8 for o in hdr[n]["data_offsets"]]
        return bytes(8) + data

    def negative(hdr, data):
        t = hdr[P0 + "fc1.bias"]
        t["data_offsets"] = [-4, t["data_offsets"][1]]
        return data

    def missing_offsets(hdr, data):
        del hdr[P0 + "fc2.bias"]["data_offsets"]
        return data

    add("offsets_past_end.safetensors", "FORMAT", "offset", with_offsets(past_end), st="reject")
    add("offsets_reversed.safetensors", "FORMAT", "offset", with_offsets(reversed_), st="reject")
    add("offsets_negative.safetensors", "FORMAT", "offset", with_offsets(negative), st="reject")
    add("offsets_gap.safetensors", "FORMAT", "offset", with_offsets(gap), st="reject")
    add("offsets_overlap.safetensors", "FORMAT", "offset", with_offsets(overlap), st="reject")
    add("offsets_trailing_bytes.safetensors", "FORMAT", "offset", with_offsets(trailing), st="reject")
    add("offsets_not_from_zero.safetensors", "FORMAT", "offset", with_offsets(not_from_zero), st="reject")
    add("offsets_missing.safetensors", "FORMAT", "offset", with_offsets(missing_offsets), st="reject")

    # length not matching shape x dtype (offsets still tile the data exactly)
    t = g(**{P0 + "fc1.bias": ("F32", [24], rnd(23, rng))})  # 92 bytes for a [24] F32 tensor
    hdr, data = layout(t)
    hdr[P0 + "fc1.bias"]["shape"] = [24]
    add("length_mismatch.safetensors", "FORMAT", P0 + "fc1.bias", pack(hdr, data), st="reject")
    hdr, data = layout(G)
    hdr["head.weight"]["dtype"] = "F16"  # F32 bytes: twice as long as [3, 8] x F16
    add("length_mismatch_dtype.safetensors", "FORMAT", "head.weight", pack(hdr, data), st="reject")

    def hdr_edit(fn):
        hdr, data = layout(G)
        fn(hdr)
        return pack(hdr, data)

    add("dtype_unknown.safetensors", "FORMAT", "dtype",
        hdr_edit(lambda h: h["norm.bias"].__setitem__("dtype", "F24")), st="reject")
    add("shape_negative.safetensors", "FORMAT", "shape",
        hdr_edit(lambda h: h["stem.proj.bias"].__setitem__("shape", [-8])), st="reject")
    add("shape_not_integer.safetensors", "FORMAT", "shape",
        hdr_edit(lambda h: h["stem.proj.bias"].__setitem__("shape", [8.5])), st="reject")
    # 2^62 * 2^62 * 4 bytes overflows 64 bits; the unchecked product would wrap to 0
    add("shape_overflow.safetensors", "FORMAT", "norm.bias",
        hdr_edit(lambda h: h["norm.bias"].__setitem__("shape", [1 << 62, 1 << 62, 1 << 4])), st="reject")
    add("entry_not_object.safetensors", "FORMAT", "stem.proj.bias",
        hdr_edit(lambda h: h.__setitem__("stem.proj.bias", [1, 2, 3])), st="reject")
    # the same tensor name twice (JSON objects with duplicate keys); the second
    # entry points at the data of the first, so everything else is consistent
    hdr, data = layout(G)
    js = header_json(hdr)
    first = '"norm.bias":' + json.dumps(hdr["norm.bias"], separators=(",", ":"))
    js = js.replace(first.encode(), (first + "," + first).encode())
    add("duplicate_name.safetensors", "FORMAT", "duplicate", pack_raw(js, data), st=None)
    add("metadata_not_string.safetensors", "FORMAT", "metadata",
        pack(*layout(G, {"gmlp.crop_pct": 0.9})), st="reject")
    hdr, data = layout(G)
    hdr["__metadata__"] = "gmlp"
    hdr.move_to_end("__metadata__", last=False)
    add("metadata_not_object.safetensors", "FORMAT", "metadata", pack(hdr, data), st="reject")

    # --- dtypes the library cannot run --------------------------------------
    add("dtype_i32_weight.safetensors", "UNSUPPORTED", "dtype",
        valid(g(**{P0 + "fc1.weight": ("I32", [24, 8], rng.integers(-3, 4, (24, 8)))})))
    add("dtype_f64_weight.safetensors", "UNSUPPORTED", "dtype",
        valid(g(**{"head.weight": ("F64", [3, 8], G["head.weight"][2])})))
    add("dtype_f8_weight.safetensors", "UNSUPPORTED", "dtype",
        valid(g(**{"stem.proj.weight": ("F8_E4M3", [8, 3, 2, 2], np.zeros((8, 3, 2, 2)))})))

    # --- model level: tensors --------------------------------------------------
    add("no_tensors.safetensors", "FORMAT", "tensor", pack_raw(b"{}", b""))
    add("no_tensors_metadata_only.safetensors", "FORMAT", "tensor",
        pack(*layout({}, {"gmlp.mean": "0.5,0.5,0.5", "gmlp.std": "0.5,0.5,0.5"})))
    add("missing_block_norm_bias.safetensors", "FORMAT", "blocks.1.norm.bias",
        valid(without(G, "blocks.1.norm.bias")), timm=GMLP_KW)
    add("missing_head_bias.safetensors", "FORMAT", "head.bias",
        valid(without(G, "head.bias")), timm=GMLP_KW)
    add("missing_stem_weight.safetensors", "FORMAT", "stem.proj.weight",
        valid(without(G, "stem.proj.weight")), timm=GMLP_KW)
    w = G[P0 + "fc2.weight"]
    add("fc2_transposed.safetensors", "FORMAT", P0 + "fc2.weight",
        valid(g(**{P0 + "fc2.weight": ("F32", [12, 8], w[2].T)})), timm=GMLP_KW)
    add("spatial_not_square.safetensors", "FORMAT", P0 + "gate.proj.weight",
        valid(g(**{P0 + "gate.proj.weight": ("F32", [N, N + 1], rnd((N, N + 1), rng))})), timm=GMLP_KW)
    add("spatial_bias_wrong.safetensors", "FORMAT", P0 + "gate.proj.bias",
        valid(g(**{P0 + "gate.proj.bias": ("F32", [N + 1], rnd(N + 1, rng))})), timm=GMLP_KW)
    add("spatial_blocks_disagree.safetensors", "FORMAT", "blocks.1.mlp_channels.gate.proj",
        valid(g(**{"blocks.1.mlp_channels.gate.proj.weight": ("F32", [16, 16], rnd((16, 16), rng)),
                   "blocks.1.mlp_channels.gate.proj.bias": ("F32", [16], rnd(16, rng))})), timm=GMLP_KW)
    # consistent 8x8 spatial matrices: 8 tokens is no square grid, no gmlp.img_size
    eight = {}
    for l in range(2):
        eight[f"blocks.{l}.mlp_channels.gate.proj.weight"] = ("F32", [8, 8], rnd((8, 8), rng))
        eight[f"blocks.{l}.mlp_channels.gate.proj.bias"] = ("F32", [8], rnd(8, rng))
    add("tokens_not_square.safetensors", "FORMAT", "token", valid(g(**eight)), timm=GMLP_KW)
    add("tokens_vs_img_size.safetensors", "FORMAT", "token",
        valid(G, {"gmlp.img_size": "8"}))  # 8/2 = 4 -> 16 tokens, the matrices are 9x9
    add("stem_not_4d.safetensors", "FORMAT", "stem.proj.weight",
        valid(g(**{"stem.proj.weight": ("F32", [8, 12], G["stem.proj.weight"][2].reshape(8, 12))})),
        timm=GMLP_KW)
    add("stem_bias_wrong.safetensors", "FORMAT", "stem.proj.bias",
        valid(g(**{"stem.proj.bias": ("F32", [9], rnd(9, rng))})), timm=GMLP_KW)
    # timm's stem_norm=True: the LayerNorm's pair, of length dim (timm, built with stem_norm, refuses these too)
    sn, srng = dict(GMLP_KW, stem_norm=True), np.random.default_rng([SEED, 9])
    add("stem_norm_no_bias.safetensors", "FORMAT", "missing tensor 'stem.norm.bias'",
        valid(g(**{"stem.norm.weight": ("F32", [8], rnd(8, srng))})), timm=sn)
    add("stem_norm_wrong_dim.safetensors", "FORMAT", "'stem.norm.weight' has shape [9], expected [8]",
        valid(g(**{"stem.norm.weight": ("F32", [9], rnd(9, srng)), "stem.norm.bias": ("F32", [9], rnd(9, srng))})),
        timm=sn)
    add("head_wrong_dim.safetensors", "FORMAT", "head.weight",
        valid(g(**{"head.weight": ("F32", [3, 9], rnd((3, 9), rng))})), timm=GMLP_KW)
    nc = collections.OrderedDict(
        (k.replace("blocks.1.", "blocks.2."), v) for k, v in G.items())
    add("blocks_noncontiguous.safetensors", "FORMAT", "blocks.1", valid(nc), timm=GMLP_KW)
    mixed = collections.OrderedDict((k, v) for k, v in G.items() if not k.startswith("blocks.1."))
    for k, v in M.items():
        if k.startswith("blocks.1."):
            mixed[k] = v
    add("mixed_block_types.safetensors", "FORMAT", "blocks.1", valid(mixed), timm=GMLP_KW)

    # --- model level: metadata -------------------------------------------------
    s2 = ("F32", [8, 2, 2, 2], G["stem.proj.weight"][2][:, :2])
    s1 = ("F32", [8, 1, 2, 2], G["stem.proj.weight"][2][:, :1])
    add("stem_2ch_mean3.safetensors", "FORMAT", "gmlp.mean",
        valid(g(**{"stem.proj.weight": s2}), {"gmlp.mean": "0.5,0.5,0.5"}))
    add("stem_1ch_mean3.safetensors", "FORMAT", "gmlp.mean",
        valid(g(**{"stem.proj.weight": s1}), {"gmlp.mean": "0.5,0.5,0.5", "gmlp.std": "0.5"}))
    add("mean_wrong_count.safetensors", "FORMAT", "gmlp.mean",
        valid(G, {"gmlp.mean": "0.5,0.5"}))
    add("mean_not_number.safetensors", "FORMAT", "gmlp.mean",
        valid(G, {"gmlp.mean": "0.5,0.5,abc"}))
    add("std_zero.safetensors", "FORMAT", "gmlp.std",
        valid(G, {"gmlp.std": "0.5,0,0.5"}))
    add("img_size_abc.safetensors", "FORMAT", "gmlp.img_size",
        valid(G, {"gmlp.img_size": "abc"}))
    add("img_size_not_divisible.safetensors", "FORMAT", "gmlp.img_size",
        valid(G, {"gmlp.img_size": "7"}))  # 7 // 2 = 3 would give the right 9 tokens
    add("crop_pct_zero.safetensors", "FORMAT", "gmlp.crop_pct",
        valid(G, {"gmlp.crop_pct": "0"}))
    add("crop_pct_negative.safetensors", "FORMAT", "gmlp.crop_pct",
        valid(G, {"gmlp.crop_pct": "-1"}))
    add("crop_pct_trailing_garbage.safetensors", "FORMAT", "gmlp.crop_pct",
        valid(G, {"gmlp.crop_pct": "0.9x"}))
    add("arch_transformer.safetensors", "UNSUPPORTED", "gmlp.arch",
        valid(G, {"gmlp.arch": "transformer"}))

    # --- MLP-Mixer -------------------------------------------------------------
    def m(**changes):
        return changed(M, **changes)

    add("mixer_missing_token_fc2_bias.safetensors", "FORMAT", "blocks.0.mlp_tokens.fc2.bias",
        valid(without(M, "blocks.0.mlp_tokens.fc2.bias"), {"gmlp.arch": "mixer"}), timm=MIXER_KW)
    add("mixer_missing_norm2.safetensors", "FORMAT", "blocks.1.norm2.weight",
        valid(without(M, "blocks.1.norm2.weight")), timm=MIXER_KW)
    add("mixer_token_fc1_wrong.safetensors", "FORMAT", "blocks.1.mlp_tokens.fc1.weight",
        valid(m(**{"blocks.1.mlp_tokens.fc1.weight": ("F32", [4, N + 1], rnd((4, N + 1), rng))})),
        timm=MIXER_KW)
    w = M["blocks.0.mlp_channels.fc2.weight"]
    add("mixer_channel_fc2_transposed.safetensors", "FORMAT", "blocks.0.mlp_channels.fc2.weight",
        valid(m(**{"blocks.0.mlp_channels.fc2.weight": ("F32", [16, 8], w[2].T)})), timm=MIXER_KW)
    add("mixer_tokens_vs_img_size.safetensors", "FORMAT", "token",
        valid(M, {"gmlp.img_size": "4"}))  # 4/2 -> 4 tokens, the token MLP takes 9
    add("mixer_dtype_i32.safetensors", "UNSUPPORTED", "dtype",
        valid(m(**{"blocks.0.mlp_tokens.fc1.weight": ("I32", [4, N], rng.integers(-3, 4, (4, N)))})))

    # --- g-mlp-pytorch language model ----------------------------------------------
    lrng = np.random.default_rng([SEED, 4])  # its own stream: the cases above keep their bytes
    assert valid(L, LMETA) == lm_blob  # the hand writer reproduces export_lm's file exactly
    LP, LP1 = "layers.0.fn.fn.fn.", "layers.1.fn.fn.fn."
    CIRC = dict(circulant_matrix=True)

    def exported(base, base_meta):
        """A writer of files like `base` as its exporter wrote it, with other
        tensors and metadata: gmlp_causal="yes" -> gmlp.causal; None drops a key."""
        def write(tensors=base, **meta):
            md = dict(base_meta)
            for k, v in meta.items():
                k = k.replace("_", ".", 1)
                md.pop(k) if v is None else md.__setitem__(k, v)
            return valid(tensors, md)
        return write

    lmf = exported(L, LMETA)

    def lt(**changes):
        return changed(L, **changes)

    def f32(*shape):
        return ("F32", list(shape), rnd(shape, lrng))

    def both_layers(leaf, *shape):
        return {p + leaf: f32(*shape) for p in (LP, LP1)}

    add("lm_causal_yes.safetensors", "FORMAT", "gmlp.causal", lmf(gmlp_causal="yes"))
    add("lm_act_leaky_relu.safetensors", "FORMAT", "gmlp.act", lmf(gmlp_act="leaky_relu"))
    add("lm_shift_negative.safetensors", "FORMAT", "gmlp.shift_tokens", lmf(gmlp_shift_tokens="-1"))
    add("lm_shift_fraction.safetensors", "FORMAT", "gmlp.shift_tokens", lmf(gmlp_shift_tokens="1.5"))
    add("lm_shift_abc.safetensors", "FORMAT", "gmlp.shift_tokens", lmf(gmlp_shift_tokens="abc"))
    # PreShiftTokens splits dim 8 into one segment per shift: shift+1 causal, 2 shift+1 not
    add("lm_shift_too_many_segments.safetensors", "FORMAT", "more than dim 8",
        lmf(gmlp_shift_tokens="8"))
    add("lm_shift_too_many_segments_bidir.safetensors", "FORMAT", "needs 9 channel segments",
        lmf(gmlp_causal="false", gmlp_shift_tokens="4"))
    add("lm_arch_on_timm.safetensors", "FORMAT", "gmlp.arch", valid(G, {"gmlp.arch": "gmlp_lm"}))
    add("lm_arch_gmlp_on_lm.safetensors", "FORMAT", "gmlp.arch", lmf(gmlp_arch="gmlp"))
    add("lm_missing_embed.safetensors", "FORMAT", "to_embed.weight",
        lmf(without(L, "to_embed.weight")), lm=LM_KW)
    # without metadata the LM is still recognised by its head, so the message names the embedding
    add("lm_missing_embed_no_metadata.safetensors", "FORMAT", "missing tensor 'to_embed.weight'",
        valid(without(L, "to_embed.weight")), lm=LM_KW)
    add("lm_missing_logits_weight.safetensors", "FORMAT", "to_logits.1.weight",
        lmf(without(L, "to_logits.1.weight")), lm=LM_KW)
    add("lm_missing_sgu_weight.safetensors", "FORMAT", LP1 + "sgu.weight",
        lmf(without(L, LP1 + "sgu.weight")), lm=LM_KW)
    add("lm_no_layers.safetensors", "FORMAT", "no layers",
        lmf(collections.OrderedDict((k, v) for k, v in L.items() if not k.startswith("layers."))),
        lm=LM_KW)
    # circulant_pos_x/y make it a circulant model, whose sgu.weight is [heads, seq_len]
    add("lm_circulant_dense_weight.safetensors", "FORMAT", "expected [2, 6] (circulant",
        lmf(lt(**both_layers("sgu.circulant_pos_x", 2, 6), **both_layers("sgu.circulant_pos_y", 2, 6))),
        lm=dict(LM_KW, **CIRC))
    add("lm_circulant_only_layer1.safetensors", "FORMAT", "unexpected tensor '" + LP1 + "sgu.circulant_pos_x'",
        lmf(lt(**{LP1 + "sgu.circulant_pos_x": f32(2, 6), LP1 + "sgu.circulant_pos_y": f32(2, 6)})),
        lm=LM_KW)
    # 3 heads throughout, but the gate width 16 does not split into 3
    add("lm_heads_not_dividing_gate.safetensors", "FORMAT", "do not divide the gate width",
        lmf(lt(**both_layers("sgu.weight", 3, 6, 6), **both_layers("sgu.bias", 3, 6))), lm=LM_KW)
    add("lm_seq_len_disagree.safetensors", "FORMAT", LP1 + "sgu.weight",
        lmf(lt(**{LP1 + "sgu.weight": f32(2, 7, 7), LP1 + "sgu.bias": f32(2, 7)})), lm=LM_KW)
    add("lm_qkv_rows.safetensors", "FORMAT", "3 x attn_dim",
        lmf(lt(**{LP + "attn.to_qkv.weight": f32(13, 8)})), lm=LM_KW)
    add("lm_to_out_shape.safetensors", "FORMAT", LP1 + "attn.to_out.weight",
        lmf(lt(**{LP1 + "attn.to_out.weight": f32(16, 5)})), lm=LM_KW)
    add("lm_attn_missing_layer1.safetensors", "FORMAT", LP1 + "attn.to_qkv.weight",
        lmf(without(L, *(LP1 + "attn." + n for n in ("to_qkv.weight", "to_out.weight", "to_out.bias")))),
        lm=LM_KW)
    skip = collections.OrderedDict(
        (k.replace("layers.1.", "layers.2."), v) for k, v in L.items())
    add("lm_layer_missing_middle.safetensors", "FORMAT", "missing tensor 'layers.1.", lmf(skip), lm=LM_KW)
    add("lm_unexpected_tensor.safetensors", "FORMAT", "unexpected tensor 'to_logits.2.weight'",
        lmf(lt(**{"to_logits.2.weight": f32(20, 8)})), lm=LM_KW)
    add("lm_ffn_odd.safetensors", "FORMAT", "odd",
        lmf(lt(**both_layers("proj_in.0.weight", 31, 8), **both_layers("proj_in.0.bias", 31))), lm=LM_KW)
    add("lm_logits_vocab_mismatch.safetensors", "FORMAT", "to_logits.1.weight",
        lmf(lt(**{"to_logits.1.weight": f32(21, 8)})), lm=LM_KW)
    add("lm_embed_i32.safetensors", "UNSUPPORTED", "dtype i32",
        lmf(lt(**{"to_embed.weight": ("I32", [20, 8], lrng.integers(-3, 4, (20, 8)))})))
    add("lm_embed_3d.safetensors", "FORMAT", "to_embed.weight",
        lmf(lt(**{"to_embed.weight": ("F32", [20, 8, 1], L["to_embed.weight"][2][..., None])})), lm=LM_KW)
    # gmlp.shift_tokens is digits only: no sign, no spaces (which Python's int() would take)
    add("lm_shift_leading_space.safetensors", "FORMAT", "gmlp.shift_tokens ' 1'", lmf(gmlp_shift_tokens=" 1"))
    add("lm_shift_plus.safetensors", "FORMAT", "gmlp.shift_tokens '+1'", lmf(gmlp_shift_tokens="+1"))
    # vocab 20: a byte-level prompt would feed ids up to 255
    add("lm_tokenizer_bytes_small_vocab.safetensors", "FORMAT", "at least 256 tokens", lmf(gmlp_tokenizer="bytes"))
    # seq_len comes from sgu.weight, so the bias of the wrong length is the one named
    add("lm_sgu_bias_length.safetensors", "FORMAT", LP + "sgu.bias' has shape [2, 5], expected [2, 6]",
        lmf(lt(**{LP + "sgu.bias": f32(2, 5)})), lm=LM_KW)

    # --- g-mlp-pytorch gMLPVision ---------------------------------------------------
    V, VMETA, vis_blob = lm_base([SEED, 5], tmpdir, vision=True)
    assert valid(V, VMETA) == vis_blob and VMETA["gmlp.arch"] == "gmlp_vision"
    vrng = np.random.default_rng([SEED, 6])

    vf = exported(V, VMETA)

    add("vision_patch_not_square.safetensors", "FORMAT", "not 1-3 channels of a square patch",
        valid(changed(V, **{"to_patch_embed.1.weight": ("F32", [8, 20], rnd((8, 20), vrng))})), lm=VIS_KW)
    add("vision_patch_size_wrong.safetensors", "FORMAT", "gmlp.patch_size 3x3", vf(gmlp_patch_size="3"))
    add("vision_patch_size_abc.safetensors", "FORMAT", "gmlp.patch_size 'abc'", vf(gmlp_patch_size="abc"))
    add("vision_img_size_tokens.safetensors", "FORMAT", "gives 16 tokens", vf(gmlp_img_size="8"))
    add("vision_arch_on_lm.safetensors", "FORMAT", "gmlp.arch", lmf(gmlp_arch="gmlp_vision"))
    add("vision_missing_patch_embed.safetensors", "FORMAT", "missing tensor 'to_patch_embed.1.weight'",
        valid(without(V, "to_patch_embed.1.weight")), lm=VIS_KW)
    add("vision_head_bias_only.safetensors", "FORMAT", "'to_logits.2.weight' is missing",
        vf(without(V, "to_logits.2.weight")), lm=VIS_KW)
    lm_nested = collections.OrderedDict((k.replace("layers.1.fn.fn.proj_in", "layers.1.fn.fn.fn.proj_in"), v)
                                        for k, v in V.items())
    add("vision_lm_nesting.safetensors", "FORMAT", "missing tensor 'layers.1.fn.fn.proj_in.0.weight'",
        vf(lm_nested), lm=VIS_KW)

    # --- timm ResMLP ----------------------------------------------------------------
    R = base_tensors(RESMLP_KW, [SEED, 7])
    rrng = np.random.default_rng([SEED, 8])

    def r(**changes):
        return changed(R, **changes)

    add("resmlp_missing_ls2.safetensors", "FORMAT", "missing tensor 'blocks.1.ls2'",
        valid(without(R, "blocks.1.ls2")), timm=RESMLP_KW)
    add("resmlp_ls1_length.safetensors", "FORMAT", "'blocks.0.ls1' has shape [7], expected [8]",
        valid(r(**{"blocks.0.ls1": ("F32", [7], rnd((7,), rrng))})), timm=RESMLP_KW)
    add("resmlp_alpha_flat.safetensors", "FORMAT", "'blocks.1.norm2.alpha' has shape [8], expected [1, 1, 8]",
        valid(r(**{"blocks.1.norm2.alpha": ("F32", [8], R["blocks.1.norm2.alpha"][2].reshape(8))})),
        timm=RESMLP_KW)
    add("resmlp_tokens_not_square.safetensors", "FORMAT", "'blocks.0.linear_tokens.weight' has shape [9, 8]",
        valid(r(**{"blocks.0.linear_tokens.weight": ("F32", [N, 8], rnd((N, 8), rrng))})), timm=RESMLP_KW)
    add("resmlp_stem_norm_layernorm.safetensors", "FORMAT", "missing tensor 'stem.norm.alpha'",
        valid(r(**{"stem.norm.weight": ("F32", [8], rnd((8,), rrng)),
                   "stem.norm.bias": ("F32", [8], rnd((8,), rrng))})),
        timm=dict(RESMLP_KW, stem_norm=True))
    add("resmlp_arch_on_gmlp.safetensors", "FORMAT", "contradicts the tensors", valid(G, {"gmlp.arch": "resmlp"}))
    fb = collections.OrderedDict((mf.facebook_resmlp_name(k), v) for k, v in R.items())
    add("resmlp_facebook_names.safetensors", "FORMAT", "tools/export_vision.py renames it", valid(fb),
        timm=RESMLP_KW)

    # --- IO ------------------------------------------------------------------------
    add("does_not_exist.safetensors", "IO", "does_not_exist.safetensors", None, st=None)
    add("is_a_directory.safetensors", "IO", "is_a_directory.safetensors", "DIR", st=None)
    return cs, G, M, L, V, R


def reference_parser_accepts(path):
    try:
        with safe_open(path, framework="pt") as f:
            list(f.keys())
            f.metadata()
        return True
    except Exception:
        return False


def strict_accepts(path, kw):
    """Whether timm (kw for make_fixtures.build) or g-mlp-pytorch (kw for gMLP,
    with num_tokens, or gMLPVision, with image_size) loads the tensors with a
    strict load_state_dict."""
    from safetensors.torch import load_file
    try:
        sd = load_file(path)
        model = lm_model(**kw) if "num_tokens" in kw else vision_model(**kw) if "image_size" in kw \
            else mf.build(kw)[0]
        model.load_state_dict({k: v.float() for k, v in sd.items()}, strict=True)
        return True
    except Exception:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "..", "tests", "data", "broken"))
    args = ap.parse_args()
    out = args.out
    os.makedirs(out, exist_ok=True)
    cs, G, M, L, V, R = cases(out)

    # the bases themselves must be valid, for the parser and for timm / g-mlp-pytorch
    for kw, t in ((GMLP_KW, G), (MIXER_KW, M), (LM_KW, L), (VIS_KW, V), (RESMLP_KW, R)):
        p = os.path.join(out, ".base.tmp")
        with open(p, "wb") as f:
            f.write(valid(t))
        assert reference_parser_accepts(p) and strict_accepts(p, kw), kw
        os.remove(p)

    wanted = {c[0] for c in cs}
    for f in os.listdir(out):  # remove stale cases from earlier versions of this script
        if f.endswith(".safetensors") and f not in wanted:
            p = os.path.join(out, f)
            shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)

    lines = []
    problems = []
    for fname, status, sub, blob, st, timm in cs:
        assert status in ("FORMAT", "UNSUPPORTED", "IO") and sub == sub.lower() and "\t" not in sub
        path = os.path.join(out, fname)
        if blob is None:
            if os.path.exists(path):
                os.remove(path)
        elif blob == "DIR":
            os.makedirs(path, exist_ok=True)
            with open(os.path.join(path, ".gitkeep"), "w") as f:
                f.write("This directory stands where a model file is expected (IO error case).\n")
        else:
            if os.path.isdir(path):
                shutil.rmtree(path)
            with open(path, "wb") as f:
                f.write(blob)
            os.chmod(path, 0o644)
            acc = reference_parser_accepts(path)
            note = ""
            if st is not None and acc != (st == "accept"):
                problems.append(f"{fname}: reference parser {'accepts' if acc else 'rejects'} it")
            if st is None:
                note = f"  (reference parser {'accepts' if acc else 'rejects'})"
            if timm is not None and strict_accepts(path, timm):
                problems.append(f"{fname}: the strict load_state_dict accepts it")
            size = len(blob)
            print(f"{fname:46s} {status:11s} {sub:40s} {size:6d} B{note}")
        lines.append(f"{fname}\t{status}\t{sub}\n")
    with open(os.path.join(out, "manifest.txt"), "w") as f:
        f.writelines(lines)
    total = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out)
                if os.path.isfile(os.path.join(out, f)))
    print(f"{len(lines)} cases, {total} bytes in {os.path.normpath(out)}")
    if problems:
        print("\n".join(problems))
        return 1
    return 0


if __name__ == "__main__":
    torch.set_grad_enabled(False)
    sys.exit(main())
