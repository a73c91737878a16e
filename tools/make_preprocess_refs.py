#!/usr/bin/env python3
"""Writes tests/data/preprocess/: a few synthetic images (PNG, JPEG, Netpbm and
WebP; RGB, RGBA, grey, 16-bit grey, bitmaps and CMYK; larger and smaller than
the model input) and, for each test
case, the tensor timm's real eval transform makes of it (PIL decode, then
timm.data.create_transform(..., is_training=False)), as raw little-endian
float32 C x H x W, listed in cases.txt:
    image  C  H  W  interpolation  crop_pct  mean(comma)  std(comma)  expected.f32
Run: python3 tools/make_preprocess_refs.py"""
import io
import os
import struct

import numpy as np
from PIL import Image
from timm.data import create_transform

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "preprocess")
IMAGENET = ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))


def synthetic(w, h, mode, seed):
    """Smooth gradients, a disc and a bar, plus mild noise: photo-like."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    r = 127 + 100 * np.sin(x / w * 3.1 + y / h * 1.7)
    g = 127 + 100 * np.cos(y / h * 4.3)
    b = 127 + 90 * np.sin((x + y) / (w + h) * 6.0)
    disc = (x - w * 0.6) ** 2 + (y - h * 0.4) ** 2 < (min(w, h) * 0.25) ** 2
    r[disc], g[disc], b[disc] = 230, 40, 60
    bar = (np.abs(x - w * 0.25) < w * 0.06)
    r[bar], g[bar], b[bar] = 20, 200, 90
    rgb = np.stack([r, g, b], -1) + rng.normal(0, 6, (h, w, 3))
    rgb = np.clip(np.rint(rgb), 0, 255).astype(np.uint8)
    img = Image.fromarray(rgb, "RGB")
    if mode == "RGBA":
        a = np.clip(np.rint(255 * x / max(w - 1, 1)), 0, 255).astype(np.uint8)
        img = Image.fromarray(np.dstack([rgb, a]), "RGBA")
    elif mode in ("L", "CMYK"):
        img = img.convert(mode)
    elif mode == "I;16":  # 0..1023: the values over 255 are where PIL clips
        img = Image.fromarray((np.asarray(img.convert("L")).astype(np.uint16) * 4 + rng.integers(0, 4, (h, w))
                               ).astype(np.uint16))
    return img


def netpbm(img, magic, maxval):
    """The image as a Netpbm file, with a comment in the header; bitmaps: 1 where darker than 128."""
    a = np.asarray(img).astype(np.int64)
    h, w = a.shape[:2]
    head = f"{magic}\n# gmlp-cl test image\n{w} {h}\n" + ("" if magic in ("P1", "P4") else f"{maxval}\n")
    if magic in ("P1", "P4"):
        bits = (a < 128).astype(np.uint8)
        if magic == "P4":
            return head.encode() + b"".join(np.packbits(row).tobytes() for row in bits)
        return head.encode() + "\n".join("".join(map(str, row)) for row in bits).encode() + b"\n"
    v = np.rint(a * maxval / 255).astype(np.int64)
    if magic in ("P2", "P3"):
        rows = v.reshape(h, -1)
        return head.encode() + "\n".join(" ".join(map(str, row)) for row in rows).encode() + b"\n"
    return head.encode() + v.astype(">u2" if maxval > 255 else "u1").tobytes()


IMAGES = [
    ("rgb_large.png", (300, 200, "RGB", 1)),
    ("rgb_small.png", (19, 23, "RGB", 2)),
    ("rgba_wide.png", (90, 41, "RGBA", 3)),
    ("grey_large.png", (57, 64, "L", 4)),
    ("grey_28.png", (28, 28, "L", 5)),
    ("rgb_photo.jpg", (160, 120, "RGB", 6)),
    ("grey_photo.jpg", (45, 70, "L", 7)),
    # JPEGs as cameras and PIL write them (chroma at half resolution, PIL's default quality), progressive
    # 4:2:2, and CMYK (Adobe's inverted values): the decoder must give PIL's pixels bit for bit
    ("rgb_420.jpg", (203, 151, "RGB", 8)),
    ("rgb_422_progressive.jpg", (97, 130, "RGB", 9)),
    ("cmyk.jpg", (64, 50, "CMYK", 10)),
    # what stb_image reads unlike PIL (apps/image.c, apps/pnm.c): a 16-bit grey PNG (PIL clips at 255),
    # Netpbm with a maxval other than 255 (PIL scales; 16-bit grey is clipped as the PNG), a bitmap,
    # and the plain (ASCII) variants
    ("grey16.png", (33, 21, "I;16", 11)),
    ("grey_100.pgm", (40, 30, "L", 12)),
    ("grey_300.pgm", (21, 25, "L", 13)),
    ("rgb_1000.ppm", (50, 37, "RGB", 14)),
    ("bits.pbm", (45, 29, "L", 15)),
    ("plain_15.pgm", (17, 23, "L", 16)),
    ("plain_1000.ppm", (26, 19, "RGB", 17)),
    ("plain_bits.pbm", (20, 18, "L", 18)),
    # WebP (libwebp, as PIL): lossy, and lossless with alpha
    ("rgb_lossy.webp", (90, 70, "RGB", 19)),
    ("rgba_lossless.webp", (31, 47, "RGBA", 20)),
    # GIF (stb_image, then apps/gif.c): transparent pixels in their palette colour, and a logical screen
    # larger than the frame (PIL fills it with the transparent index)
    ("trns.gif", (43, 30, "RGB", 21)),
    ("screen.gif", (25, 19, "RGB", 22)),
]
WEBP_OPTIONS = {"rgb_lossy.webp": dict(quality=80), "rgba_lossless.webp": dict(lossless=True)}
# Netpbm files written here (PIL writes only P5/P6 with maxval 255): name -> (magic, maxval)
NETPBM = {"grey_100.pgm": ("P5", 100), "grey_300.pgm": ("P5", 300), "rgb_1000.ppm": ("P6", 1000),
          "bits.pbm": ("P4", 1), "plain_15.pgm": ("P2", 15), "plain_1000.ppm": ("P3", 1000),
          "plain_bits.pbm": ("P1", 1)}
# how each JPEG is written (the others: quality 90, full-resolution chroma)
JPEG_OPTIONS = {
    "rgb_420.jpg": dict(quality=75, subsampling=2),
    "rgb_422_progressive.jpg": dict(quality=85, subsampling=1, progressive=True),
}

CONFIGS = {
    "a": ((3, 32, 32), "bicubic", 0.875, (0.5,) * 3, (0.5,) * 3),
    "b": ((1, 28, 28), "bilinear", 1.0, (0.286,), (0.353,)),
    "c": ((3, 24, 40), "nearest", 0.9, *IMAGENET),
    "d": ((3, 48, 48), "bicubic", 0.875, *IMAGENET),
    "e": ((3, 30, 20), "bilinear", 0.95, (0.5,) * 3, (0.5,) * 3),
    # 32 / 0.8 is 40 in Python but 39.99... with crop_pct as a float32
    "f": ((3, 32, 32), "bilinear", 0.8, (0.5,) * 3, (0.5,) * 3),
    # crop_pct > 1: the resized image is smaller than the crop, CenterCrop pads with 0
    "g": ((3, 32, 32), "bicubic", 1.15, (0.5,) * 3, (0.5,) * 3),
    # the rest of PIL's filters, which timm's eval transform accepts by name
    "h": ((3, 32, 32), "box", 0.875, *IMAGENET),
    "i": ((3, 30, 20), "hamming", 0.9, (0.5,) * 3, (0.5,) * 3),
    "j": ((3, 48, 48), "lanczos", 0.875, *IMAGENET),
    "k": ((1, 28, 28), "lanczos", 1.0, (0.286,), (0.353,)),
}

CASES = [
    ("rgb_large.png", "a"), ("rgb_large.png", "c"), ("rgb_large.png", "b"),
    ("rgb_small.png", "d"), ("rgb_small.png", "e"), ("rgb_small.png", "g"),
    ("rgba_wide.png", "a"), ("rgba_wide.png", "c"),
    ("grey_large.png", "b"), ("grey_large.png", "a"), ("grey_large.png", "f"),
    ("grey_28.png", "b"), ("grey_28.png", "d"),
    ("rgb_photo.jpg", "a"), ("rgb_photo.jpg", "e"),
    ("grey_photo.jpg", "b"), ("grey_photo.jpg", "c"),
    ("rgb_420.jpg", "d"), ("rgb_420.jpg", "b"), ("rgb_422_progressive.jpg", "a"), ("cmyk.jpg", "c"),
    # shrinking (the filters widened) and enlarging, colour and grey
    ("rgb_large.png", "h"), ("rgb_small.png", "h"), ("rgba_wide.png", "i"), ("rgb_small.png", "i"),
    ("rgb_large.png", "j"), ("rgb_small.png", "j"), ("grey_large.png", "k"), ("rgb_420.jpg", "k"),
    ("grey_photo.jpg", "j"),
    ("grey16.png", "b"), ("grey16.png", "a"), ("grey_100.pgm", "b"), ("grey_300.pgm", "e"),
    ("rgb_1000.ppm", "d"), ("rgb_1000.ppm", "b"), ("bits.pbm", "b"), ("bits.pbm", "a"),
    ("plain_15.pgm", "k"), ("plain_1000.ppm", "j"), ("plain_bits.pbm", "c"),
    ("rgb_lossy.webp", "a"), ("rgb_lossy.webp", "b"), ("rgba_lossless.webp", "e"),
    ("trns.gif", "a"), ("trns.gif", "b"), ("screen.gif", "d"),
]


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, (w, h, mode, seed) in IMAGES:
        img = synthetic(w, h, mode, seed)
        path = os.path.join(OUT, name)
        if name in NETPBM:
            with open(path, "wb") as f:
                f.write(netpbm(img, *NETPBM[name]))
        elif name.endswith(".gif"):
            b = io.BytesIO()
            img.quantize(24).save(b, "GIF", transparency=5)
            d = b.getvalue()
            if name == "screen.gif":  # the screen 6 x 4 pixels larger than the frame at (0, 0)
                d = d[:6] + struct.pack("<HH", w + 6, h + 4) + d[10:]
            with open(path, "wb") as f:
                f.write(d)
        elif name in WEBP_OPTIONS:
            img.save(path, "WEBP", **WEBP_OPTIONS[name])
        elif name.endswith(".jpg"):
            img.save(path, **JPEG_OPTIONS.get(name, dict(quality=90, subsampling=0)))
        else:
            img.save(path)
    lines = []
    for name, key in CASES:
        (c, h, w), interp, crop, mean, std = CONFIGS[key]
        t = create_transform(input_size=(c, h, w), interpolation=interp, mean=mean, std=std,
                             crop_pct=crop, is_training=False)
        img = Image.open(os.path.join(OUT, name)).convert("L" if c == 1 else "RGB")
        x = t(img).numpy().astype("<f4")
        assert x.shape == (c, h, w), (name, key, x.shape)
        exp = f"{os.path.splitext(name)[0]}-{key}.f32"
        x.tofile(os.path.join(OUT, exp))
        lines.append("\t".join([name, str(c), str(h), str(w), interp, str(crop),
                                ",".join(map(str, mean)), ",".join(map(str, std)), exp]))
    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} cases to {OUT}")


if __name__ == "__main__":
    main()
