"""Language models: the g-mlp-pytorch float64 fixtures through lm_logits, and generate against
gmlp-generate (same model, options and seed: the same tokens), streaming, seeds, prompt types."""
from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import gmlp
from conftest import DATA, needs_device, program, read_safetensors, rel_error

pytestmark = needs_device
LM = DATA / "lm"
FIXTURES = sorted(p.name[:-len(".ref.safetensors")] for p in LM.glob("*.ref.safetensors"))
BYTES = LM / "causal.safetensors"  # vocab 256 (bytes), causal, seq_len 12
IDS = LM / "kitchen_sink.safetensors"  # vocab 67, causal, seq_len 16
BIDIR = LM / "bidir.safetensors"


@pytest.mark.parametrize("name", FIXTURES)
def test_lm_fixture(name: str) -> None:
    ref = read_safetensors(LM / f"{name}.ref.safetensors")
    meta = ref["__metadata__"]
    tokens = ref["tokens"]
    with gmlp.load(LM / f"{name}.safetensors") as m:
        c = m.config
        for key in ("vocab_size", "seq_len", "dim", "depth", "ffn_dim", "heads", "attn_dim", "shift_tokens"):
            assert c[key] == int(meta[key]), key
        assert (c["arch"], c["gate_act"], c["causal"], c["circulant"]) == \
            ("gmlp_lm", meta["act"], meta["causal"] == "true", meta["circulant"] == "true")
        logits = m.lm_logits(tokens)
        assert logits.dtype == np.float32 and logits.shape == ref["logits"].shape
        assert rel_error(logits, ref["logits"]) <= 1e-4
        # one sequence as (N,), its tokens as int64: its rows
        one = m.lm_logits(tokens[0].astype(np.int64))
        assert rel_error(one, ref["logits"][0]) <= 1e-4


def app_tokens(model: object, prompt: list[str], n: int, seed: int, temperature: float, top_k: int,
               top_p: float) -> list[int]:
    """What gmlp-generate produces with these options."""
    run = subprocess.run([program("GMLP_TEST_GENERATE"), "-q", "--json", "-m", str(model), "-n", str(n),
                          "-s", str(seed), "--temperature", str(temperature), "--top-k", str(top_k),
                          "--top-p", str(top_p), *prompt], capture_output=True, text=True, check=True)
    return json.loads(run.stdout)["tokens"]


# (model, prompt, max_tokens, seed, temperature, top_k, top_p); 30 tokens pass seq_len 12 (the window slides)
GENERATE_CASES = [
    (BYTES, b"Hello", 24, 7, 1.0, 0, 1.0),
    (BYTES, b"Hi", 30, 3, 0.8, 40, 0.95),
    (BYTES, b"x", 16, 2**53, 1.5, 5, 1.0),
    (IDS, [1, 2, 3, 66], 20, 5, 0.7, 10, 0.9),
    (IDS, [0], 8, 0, 0.0, 0, 1.0),
]


@pytest.mark.parametrize("case", GENERATE_CASES, ids=lambda c: f"{c[0].stem}-{c[3]}")
def test_generate_as_gmlp_generate(case: tuple) -> None:
    model, prompt, n, seed, t, k, p = case
    args = [prompt.decode()] if isinstance(prompt, bytes) else ["--tokens", ",".join(map(str, prompt))]
    want = app_tokens(model, args, n, seed, t, k, p)
    assert len(want) == n
    with gmlp.load(model) as m:
        got = m.generate(prompt, max_tokens=n, temperature=t, top_k=k, top_p=p, seed=seed)
        assert m.last_seed == seed
        assert (list(got) if isinstance(prompt, bytes) else got) == want
        streamed = list(m.generate(prompt, max_tokens=n, temperature=t, top_k=k, top_p=p, seed=seed, stream=True))
        assert streamed == ([bytes((b,)) for b in want] if isinstance(prompt, bytes) else want)
        if isinstance(prompt, bytes):  # str in, str out: the same bytes, decoded with errors="replace"
            text = bytes(want).decode("utf-8", "replace")
            assert m.generate(prompt.decode(), max_tokens=n, temperature=t, top_k=k, top_p=p, seed=seed) == text
            assert "".join(m.generate(prompt.decode(), max_tokens=n, temperature=t, top_k=k, top_p=p, seed=seed,
                                      stream=True)) == text


