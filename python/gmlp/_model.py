"""gmlp.load and the Model it returns: one gmlp_context and one gmlp_model,
freed together by close(), the context manager or garbage collection."""
from __future__ import annotations

import codecs
import ctypes
import operator
import os
import queue
import secrets
import threading
import weakref
from typing import Any, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _arrays
from ._lib import (ARCH, ARCH_LM, CROP_MODE, GATE_ACT, INTERPOLATION, WEIGHTS, Config, GenerateOptions,
                   LoadOptions, Status, TokenCallback, argument_error, check, error, last_error, lib)

Prompt = Union[str, bytes, bytearray, Sequence[int]]
TopK = List[Tuple[int, Optional[str], float]]

# gmlp-generate's bounds: -s 0 .. 2^53 as given, -1 (and, here, None) random; -n; --top-k.
SEED_MAX = 1 << 53
MAX_TOKENS = 1 << 20
TOP_K_MAX = 1 << 30


class Precision(NamedTuple):
    """The precision a model runs in (Model.precision)."""

    mode: str
    """"fp32", "tf32", "fp16" or "bf16": the format the operands of every matrix product are rounded to."""
    engine: str
    """What runs the products: "portable" (the library's kernels), "CLBlast", or a matrix engine's instruction."""


def _name(names: Tuple[str, ...], value: int) -> Union[str, int]:
    return names[value] if 0 <= value < len(names) else value


def _f32(value: float) -> float:
    """A float of the config as the shortest decimal that is the same float32 (0.286, not 0.28600001...)."""
    return float(str(np.float32(value)))


def _int_arg(what: str, value: Any, lo: int, hi: int, expected: str) -> int:
    """value as an int in lo..hi, else an argument error: checked here, as ctypes would wrap it to the C type."""
    v = operator.index(value)
    if not lo <= v <= hi:
        raise argument_error(f"{what} {v}; expected {expected}")
    return v


def _image_array(img: Any) -> np.ndarray:
    """An HxW or HxWxC (C 1..4) uint8 array, or a PIL image, as H x W x C uint8."""
    if type(img).__module__.startswith("PIL."):
        if img.mode == "P":  # as stb_image decodes a palette: RGB, or RGBA with transparency
            img = img.convert("RGBA" if "transparency" in img.info else "RGB")
        elif img.mode in ("1", "CMYK", "YCbCr", "LAB", "HSV", "PA", "La", "RGBa", "RGBX"):
            img = img.convert("RGBA" if img.mode in ("PA", "La", "RGBa") else "RGB")
        elif img.mode in ("I", "I;16", "I;16B", "I;16L", "I;16N"):  # 16-bit grey: PIL's conversion clips
            img = img.convert("L")  # at 255, to L as to the RGB timm's loader asks for
        elif img.mode not in ("L", "LA", "RGB", "RGBA"):
            raise argument_error(f"preprocess: PIL mode {img.mode} has no exact 8-bit form; convert the image "
                                 "to L, LA, RGB or RGBA first")
    a = _arrays.exact(img, np.uint8, "preprocess: image")
    if a.ndim == 2:
        a = a[:, :, None]
    if a.ndim != 3 or not 1 <= a.shape[2] <= 4:
        raise argument_error(f"preprocess: image of shape {a.shape}; expected H x W or H x W x C with C 1 to 4")
    return a


def preprocess_image(cfg: Config, img: Any) -> npt.NDArray[np.float32]:
    """gmlp_preprocess_rgb8 under cfg: one image to in_chans x img_h x img_w."""
    a = _image_array(img)
    out = np.empty((cfg.in_chans, cfg.img_h, cfg.img_w), np.float32)
    h, w, c = a.shape
    check(lib.gmlp_preprocess_rgb8(ctypes.byref(cfg), _arrays.address(a), w, h, c, _arrays.address(out)), None)
    return out


