"""The one jieba loader: imported on first use, initialised once, quietly.

jieba's "Building prefix dict" messages go through its own logger, set to
WARNING here; the ``pkg_resources`` deprecation warning its import triggers is
silenced. jieba's process-wide default dictionary is used. Nothing happens at
import time of this module.
"""

from __future__ import annotations

import logging
import warnings
from functools import cache
from typing import Any

from finegrain.errors import MissingDependencyError


@cache
def load_jieba() -> Any:
    """The ``jieba`` module, imported and initialised (dictionary loaded) once per process."""

    try:
        with warnings.catch_warnings():
            # jieba imports pkg_resources, which recent setuptools flags as deprecated on stderr.
            warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
            import jieba
    except ImportError:  # pragma: no cover - jieba is a core dependency
        raise MissingDependencyError("jieba", "zh") from None
    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


@cache
def load_posseg() -> Any:
    """``jieba.posseg`` (part-of-speech tagging), on the dictionary :func:`load_jieba` loaded."""
    load_jieba()
    from jieba import posseg

    return posseg


def pos_words(text: str) -> list[tuple[str, str]]:
    """``(word, part-of-speech flag)`` for each jieba word of ``text``, in order (``jieba.posseg.lcut``)."""
    return [(w, flag) for w, flag in load_posseg().lcut(text)]


def pos_spans(text: str) -> list[tuple[int, int, str, str]]:
    """``(start, end, word, flag)`` of each jieba word of ``text``: :func:`pos_words` with character offsets."""
    out, pos = [], 0
    for word, flag in pos_words(text):
        out.append((pos, pos + len(word), word, flag))
        pos += len(word)
    return out
