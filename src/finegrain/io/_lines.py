"""Opening plain or gzipped text files and streaming their lines, with errors that say where.

Every reader in :mod:`finegrain.io` goes through these helpers, so every bad
file fails the same way: a :class:`~finegrain.errors.DataFormatError` naming
the path, the 1-based line number, what was expected and what was found.

Lines are split on ``\\n`` only (a trailing ``\\r`` is dropped), so line
numbers agree with ``sed -n Np`` and editors whatever the line endings; a
UTF-8 byte-order mark at the start of a file is ignored.
"""

from __future__ import annotations

import gzip
import io
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from finegrain.errors import DataFormatError, DuplicateIdError, FinegrainError

PathLike = str | os.PathLike[str]

_BOM = b"\xef\xbb\xbf"


class DuplicateRecordError(DataFormatError, DuplicateIdError):
    """An id (or id pair) appears twice in one file; names both line numbers.

    Both a :class:`DataFormatError` (path, line, expected, found) and a
    :class:`DuplicateIdError`, so either may be caught.
    """

    def __init__(self, path: PathLike, line: int, first_line: int, what: str, value: str) -> None:
        self.first_line = first_line
        super().__init__(
            path,
            line,
            f"each {what} once",
            f"{value} again (first at line {first_line})",
            "remove or merge the duplicate",
        )


def is_gzip(path: PathLike) -> bool:
    return str(path).endswith(".gz")


def open_binary(path: PathLike) -> IO[bytes]:
    """Open ``path`` for reading bytes, decompressing when it ends in ``.gz``."""
    p = Path(path)
    try:
        if is_gzip(p):
            return gzip.open(p, "rb")
        return open(p, "rb")
    except FileNotFoundError:
        raise FinegrainError(f"file not found: {str(p)!r}", "check the path") from None
    except IsADirectoryError:
        raise FinegrainError(f"{str(p)!r} is a folder, not a file", "give the path of a file") from None
    except PermissionError:
        raise FinegrainError(f"cannot read {str(p)!r}: permission denied") from None


def open_text_write(path: PathLike) -> IO[str]:
    """Open ``path`` for writing UTF-8 text with ``\\n`` line ends; gzip when it ends in ``.gz``.

    Gzip output carries no timestamp or file name, so the same content gives
    the same bytes. Parent folders are created.
    """
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        raw = open(p, "wb")
    except OSError as e:
        raise FinegrainError(f"cannot write {str(p)!r}: {e.strerror}", "choose a writable path") from None
    if is_gzip(p):
        gz = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0)
        return _ClosingTextWrapper(gz, raw)
    return io.TextIOWrapper(raw, encoding="utf-8", newline="\n")


class _ClosingTextWrapper(io.TextIOWrapper):
    """A text wrapper over a GzipFile that also closes the underlying file."""

    def __init__(self, gz: gzip.GzipFile, raw: IO[bytes]) -> None:
        super().__init__(gz, encoding="utf-8", newline="\n")
        self._raw_file = raw

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._raw_file.close()


def read_bytes(path: PathLike) -> bytes:
    """The whole (decompressed) content of ``path``."""
    with open_binary(path) as f:
        try:
            return f.read()
        except (OSError, EOFError) as e:
            raise DataFormatError(path, None, "a readable gzip file", f"a broken file ({e})") from None


def iter_byte_lines(path: PathLike) -> Iterator[tuple[int, bytes]]:
    """``(line_no, raw line)`` for every line, 1-based, without the line end."""
    with open_binary(path) as f:
        try:
            for n, raw in enumerate(f, 1):
                if n == 1 and raw.startswith(_BOM):
                    raw = raw[3:]
                if raw.endswith(b"\n"):
                    raw = raw[:-1]
                if raw.endswith(b"\r"):
                    raw = raw[:-1]
                yield n, raw
        except (OSError, EOFError) as e:
            raise DataFormatError(path, None, "a readable gzip file", f"a broken file ({e})") from None


