"""Plain reference readings shared by the command-input fuzz targets (:mod:`.fuzz_inputs`).

Written apart from finegrain's readers, from the format descriptions: strict JSON (no NaN or
Infinity, no lone surrogate), JSON lines split on ``\\n`` with a ``\\r`` before it dropped and a
byte-order mark allowed at the start, and the one id rule of :mod:`finegrain.io.ids` restated
character by character from Unicode categories (only its length bound is shared). A failed
reading raises :class:`~finegrain.testing.fuzz.Invalid`.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
import unicodedata
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from finegrain.io.ids import MAX_ID_CHARS
from finegrain.testing.fuzz import Invalid

_INT64 = (-(1 << 63), (1 << 63) - 1)


def utf8_text(b: bytes) -> str:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        raise Invalid(f"not UTF-8: {b[:40]!r}") from None


def strict_json(text: str, *, infinity: bool = False) -> Any:
    """Strict JSON: no NaN (no Infinity unless ``infinity``), no lone surrogate; anything Python cannot
    parse is invalid."""

    def constant(name: str) -> Any:
        if infinity and name in ("Infinity", "-Infinity"):
            return float(name.replace("Infinity", "inf"))
        raise Invalid(f"{name} is not JSON")

    try:
        value = json.loads(text, parse_constant=constant)
    except Invalid:
        raise
    except (ValueError, RecursionError) as e:
        raise Invalid(f"not JSON: {type(e).__name__}") from None
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise Invalid("a lone surrogate") from None
    except (ValueError, RecursionError):
        raise Invalid("too deep") from None
    return value


def json_document(data: bytes) -> Any:
    """A whole JSON file (a UTF-8 byte-order mark at its start is not part of it)."""
    return strict_json(utf8_text(data[3:] if data.startswith(b"\xef\xbb\xbf") else data))


def json_records(data: bytes) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, object)`` of a JSON-lines file: lines end at ``\\n`` (a ``\\r`` before it is dropped),
    a byte-order mark may open the file, lines holding only whitespace are skipped."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for n, raw in enumerate(data.split(b"\n"), 1):
        line = utf8_text(raw[:-1] if raw.endswith(b"\r") else raw)
        if not line.strip():
            continue
        obj = strict_json(line)
        if not isinstance(obj, dict):
            raise Invalid(f"line {n} is not an object")
        yield n, obj


def is_int64(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and _INT64[0] <= v <= _INT64[1]


def _control(c: str) -> bool:
    return unicodedata.category(c) in ("Cc", "Cs")


def json_id(v: Any, *, numbers: bool = True) -> str:
    """An id of a JSON format: a string (or an integer, its decimal form), not blank, not over-long."""
    if numbers and isinstance(v, int) and not isinstance(v, bool):
        v = str(v)
    if not isinstance(v, str) or not v.strip() or len(v) > MAX_ID_CHARS:
        raise Invalid(f"id {v!r:.40}")
    return v


def tsv_ok(s: str) -> bool:
    """Whether a tab-separated field can hold ``s``: no control character, line or paragraph separator."""
    return not any(_control(c) or c in "\u2028\u2029" for c in s)


def token_ok(s: str, first: bool) -> bool:
    """Whether a whitespace-separated field can hold ``s`` (a query id opening a line: no leading ``#`` or U+FEFF)."""
    # a line opening with '#' is a comment to trec_eval; a file opening with U+FEFF, a byte-order mark
    return not any(_control(c) or c.isspace() for c in s) and not (first and s.startswith(("#", "\ufeff")))


def removed_at_exit(folder: Path) -> Path:
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


class Scratch:
    """Folders for the files the commands write (never the fuzzer's input folder, which it empties)."""

    @staticmethod
    @cache
    def root() -> Path:
        base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None  # no fsync cost
        return removed_at_exit(Path(tempfile.mkdtemp(prefix="finegrain-fuzz-inputs-", dir=base)))

    @staticmethod
    def clear() -> Path:
        root = Scratch.root()
        for p in root.iterdir():
            if p.is_file():
                p.unlink()
        return root
