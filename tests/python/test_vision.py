"""Image models: the timm float64 fixtures through classify and features, preprocessing against
timm's transform on PIL and against gmlp-classify (the C path), top-k, the config dict."""
from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

import gmlp
from conftest import DATA, EXAMPLES, MODELS, needs_device, program, read_safetensors, rel_error, with_metadata
from gmlp import _lib, _model

E2E = DATA / "e2e"
FIXTURES = sorted(p.name[:-len(".ref.safetensors")] for p in E2E.glob("*.ref.safetensors"))
TOL = {"f32": 1e-4, "f16": 2e-3}  # relative to the largest |value|, as tests/fixture.h
PRECISION_TOL = {"fp32": 1e-4, "tf32": 2e-3, "fp16": 2e-3, "bf16": 1.5e-2}  # the same, per precision (#33)
BUNDLED = MODELS / "fashion-mnist-gmlp.safetensors"


def as_file_name(label: str) -> str:
    """A label as the example images' names spell it: "T-shirt/top" is t_shirt_top-N.png."""
    return label.lower().replace("/", "_").replace(" ", "_").replace("-", "_")


@needs_device
@pytest.mark.parametrize("weights", ["f32", "f16"])
@pytest.mark.parametrize("name", FIXTURES)
def test_timm_fixture(name: str, weights: str) -> None:
    ref = read_safetensors(E2E / f"{name}.ref.safetensors")
    images = ref["images"]
    with gmlp.load(E2E / f"{name}.safetensors", weights=weights) as m:
        c = m.config
        assert (c["in_chans"], c["img_h"], c["img_w"]) == images.shape[1:]
        assert c["dim"] == ref["features"].shape[1] and c["weights"] == weights
        feats = m.features(images)
        assert feats.dtype == np.float32 and feats.shape == ref["features"].shape
        assert rel_error(feats, ref["features"]) <= TOL[weights]
        if "logits" not in ref:  # headless
            assert c["num_classes"] == 0 and c["labels"] is None
            with pytest.raises(gmlp.Error) as e:
                m.classify(images)
            assert e.value.status == gmlp.Status.WRONG_MODEL and "feature extractor" in str(e.value)
            with pytest.raises(gmlp.Error) as e:
                m.classify_features(images)
            assert e.value.status == gmlp.Status.WRONG_MODEL and "feature extractor" in str(e.value)
            return
        logits = m.classify(images)
        assert logits.dtype == np.float32 and logits.shape == ref["logits"].shape
        assert rel_error(logits, ref["logits"]) <= TOL[weights]
        # both from one forward: the same bits as the two calls
        both = m.classify_features(images)
        assert np.array_equal(both[0], logits) and np.array_equal(both[1], feats)
        # one image as (C, H, W): its row
        one = m.classify(images[-1])
        assert one.shape == logits.shape[1:]
        assert rel_error(one, ref["logits"][-1]) <= TOL[weights]


@pytest.fixture(scope="module")
def rgb_fp32() -> np.ndarray:
    ref = read_safetensors(E2E / "gmlp_rgb.ref.safetensors")
    with gmlp.load(E2E / "gmlp_rgb.safetensors", precision="fp32") as m:
        return m.classify(ref["images"])


@needs_device
@pytest.mark.parametrize("precision", list(PRECISION_TOL))
def test_precision(precision: str, rgb_fp32: np.ndarray) -> None:
    """precision= reaches the library: Model.precision names it and its engine, the logits are within the
    mode's bound of timm's float64 ones, and off fp32's but for fp32 itself."""
    ref = read_safetensors(E2E / "gmlp_rgb.ref.safetensors")
    with gmlp.load(E2E / "gmlp_rgb.safetensors", precision=precision) as m:
        assert isinstance(m.precision, gmlp.Precision) and m.precision.mode == precision and m.precision.engine
        logits = m.classify(ref["images"])
    assert rel_error(logits, ref["logits"]) <= PRECISION_TOL[precision]
    assert np.array_equal(logits, rgb_fp32) == (precision == "fp32")