class Model:
    """A model loaded on an OpenCL device (make one with gmlp.load).

    Calls from several threads are safe; they run one at a time on a model
    (its context's lock), in parallel on different models.  The GIL is
    released while the library works."""

    config: dict
    """gmlp_config as a dict keyed by its field names, plus "labels"."""
    device: str
    """The device the model runs on."""
    last_seed: Optional[int]
    """The seed of the last generate() call: the one given, or the random one drawn."""
    precision: Precision
    """The precision in force and what runs it (gmlp_model_precision)."""

    def __init__(self, ctx: int, model: int) -> None:
        self._ctx = ctx
        self._model = model
        self._lock = threading.Lock()  # one call at a time: gmlp_last_error(ctx) belongs to it
        self._streams: "weakref.WeakSet[threading.Event]" = weakref.WeakSet()
        self._finalizer = weakref.finalize(self, _free, ctx, model)
        self._cfg = Config()
        check(lib.gmlp_model_config(model, ctypes.byref(self._cfg)), ctx)
        self.device = lib.gmlp_context_device_name(ctx).decode("utf-8", "replace")
        mode, engine = ctypes.c_int(), ctypes.create_string_buffer(64)
        check(lib.gmlp_model_precision(model, ctypes.byref(mode), engine, len(engine)), ctx)
        self.precision = Precision(lib.gmlp_precision_name(mode.value).decode(), engine.value.decode())
        self.config = self._config_dict()
        self._labels = tuple(self.config["labels"] or ())  # topk's, whatever a caller does to config
        self.last_seed = None
        # tokens are bytes, as gmlp-generate decides: vocab 256 and no other gmlp.tokenizer
        tokenizer = lib.gmlp_model_metadata(model, b"gmlp.tokenizer")
        self._bytes = self._cfg.vocab_size == 256 and tokenizer in (None, b"bytes")

    # ---- life cycle ----
    def close(self) -> None:
        """Frees the model and its context (after any call in flight, stopping streams); idempotent."""
        for stop in list(self._streams):
            stop.set()
        with self._lock:
            self._finalizer()
            self._model = self._ctx = 0

    def __enter__(self) -> "Model":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if not self._model else f"on {self.device!r}"
        return f"<gmlp.Model {self.config['arch']} {state}>"

    def _call(self, fn: Any, *args: Any) -> None:
        """fn(model, *args) under the lock; raises the library's error."""
        with self._lock:
            if not self._model:
                raise argument_error("the model is closed")
            st = fn(self._model, *args)
            if st:
                raise error(st, last_error(self._ctx))

    def _config_dict(self) -> dict:
        c = self._cfg
        d: dict = {field[0]: getattr(c, field[0]) for field in Config._fields_ if field[0] != "size"}
        n = c.in_chans
        d.update(arch=_name(ARCH, c.arch), interpolation=_name(INTERPOLATION, c.interpolation),
                 crop_mode=_name(CROP_MODE, c.crop_mode), gate_act=_name(GATE_ACT, c.gate_act),
                 weights=_name(WEIGHTS, c.weights), mean=tuple(map(_f32, c.mean[:n])),
                 std=tuple(map(_f32, c.std[:n])), crop_pct=_f32(c.crop_pct), norm_eps=_f32(c.norm_eps),
                 sgu_eps=_f32(c.sgu_eps), causal=bool(c.causal), circulant=bool(c.circulant),
                 stem_norm=bool(c.stem_norm))
        labels = [lib.gmlp_model_label(self._model, i) for i in range(c.num_classes)]
        # None without labels (NULL); an empty name ("") is a label
        d["labels"] = [s.decode("utf-8", "replace") for s in labels] if labels and None not in labels else None
        return d

    # ---- vision ----
    def _images(self, x: npt.ArrayLike, what: str) -> Tuple[np.ndarray, bool]:
        c = self._cfg
        if c.arch == ARCH_LM:
            raise error(Status.WRONG_MODEL, f"{what}: the model is a language model (use lm_logits or generate)")
        a = _arrays.exact(x, np.float32, f"{what}: images")
        return _arrays.batch_of(a, (c.in_chans, c.img_h, c.img_w), f"{what}: images (B, C, H, W)")

    def preprocess(self, img: Any) -> npt.NDArray[np.float32]:
        """timm's eval transform for one 8-bit image (H x W x C uint8 array, C 1 to 4, or a PIL image):
        resize, centre crop and normalise as the model's config says -> C x H x W float32."""
        if self._cfg.arch == ARCH_LM:
            raise error(Status.WRONG_MODEL, "preprocess: the model is a language model")
        return preprocess_image(self._cfg, img)

    def classify(self, x: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """Logits of normalised images: float32 (B, C, H, W) -> (B, num_classes); one (C, H, W) -> (num_classes,)."""
        a, single = self._images(x, "classify")
        out = np.empty((a.shape[0], self._cfg.num_classes), np.float32)
        self._call(lib.gmlp_classify, _arrays.address(a), a.shape[0], _arrays.address(out))
        return out[0] if single else out

    def features(self, x: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """Pooled features (after the final LayerNorm, before the head): (B, C, H, W) -> (B, dim)."""
        a, single = self._images(x, "features")
        out = np.empty((a.shape[0], self._cfg.dim), np.float32)
        self._call(lib.gmlp_features, _arrays.address(a), a.shape[0], _arrays.address(out))
        return out[0] if single else out

    def classify_features(self, x: npt.ArrayLike) -> Tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """Logits and pooled features of the same images from one forward, each as classify and features
        give them, bit for bit: (B, C, H, W) -> ((B, num_classes), (B, dim)); one (C, H, W) -> their rows."""
        a, single = self._images(x, "classify_features")
        logits = np.empty((a.shape[0], self._cfg.num_classes), np.float32)
        feats = np.empty((a.shape[0], self._cfg.dim), np.float32)
        self._call(lib.gmlp_classify_features, _arrays.address(a), a.shape[0], _arrays.address(logits),
                   _arrays.address(feats))
        return (logits[0], feats[0]) if single else (logits, feats)

    def topk(self, logits: npt.ArrayLike, k: int = 5) -> Union[TopK, List[TopK]]:
        """The k most probable classes, [(index, label, probability), ...] in descending order (softmax of
        the logits, ties to the lower index; label None without labels), for each row of a (B, n) array,
        or one list for a (n,) row, n at most the model's classes (its vocabulary: a language model).
        k above n gives all n."""
        a = _arrays.exact(logits, np.float32, "topk: logits")
        lm = self._cfg.arch == ARCH_LM
        classes = self._cfg.vocab_size if lm else self._cfg.num_classes
        if a.ndim not in (1, 2) or not 1 <= a.shape[-1] <= classes:
            raise argument_error(f"topk: logits of shape {a.shape}; expected (n,) or (B, n) with n from 1 to "
                                 f"{classes} (the model's {'vocabulary' if lm else 'classes'})")
        rows = a.reshape(-1, a.shape[-1])
        n = rows.shape[1]
        k = min(int(k), n)
        index = np.empty(max(k, 1), np.int32)
        prob = np.empty(max(k, 1), np.float32)
        labels = self._labels
        result = []
        for row in rows:
            check(lib.gmlp_softmax_topk(_arrays.address(row), n, k, _arrays.address(index), _arrays.address(prob)),
                  None)
            result.append([(int(i), labels[i] if i < len(labels) else None, float(p))
                           for i, p in zip(index[:k], prob[:k])])
        return result[0] if a.ndim == 1 else result

    # ---- language models ----
    def lm_logits(self, tokens: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """Logits of every position: int tokens (B, N) -> float32 (B, N, vocab_size); (N,) -> (N, vocab_size)."""
        t = _arrays.exact(tokens, np.int32, "lm_logits: tokens")
        if t.ndim not in (1, 2):
            raise argument_error(f"lm_logits: tokens of shape {t.shape}; expected (B, N) or (N,)")
        b, n = (1, t.shape[0]) if t.ndim == 1 else t.shape
        out = np.empty((b, n, self._cfg.vocab_size), np.float32)
        self._call(lib.gmlp_lm_logits, _arrays.address(t), b, n, _arrays.address(out))
        return out[0] if t.ndim == 1 else out

    def generate(self, prompt: Prompt, max_tokens: int = 100, temperature: float = 1.0, top_k: int = 0,
                 top_p: float = 1.0, seed: Optional[int] = None,
                 stream: bool = False) -> Union[str, bytes, List[int], Iterator[Union[str, bytes, int]]]:
        """Continues prompt with up to max_tokens tokens (causal language models).

        A str prompt (byte-level models only) is encoded as UTF-8 and the continuation returned as str
        (decoded with errors="replace"); bytes give bytes; a list of token ids gives a list of ids.
        gmlp-generate's bounds: max_tokens 0 to 2**20, temperature 0 (greedy) to 1e6, top_k 0 (all tokens) to
        2**30, top_p in (0, 1] (1: all tokens).  seed: 0 to 2**53 as gmlp-generate -s takes it (same seed,
        same tokens); None or -1 draws one, kept in last_seed.
        stream=True returns an iterator of the pieces (str, bytes or int) as they are generated; leaving it
        early stops the generation.  Other calls on the model wait until a generation (or stream) ends."""
        if self._cfg.arch != ARCH_LM:
            raise error(Status.WRONG_MODEL, "generate: not a language model (use classify)")
        if isinstance(prompt, (str, bytes, bytearray)):
            if not self._bytes:
                raise argument_error(f"generate: this model's vocabulary has {self._cfg.vocab_size} tokens, not "
                                     "the 256 bytes of a byte-level model: give the prompt as a list of token ids")
            kind = "text" if isinstance(prompt, str) else "bytes"
            data = prompt.encode("utf-8") if isinstance(prompt, str) else bytes(prompt)
            tokens = np.frombuffer(data, np.uint8).astype(np.int32)
        else:
            kind, tokens = "ids", _arrays.exact(prompt, np.int32, "generate: prompt")
        if tokens.ndim != 1 or tokens.size == 0:
            raise argument_error("generate: the prompt must be a non-empty sequence of tokens")
        seed = -1 if seed is None else _int_arg("generate: seed", seed, -1, SEED_MAX, "-1 (random) or 0 to 2**53")
        seed = secrets.randbelow(SEED_MAX + 1) if seed == -1 else seed
        max_tokens = _int_arg("generate: max_tokens", max_tokens, 0, MAX_TOKENS, "an integer from 0 to 1048576")
        top_k = _int_arg("generate: top_k", top_k, 0, TOP_K_MAX, "an integer from 0 (all tokens) to 1073741824")
        opts = GenerateOptions()
        lib.gmlp_generate_options_default(ctypes.byref(opts))
        opts.temperature, opts.top_k, opts.top_p = float(temperature), top_k, float(top_p)
        opts.seed, opts.max_tokens = seed, max_tokens
        self.last_seed = seed
        if stream:
            return self._stream(tokens, opts, kind)
        out = self._generate(tokens, opts)
        return bytes(out).decode("utf-8", "replace") if kind == "text" else bytes(out) if kind == "bytes" else out

    def _generate(self, tokens: np.ndarray, opts: GenerateOptions) -> List[int]:
        out = np.empty(max(opts.max_tokens, 1), np.int32)
        n = ctypes.c_size_t()
        self._call(lib.gmlp_lm_generate, _arrays.address(tokens), tokens.size, ctypes.byref(opts),
                   _arrays.address(out), ctypes.byref(n))
        return out[:n.value].tolist()

    def _stream(self, tokens: np.ndarray, opts: GenerateOptions, kind: str) -> Iterator[Union[str, bytes, int]]:
        """Runs the generation in a thread; its on_token callback queues each token for the caller."""
        pieces: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        stop = threading.Event()
        done = object()

        def on_token(_user: Optional[int], token: int) -> int:
            pieces.put(token)
            return int(stop.is_set())

        def run() -> None:
            try:
                self._generate(tokens, opts)
                pieces.put(done)
            except BaseException as e:  # handed to the caller's thread
                pieces.put(e)

        opts.on_token = TokenCallback(on_token)
        self._streams.add(stop)
        worker = threading.Thread(target=run, name="gmlp.generate", daemon=True)
        decoder = codecs.getincrementaldecoder("utf-8")("replace") if kind == "text" else None

        def pieces_of() -> Iterator[Union[str, bytes, int]]:
            worker.start()
            try:
                while (item := pieces.get()) is not done:
                    if isinstance(item, BaseException):
                        raise item
                    if decoder:
                        text = decoder.decode(bytes((item,)))
                        if text:
                            yield text
                    else:
                        yield bytes((item,)) if kind == "bytes" else item
                if decoder and (rest := decoder.decode(b"", final=True)):
                    yield rest
            finally:
                stop.set()
                worker.join()

        return pieces_of()


def _free(ctx: int, model: int) -> None:
    lib.gmlp_model_free(model)
    lib.gmlp_context_destroy(ctx)


def load(path: Union[str, os.PathLike], device: Union[str, int, None] = None, weights: str = "f32",
         precision: Optional[str] = None) -> Model:
    """Loads a model file (.safetensors) or model folder onto an OpenCL device.

    device: None takes $GMLP_DEVICE, else the first GPU, else the first device; an index in devices()
    order, "gpu", "cpu", or a case-insensitive part of the platform, device or vendor name.
    weights: "f32", or "f16" / "bf16" to keep the weight matrices as half / bfloat16 (half the memory; a
        "bf16" precision keeps "f32" weights as bfloat16, what its products round them to).
    precision: "fp32", "tf32", "fp16" or "bf16", the format the operands of every matrix product are
    rounded to (products accumulate in fp32), as PyTorch's allow_tf32 and autocast; None takes
    $GMLP_PRECISION, else "fp32".  Model.precision says which is in force and what runs it."""
    if weights not in WEIGHTS:
        raise argument_error(f"load: weights {weights!r}; expected 'f32', 'f16' or 'bf16'")
    mode = ctypes.c_int(0)  # GMLP_PRECISION_AUTO
    if precision is not None and (not isinstance(precision, str) or
                                  lib.gmlp_precision_parse(precision.encode(), ctypes.byref(mode)) or not mode.value):
        raise argument_error(f"load: precision {precision!r}; expected 'fp32', 'tf32', 'fp16' or 'bf16' "
                             "(None: $GMLP_PRECISION, else 'fp32')")
    ctx = ctypes.c_void_p()
    spec = None if device is None else str(device).encode()
    check(lib.gmlp_context_create(spec, ctypes.byref(ctx)), None)
    opts = LoadOptions()
    lib.gmlp_load_options_default(ctypes.byref(opts))
    opts.weights = WEIGHTS.index(weights)
    opts.precision = mode.value
    model = ctypes.c_void_p()
    st = lib.gmlp_model_load_ex(ctx, os.fsencode(path), ctypes.byref(opts), ctypes.byref(model))
    if st:
        e = error(st, last_error(ctx.value))
        lib.gmlp_context_destroy(ctx)
        raise e
    return Model(ctx.value or 0, model.value or 0)


def devices() -> List[str]:
    """The OpenCL devices, one description each, in the order device indices count; [] without a platform."""
    n = lib.gmlp_list_devices(None, 0)
    if n == 0:
        return []
    buf = ctypes.create_string_buffer(n + 1)
    lib.gmlp_list_devices(buf, n + 1)
    return buf.value.decode("utf-8", "replace").splitlines()
