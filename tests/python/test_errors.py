"""Errors: the library's status and message on gmlp.Error, argument errors as ValueErrors, and arrays
converted where that is lossless and refused otherwise."""
from __future__ import annotations

import numpy as np
import pytest

import gmlp
from conftest import DATA, needs_device, read_safetensors

pytestmark = needs_device
RGB = DATA / "e2e" / "gmlp_rgb.safetensors"
LM = DATA / "lm" / "causal.safetensors"


@pytest.fixture(scope="module")
def rgb() -> gmlp.Model:
    with gmlp.load(RGB) as m:
        yield m


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    return read_safetensors(DATA / "e2e" / "gmlp_rgb.ref.safetensors")["images"].copy()


def test_load_errors() -> None:
    with pytest.raises(gmlp.Error) as e:
        gmlp.load(DATA / "broken" / "header_not_json.safetensors")
    assert isinstance(e.value, RuntimeError) and not isinstance(e.value, ValueError)
    assert e.value.status == gmlp.Status.FORMAT and e.value.status.name == "FORMAT"
    assert "header_not_json" in str(e.value)
    with pytest.raises(gmlp.Error) as e:
        gmlp.load(DATA / "no such file.safetensors")
    assert e.value.status == gmlp.Status.IO and "no such file" in str(e.value)
    with pytest.raises(gmlp.Error) as e:
        gmlp.load(DATA / "broken" / "dtype_f64_weight.safetensors")
    assert e.value.status == gmlp.Status.UNSUPPORTED
    with pytest.raises(gmlp.Error) as e:
        gmlp.load(RGB, device="no device has this name")
    assert e.value.status == gmlp.Status.NO_DEVICE and "no device has this name" in str(e.value)
    with pytest.raises(ValueError, match="f8"):
        gmlp.load(RGB, weights="f8")
    for bad in ("fp64", "auto", "", 16):  # None, not "auto", is the default
        with pytest.raises(ValueError, match=f"precision {bad!r}; expected 'fp32', 'tf32', 'fp16' or 'bf16'"):
            gmlp.load(RGB, precision=bad)


def test_precision_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """$GMLP_PRECISION is the default, precision= wins over it; a bad one is the library's argument error."""
    monkeypatch.setenv("GMLP_PRECISION", "bf16")
    with gmlp.load(RGB) as m, gmlp.load(RGB, precision="FP16") as n:
        assert m.precision.mode == "bf16" and n.precision.mode == "fp16"
    monkeypatch.setenv("GMLP_PRECISION", "bogus")
    with pytest.raises(ValueError) as e:
        gmlp.load(RGB)
    assert e.value.status == gmlp.Status.INVALID_ARGUMENT and "GMLP_PRECISION=bogus" in str(e.value)


def test_argument_errors_are_value_errors(rgb: gmlp.Model, images: np.ndarray) -> None:
    with pytest.raises(gmlp.Error) as e:
        rgb.classify(images[:, :2])  # two channels of three
    assert isinstance(e.value, ValueError) and e.value.status == gmlp.Status.INVALID_ARGUMENT
    assert "(B, C, H, W)" in str(e.value) and "(B, 3, " in str(e.value)
    with pytest.raises(ValueError, match="NaN"):
        rgb.topk(np.array([1.0, np.nan], np.float32))
    with pytest.raises(ValueError):
        rgb.preprocess(np.zeros((8, 8, 5), np.uint8))  # 5 channels


def test_wrong_model(rgb: gmlp.Model) -> None:
    with pytest.raises(gmlp.Error) as e:
        rgb.lm_logits([[1, 2]])
    assert e.value.status == gmlp.Status.WRONG_MODEL and "not a language model" in str(e.value)
    with gmlp.load(LM) as lm:
        with pytest.raises(gmlp.Error) as e:
            lm.classify(np.zeros((1, 3, 8, 8), np.float32))
        assert e.value.status == gmlp.Status.WRONG_MODEL
        with pytest.raises(gmlp.Error) as e:
            lm.lm_logits([[1, 2, 300]])
        assert e.value.status == gmlp.Status.INVALID_ARGUMENT and "300" in str(e.value)
        with pytest.raises(gmlp.Error) as e:
            lm.lm_logits(np.zeros((1, 13), np.int32))  # past seq_len 12
        assert e.value.status == gmlp.Status.INVALID_ARGUMENT and "12" in str(e.value)


def test_lossless_conversions(rgb: gmlp.Model, images: np.ndarray) -> None:
    want = rgb.classify(images)
    np.testing.assert_array_equal(rgb.classify(images.astype(np.float64)), want)  # float32 values in float64
    np.testing.assert_array_equal(rgb.classify(np.asfortranarray(images)), want)  # not C-contiguous
    flipped = images[:, :, ::-1].copy()
    np.testing.assert_array_equal(rgb.classify(flipped[:, :, ::-1]), want)  # negative strides
    np.testing.assert_array_equal(rgb.classify(images.tolist()), want)  # nested lists of floats
    ints = np.arange(images.size, dtype=np.int64).reshape(images.shape) % 7 - 3
    np.testing.assert_array_equal(rgb.classify(ints), rgb.classify(ints.astype(np.float32)))
    with gmlp.load(LM) as lm:
        tokens = np.array([[1, 2, 250]], np.int32)
        np.testing.assert_array_equal(lm.lm_logits(tokens.astype(np.uint64)), lm.lm_logits(tokens))
        np.testing.assert_array_equal(lm.lm_logits(tokens.astype(np.float64)), lm.lm_logits(tokens))
        with pytest.raises(ValueError, match="int32"):
            lm.lm_logits(np.array([[1, 2**40]], np.int64))
        with pytest.raises(ValueError, match="int32"):
            lm.lm_logits(np.array([[1.5, 2]]))


def test_lossy_conversions_refused(rgb: gmlp.Model, images: np.ndarray) -> None:
    with pytest.raises(ValueError, match="float32"):
        rgb.classify(images.astype(np.float64) + 1e-12)
    with pytest.raises(ValueError, match="float32"):
        rgb.classify(np.full(images.shape, 2**24 + 1, np.int64))
    with pytest.raises(ValueError, match="not a number type"):
        rgb.classify(images.astype(np.complex64))
    with pytest.raises(ValueError, match="uint8"):
        rgb.preprocess(np.full((8, 8, 3), 256, np.int16))
    with pytest.raises(ValueError, match="uint8"):
        rgb.preprocess(np.full((8, 8, 3), 0.5))
    assert rgb.preprocess(np.full((8, 8, 3), 255, np.int64)).shape == (3, rgb.config["img_h"], rgb.config["img_w"])


def test_closed_model(images: np.ndarray) -> None:
    m = gmlp.load(RGB)
    m.close()
    m.close()  # idempotent
    with pytest.raises(ValueError, match="closed"):
        m.classify(images)
    assert "closed" in repr(m)