@needs_device
def test_config_dict() -> None:
    with gmlp.load(E2E / "mixer_rgb.safetensors") as m:
        c = m.config
    assert set(c) == {name for name, _ in _lib.Config._fields_ if name != "size"} | {"labels"}
    assert c["arch"] == "mixer" and c["token_dim"] > 0 and c["sgu_eps"] == 0
    assert c["interpolation"] in _lib.INTERPOLATION and c["crop_mode"] in _lib.CROP_MODE
    assert isinstance(c["mean"], tuple) and len(c["mean"]) == len(c["std"]) == c["in_chans"] == 3
    assert c["seq_len"] == (c["img_h"] // c["patch_h"]) * (c["img_w"] // c["patch_w"])
    assert c["weights"] == "f32" and c["weight_bytes"] == 4 * c["num_params"] > 0


@needs_device
def test_config_dict_gmlp_vision() -> None:
    """g-mlp-pytorch's gMLPVision: heads, tiny attention and the non-square patch its metadata gives."""
    with gmlp.load(E2E / "gmlpvision_heads_attn_f16.safetensors") as m:
        c = m.config
    assert (c["arch"], c["heads"], c["attn_dim"], c["in_chans"]) == ("gmlp_vision", 2, 8, 1)
    assert (c["patch_h"], c["patch_w"], c["img_h"], c["img_w"], c["seq_len"]) == (4, 7, 20, 28, 20)
    assert c["norm_eps"] == c["sgu_eps"] == np.float32(1e-5) and c["gate_act"] == "identity" and not c["causal"]


# ImageNet's mean and std for one channel: timm 1.0's resolve_input_data_config averages the three values
IMAGENET_GREY_MEAN = (np.float32((0.485 + 0.456 + 0.406) / 3),)
IMAGENET_GREY_STD = (np.float32((0.229 + 0.224 + 0.225) / 3),)

@needs_device
def test_config_dict_gmixer() -> None:
    """timm's gmixer: MixerBlock with GluMlp, SiLU on the gate, ImageNet's mean and std by default (timm's
    gmixer_24_224.ra3_in1k cfg), averaged over its one channel as timm's resolve_input_data_config does."""
    with gmlp.load(E2E / "gmixer_grey_f16.safetensors") as m:
        c = m.config
    assert (c["arch"], c["gate_act"], c["token_dim"], c["sgu_eps"]) == ("gmixer", "silu", 6, 0)
    assert c["mean"] == IMAGENET_GREY_MEAN and c["std"] == IMAGENET_GREY_STD


@needs_device
def test_config_dict_resmlp() -> None:
    """timm's ResMLP: no LayerNorm (eps 0), ImageNet's mean and std by default, the non-square image its
    metadata gives; the mean and std averaged over its one channel."""
    with gmlp.load(E2E / "resmlp_grey_headless_f16.safetensors") as m:
        c = m.config
    assert (c["arch"], c["num_classes"], c["in_chans"], c["img_h"], c["img_w"]) == ("resmlp", 0, 1, 12, 20)
    assert c["norm_eps"] == c["sgu_eps"] == 0 and c["mean"] == IMAGENET_GREY_MEAN
    assert c["std"] == IMAGENET_GREY_STD


def _cases() -> list[list[str]]:
    lines = (DATA / "preprocess" / "cases.txt").read_text().splitlines()
    return [line.split() for line in lines if len(line.split()) == 9]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[8])
def test_preprocess_as_timm(case: list[str]) -> None:
    """The cases of tests/test_preprocess.c, from PIL images and from arrays (an array has no mode: a CMYK
    or palette image is given as the RGB PIL makes of it, a bitmap or 16-bit grey one as its L); PIL
    decodes here, as for the references, so every case holds to float rounding (1e-6 in pixel units)."""
    image, chans, h, w, interp, crop, mean, std, expected = case
    n = int(chans)
    cfg = _lib.Config(in_chans=n, img_h=int(h), img_w=int(w), interpolation=_lib.INTERPOLATION.index(interp),
                      crop_pct=float(crop))
    cfg.mean[:n] = [float(v) for v in mean.split(",")]
    cfg.std[:n] = [float(v) for v in std.split(",")]
    pil = Image.open(DATA / "preprocess" / image)
    got = _model.preprocess_image(cfg, pil)
    assert got.dtype == np.float32 and got.shape == (n, int(h), int(w))
    array = np.asarray(pil.convert("RGB") if pil.mode in ("CMYK", "P") else pil.convert("L")
                       if pil.mode in ("1", "I", "I;16") else pil)
    np.testing.assert_array_equal(_model.preprocess_image(cfg, array), got)
    want = np.fromfile(DATA / "preprocess" / expected, "<f4").reshape(got.shape)
    err = (np.abs(got.astype(np.float64) - want) * np.array(cfg.std[:n])[:, None, None]).max()
    assert err <= 1e-6


@needs_device
def test_examples_as_gmlp_classify() -> None:
    """The example images through PIL, preprocess, classify and topk: gmlp-classify's (stb_image and the
    library in C) classes and probabilities, and the class each file name says."""
    files = sorted(EXAMPLES.glob("*.png"))
    run = subprocess.run([program("GMLP_TEST_CLASSIFY"), "--json", "-k", "3", "-m", str(BUNDLED), *map(str, files)],
                         capture_output=True, text=True, check=True)
    results = json.loads(run.stdout)["results"]
    with gmlp.load(BUNDLED) as m:
        tops = m.topk(m.classify(np.stack([m.preprocess(Image.open(f)) for f in files])), k=3)
    assert len(results) == len(tops) == len(files) >= 10
    for f, r, top in zip(files, results, tops):
        assert r["file"] == str(f)
        assert [(t["index"], t["label"]) for t in r["top"]] == [(i, label) for i, label, _ in top]
        np.testing.assert_allclose([t["prob"] for t in r["top"]], [p for _, _, p in top], rtol=0, atol=1e-6)
        assert as_file_name(top[0][1]) == f.stem.rsplit("-", 1)[0]