def test_seed_none_is_random_and_kept() -> None:
    with gmlp.load(BYTES) as m:
        first = m.generate(b"Hello", max_tokens=20)
        seed = m.last_seed
        assert isinstance(seed, int) and 0 <= seed <= 2**53
        assert m.generate(b"Hello", max_tokens=20, seed=seed) == first
        m.generate(b"Hello", max_tokens=20, seed=-1)  # -1 is random too, as gmlp-generate -s -1
        seeds = {seed, m.last_seed}
        for _ in range(3):
            m.generate(b"Hello", max_tokens=1)
            seeds.add(m.last_seed)
        assert len(seeds) > 1
        with pytest.raises(ValueError):
            m.generate(b"Hello", seed=2**53 + 1)
        # greedy: the seed does not matter
        assert m.generate(b"Hello", max_tokens=20, temperature=0, seed=1) == \
            m.generate(b"Hello", max_tokens=20, temperature=0, seed=2)


def test_stream_left_early_stops() -> None:
    with gmlp.load(IDS) as m:
        pieces = m.generate([1, 2], max_tokens=1000, seed=4, stream=True)
        first = [next(pieces) for _ in range(3)]
        pieces.close()  # the generation stops at its next token
        assert first == m.generate([1, 2], max_tokens=3, seed=4)
        assert m.generate([1, 2], max_tokens=0) == []


def test_generate_refusals() -> None:
    with gmlp.load(IDS) as m:
        with pytest.raises(ValueError, match="list of token ids"):
            m.generate("Hello")  # not a byte-level model
        with pytest.raises(ValueError):
            m.generate([])
        with pytest.raises(gmlp.Error) as e:
            m.generate([67])  # outside the vocabulary
        assert e.value.status == gmlp.Status.INVALID_ARGUMENT and "67" in str(e.value)
        with pytest.raises(gmlp.Error) as e:
            m.generate([1], top_p=0)
        assert e.value.status == gmlp.Status.INVALID_ARGUMENT
        # integers are checked before ctypes wraps them to the C type (2**32 + 1 would be top_k 1: greedy),
        # with gmlp-generate's bounds and words
        top_k_range = r"expected an integer from 0 \(all tokens\) to 1073741824$"
        for k in (-1, 2**30 + 1, 2**31, 2**32, 2**32 + 1):
            with pytest.raises(ValueError, match=rf"top_k {k}; {top_k_range}"):
                m.generate([1], top_k=k)
        for n in (-1, 2**20 + 1, 2**64 + 1):
            with pytest.raises(ValueError, match=rf"max_tokens {n}; expected an integer from 0 to 1048576"):
                m.generate([1], max_tokens=n)
        for seed in (-2, 2**64):
            with pytest.raises(ValueError, match=rf"seed {seed}; expected -1 \(random\) or 0 to 2\*\*53"):
                m.generate([1], seed=seed)
        # the library's temperature bound, gmlp-generate's: 1e300 is an infinite float
        for t in (float("inf"), float("nan"), 1e300, 2e6):
            with pytest.raises(ValueError, match=r"temperature \S+ must be at most 1e\+06"):
                m.generate([1], temperature=t)
        assert len(m.generate([1], max_tokens=2, temperature=1e6, top_k=2**30, seed=1)) == 2
    with gmlp.load(BIDIR) as m:
        with pytest.raises(gmlp.Error) as e:
            m.generate([1, 2])
        assert e.value.status == gmlp.Status.WRONG_MODEL and "bidirectional" in str(e.value)