def decode(path: PathLike, line_no: int | None, raw: bytes) -> str:
    """``raw`` as UTF-8, or a DataFormatError naming the line."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DataFormatError(path, line_no, "UTF-8 text", repr(raw)[2:-1]) from None


def iter_lines(path: PathLike) -> Iterator[tuple[int, str]]:
    """``(line_no, line)`` for every line of a plain or gzipped UTF-8 text file."""
    for n, raw in iter_byte_lines(path):
        yield n, decode(path, n, raw)


def iter_fields(path: PathLike) -> Iterator[tuple[int, bytes, list[str]]]:
    """``(line_no, raw line, fields)`` for every non-blank line, fields split on ASCII whitespace."""
    for n, raw in iter_byte_lines(path):
        parts = raw.split()
        if parts:
            yield n, raw, [decode(path, n, p) for p in parts]


def iter_jsonl(path: PathLike) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line_no, object)`` for every non-blank line of a JSON-lines file.

    A line that is not JSON, or not a JSON object, is a DataFormatError.
    """
    for n, line in iter_lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataFormatError(path, n, f"a JSON object ({e.msg} at column {e.colno})", line) from None
        if not isinstance(obj, dict):
            raise DataFormatError(path, n, "a JSON object", line)
        yield n, obj


def get_field(
    path: PathLike,
    line_no: int | None,
    obj: Mapping[str, Any],
    *names: str,
    kind: str = "str",
) -> Any:
    """The value of the first of ``names`` present in ``obj``, checked against ``kind``.

    ``kind`` is ``"str"`` (an id or text: a string, or an integer, which is
    turned into its decimal string), ``"text"`` (a string), ``"int"`` (an
    integer; a float with an integral value is accepted), ``"list"`` or
    ``"any"``. A missing field or a value of the wrong kind is a
    DataFormatError naming the line.
    """
    what = " or ".join(repr(n) for n in names)
    for name in names:
        if name in obj:
            value = obj[name]
            break
    else:
        raise DataFormatError(path, line_no, f"a field {what}", _show(obj))
    ok, value = _coerce(value, kind)
    if not ok:
        raise DataFormatError(path, line_no, f"field {name!r} to be {_KINDS[kind]}", _show(value))
    return value


_KINDS = {
    "str": "a string id",
    "text": "a string",
    "int": "an integer",
    "list": "a list",
    "any": "a value",
}


def _coerce(value: Any, kind: str) -> tuple[bool, Any]:
    if kind == "any":
        return True, value
    if kind == "text":
        return isinstance(value, str), value
    if kind == "str":
        if isinstance(value, str):
            return True, value
        if isinstance(value, int) and not isinstance(value, bool):
            return True, str(value)
        return False, value
    if kind == "int":
        if isinstance(value, bool):
            return False, value
        if isinstance(value, int):
            return True, value
        if isinstance(value, float) and value.is_integer():
            return True, int(value)
        return False, value
    if kind == "list":
        return isinstance(value, list), value
    raise ValueError(f"unknown kind {kind!r}")


def _show(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def read_json(path: PathLike) -> tuple[Any, str]:
    """Parse a whole JSON file; returns ``(value, text)`` (the text lets callers find line numbers)."""
    text = decode(path, None, read_bytes(path))
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        return json.loads(text), text
    except json.JSONDecodeError as e:
        line = text.splitlines()[e.lineno - 1] if 0 < e.lineno <= len(text.splitlines()) else ""
        raise DataFormatError(path, e.lineno, f"valid JSON ({e.msg} at column {e.colno})", line) from None


def line_of(text: str, *needles: str) -> int | None:
    """1-based line of the first occurrence of any JSON-encoded ``needles`` in ``text`` (for error messages)."""
    best: int | None = None
    for needle in needles:
        for enc in {json.dumps(needle, ensure_ascii=False), json.dumps(needle)}:
            i = text.find(enc)
            if i >= 0 and (best is None or i < best):
                best = i
    return None if best is None else text.count("\n", 0, best) + 1