@needs_device
@pytest.mark.parametrize("model", [BUNDLED, E2E / "gmlp_headless.safetensors"], ids=["bundled", "headless"])
def test_features_as_gmlp_classify(model: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """gmlp-classify --features (stb_image and the library in C, the images in one batch) writes Model.features
    of the same images through PIL and preprocess, bit for bit: a float32 (n, dim) .npy, the files in
    OUT.paths.txt in its rows' order; for a classifier and a model without a head alike.  (Model.features
    against timm's forward_head(pre_logits=True) is test_timm_fixture's.)"""
    files = sorted(EXAMPLES.glob("*.png"))
    out = tmp_path / "f.npy"
    subprocess.run([program("GMLP_TEST_CLASSIFY"), "-q", "--features", "-b", str(len(files)), "-m", str(model),
                    "-o", str(out), *map(str, files)], check=True)
    with gmlp.load(model) as m:
        want = m.features(np.stack([m.preprocess(Image.open(f)) for f in files]))
        dim = m.config["dim"]
    got = np.load(out)
    assert got.dtype == np.float32 and got.shape == want.shape == (len(files), dim)
    assert np.array_equal(got, want)
    assert (tmp_path / "f.paths.txt").read_text().splitlines() == list(map(str, files))


@needs_device
def test_topk_is_the_softmax_order() -> None:
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(3, 10)).astype(np.float32)
    logits[0, 7] = logits[0, 4]  # a tie: the lower index first
    with gmlp.load(BUNDLED) as m:
        labels = m.config["labels"]
        tops = m.topk(logits, k=4)
        assert m.topk(logits[1], k=4) == tops[1]
        assert [i for i, _, _ in m.topk(logits[2], k=99)] == list(np.argsort(-logits[2], kind="stable"))
    for row, top in zip(logits.astype(np.float64), tops):
        p = np.exp(row - row.max())
        p /= p.sum()
        order = np.argsort(-row, kind="stable")[:4]
        assert [i for i, _, _ in top] == list(order)
        assert [label for _, label, _ in top] == [labels[i] for i in order]
        np.testing.assert_allclose([q for _, _, q in top], p[order], rtol=1e-6)


@needs_device
def test_example_script() -> None:
    """examples/classify.py with its defaults: each example image gets the class its name says."""
    run = subprocess.run([sys.executable, str(EXAMPLES / "classify.py"), "-k", "1"], capture_output=True, text=True,
                         check=True)
    lines = run.stdout.splitlines()
    files = sorted(EXAMPLES.glob("*.png"))
    assert lines[0::2] == [str(f) for f in files]
    for f, line in zip(files, lines[1::2]):
        assert as_file_name(line.split("%", 1)[1].strip()) == f.stem.rsplit("-", 1)[0], line


@needs_device
@pytest.mark.parametrize("name", ["gmlp_wide", "mixer_miil", "gmlp_grey_nocrop", "gmlp_nearest_pad", "gmlp_squash",
                                  "mixer_border", "gmlp_conflict"])
def test_model_folder(name: str) -> None:
    """Hugging Face model folders (tests/data/hf, timm's save_for_hf): preprocessing from config.json,
    on the PIL images, and the logits, as timm in float64."""
    hf = DATA / "hf"
    ref = read_safetensors(hf / f"{name}.ref.safetensors")
    with gmlp.load(hf / name) as m:
        x = np.stack([m.preprocess(Image.open(hf / p)) for p in ref["__metadata__"]["inputs"].splitlines()])
        assert rel_error(x, ref["images"].astype(np.float64)) <= 1e-5
        assert rel_error(m.classify(x), ref["logits"]) <= TOL["f32"]


@needs_device
def test_model_folder_refused() -> None:
    """A folder with only PyTorch weights is refused, pointing to the exporter."""
    with pytest.raises(gmlp.Error, match="tools/export_vision.py"):
        gmlp.load(DATA / "hf" / "bin_only")


@needs_device
def test_labels_empty_name_and_topk_width(tmp_path: pathlib.Path) -> None:
    """An empty name is a label (config and topk keep it); logits wider than the classes are refused."""
    path = with_metadata(E2E / "gmlp_rgb.safetensors", tmp_path / "labels.safetensors",
                         gmlp_labels="a\n\nc\nd\ne\nf\ng")  # 7 classes, the second named ""
    with gmlp.load(path) as m:
        assert m.config["labels"] == ["a", "", "c", "d", "e", "f", "g"]
        logits = np.array([0, 3, 2, 1, -1, -2, -3], np.float32)
        assert [(i, label) for i, label, _ in m.topk(logits, k=3)] == [(1, ""), (2, "c"), (3, "d")]
        assert len(m.topk(logits[:4], k=9)) == 4  # fewer logits than classes: those given
        for bad in (np.zeros(8, np.float32), np.zeros((2, 8), np.float32)):
            with pytest.raises(ValueError, match=r"n from 1 to 7 \(the model's classes\)"):
                m.topk(bad)

