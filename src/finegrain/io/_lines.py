"""Opening plain or gzipped text files and streaming their lines, with errors that say where.

Every reader in :mod:`finegrain.io` goes through these helpers, so every bad
file fails the same way: a :class:`~finegrain.errors.DataFormatError` naming
the path, the 1-based line number, what was expected and what was found.

Lines are split on ``\\n`` only (a trailing ``\\r`` is dropped), so line
numbers agree with ``sed -n Np`` and editors whatever the line endings; a
UTF-8 byte-order mark at the start of a file is ignored.

Text that enters is valid or refused where it enters: bytes that are not
UTF-8, and JSON strings holding a lone surrogate (``"\\ud83d"``, half of a
cut emoji, which no UTF-8 file can hold and every writer would fail on), are
a DataFormatError naming the line. Resources are bounded: a line longer than
:data:`MAX_LINE_BYTES` and a JSON document larger than
:data:`MAX_DOCUMENT_BYTES` are refused before they are held in memory. Files
are written whole or not at all (:func:`open_text_write`, through
:mod:`finegrain.atomic`).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import re
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any, cast

from finegrain.atomic import atomic_write
from finegrain.errors import DataFormatError, DuplicateIdError, FinegrainError
from finegrain.io.ids import IdSyntax, describe_char, id_error, id_problem
from finegrain.numbers import INT64_MAX, INT64_MIN

PathLike = str | os.PathLike[str]

#: The longest line a text reader accepts, in bytes, its line end not counted. Far above any
#: real record (a run line is tens of bytes, a corpus record rarely over a megabyte), and low
#: enough that a file without line ends, or a stray binary blob, is refused in constant memory.
MAX_LINE_BYTES = 16 << 20
#: The largest JSON document read whole (ranx JSON runs and qrels, results.json, COCO and Visual
#: Genome annotation files), in bytes after decompression. The largest upstream annotation files
#: are under a gigabyte; parsed, a document takes several times its size in memory.
MAX_DOCUMENT_BYTES = 2 << 30

_BOM = b"\xef\xbb\xbf"

# What a broken gzip stream raises while it is read: BadGzipFile (an OSError),
# EOFError for a truncated stream, zlib.error for corrupt deflate data.
_BROKEN_STREAM = (OSError, EOFError, zlib.error)


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
            return cast("IO[bytes]", gzip.open(p, "rb"))  # a GzipFile: IO[bytes] in all but typeshed's name
        return open(p, "rb")
    except FileNotFoundError:
        raise FinegrainError(f"file not found: {str(p)!r}", "check the path") from None
    except IsADirectoryError:
        raise FinegrainError(f"{str(p)!r} is a folder, not a file", "give the path of a file") from None
    except PermissionError:
        raise FinegrainError(f"cannot read {str(p)!r}: permission denied") from None


@contextlib.contextmanager
def open_text_write(path: PathLike) -> Iterator[IO[str]]:
    """Write UTF-8 text with ``\\n`` line ends to ``path``, whole or not at all; gzip when it ends in ``.gz``.

    A context manager: the file appears (atomically replacing an older one,
    through :func:`finegrain.atomic.atomic_write`) only when the block ends
    without an exception, so an error half-way leaves no partial file. Text
    that UTF-8 cannot hold (a lone surrogate) is a FinegrainError naming the
    path. Gzip output carries no timestamp or file name, so the same content
    gives the same bytes. Parent folders are created.
    """
    p = Path(path)
    try:
        with atomic_write(p, "wb") as raw:
            if is_gzip(p):
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz, _text(cast("IO[bytes]", gz)) as f:
                    yield f
            else:
                with _text(raw) as f:
                    yield f
    except UnicodeEncodeError as e:
        bad = describe_char(e.object[e.start : e.start + 1]) if isinstance(e.object, str) else "a character"
        raise FinegrainError(f"cannot write {str(p)!r}: the text holds {bad}, which UTF-8 cannot hold",
                             "the text was not read from a valid UTF-8 file; fix it where it came from") from None


@contextlib.contextmanager
def _text(raw: IO[bytes]) -> Iterator[IO[str]]:
    """A UTF-8 text layer over ``raw``, flushed at the end and detached, so ``raw``'s owner closes it."""
    f = io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
    try:
        yield f
        f.flush()
    finally:
        with contextlib.suppress(ValueError, OSError):  # on an error the atomic writer drops the file anyway
            f.detach()


def read_bytes(path: PathLike) -> bytes:
    """The whole (decompressed) content of ``path``: one document, at most :data:`MAX_DOCUMENT_BYTES`."""
    limit = MAX_DOCUMENT_BYTES
    with open_binary(path) as f:
        try:
            if not is_gzip(path) and os.fstat(f.fileno()).st_size > limit:
                raise _too_large(path, limit)
            data = f.read(limit + 1)
        except _BROKEN_STREAM as e:
            raise broken_file(path, e) from None
    if len(data) > limit:
        raise _too_large(path, limit)
    return data


def _too_large(path: PathLike, limit: int) -> DataFormatError:
    return DataFormatError(
        path, None, f"a document of at most {limit:,} bytes", f"more than {limit:,} bytes",
        "a file this large is not a single record of this format; convert it to a line format "
        "(TREC, JSON lines) or split it",
    )


def iter_byte_lines(path: PathLike) -> Iterator[tuple[int, bytes]]:
    """``(line_no, raw line)`` for every line, 1-based, without the line end.

    A line longer than :data:`MAX_LINE_BYTES` is a DataFormatError, raised
    after reading at most that many bytes of it.
    """
    limit = MAX_LINE_BYTES
    size = limit + 1
    with open_binary(path) as f:
        readline = f.readline
        n = 0
        try:
            while raw := readline(size):
                n += 1
                if raw.endswith(b"\n"):
                    raw = raw[:-1]
                elif len(raw) > limit:
                    raise line_too_long(path, n, limit)
                if n == 1 and raw.startswith(_BOM):
                    raw = raw[3:]
                if raw.endswith(b"\r"):
                    raw = raw[:-1]
                yield n, raw
        except _BROKEN_STREAM as e:
            raise broken_file(path, e) from None


def line_too_long(path: PathLike, line_no: int, limit: int) -> DataFormatError:
    """The error for a line of more than ``limit`` bytes (see :data:`MAX_LINE_BYTES`)."""
    return DataFormatError(
        path, line_no, f"a line of at most {limit:,} bytes", f"a line of more than {limit:,} bytes",
        "no record of this format is that long: check that this is the right file "
        "(a binary file, or a text without line ends?)",
    )


def read_block(path: PathLike, f: IO[bytes], size: int) -> bytes:
    """Up to ``size`` bytes of an open (possibly gzipped) file, a broken stream named as such."""
    try:
        return f.read(size)
    except _BROKEN_STREAM as e:
        raise broken_file(path, e) from None


def broken_file(path: PathLike, e: BaseException) -> DataFormatError:
    """The error for a file whose bytes cannot be read back (a corrupt or truncated gzip stream)."""
    what = "a readable gzip file" if is_gzip(path) else "a readable file"
    return DataFormatError(
        path, None, what, f"a broken file ({type(e).__name__}: {e})",
        "the file is corrupt or truncated; decompress it by hand (gzip -t) or write it again",
    )


def decode(path: PathLike, line_no: int | None, raw: bytes) -> str:
    """``raw`` as UTF-8, or a DataFormatError naming the line and showing the bytes that are not UTF-8.

    ``line_no`` None: ``raw`` is a whole document, and the error names the line of the bad bytes.
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        a, z = e.start, e.end
        if line_no is None:
            line_no = raw.count(b"\n", 0, a) + 1
            a0, z0 = raw.rfind(b"\n", 0, a) + 1, raw.find(b"\n", z)
            raw, a, z = raw[a0 : z0 if z0 >= 0 else len(raw)], a - a0, z - a0
        lo, hi = max(0, a - 40), z + 40
        shown = ("..." if lo else "") + repr(raw[lo:hi])[2:-1] + ("..." if hi < len(raw) else "")
        raise DataFormatError(
            path, line_no, "UTF-8 text", shown,
            f"the byte(s) {repr(raw[a:z])[2:-1]} at byte {a + 1} of the line are not UTF-8; "
            "re-export the file as UTF-8",
        ) from None


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
        obj = parse_json(path, n, line)
        if not isinstance(obj, dict):
            raise DataFormatError(path, n, "a JSON object", line)
        yield n, obj


def iter_tokens(path: PathLike, what: str) -> Iterator[tuple[int, str]]:
    """``(line_no, token)`` for every non-blank line of a one-token-per-line file (ids, file names);
    a line with whitespace inside is a DataFormatError naming ``what`` a line should hold, and a
    token must follow the id rule of :attr:`IdSyntax.TOKEN` (no control character, not over-long)."""
    for n, line in iter_lines(path):
        value = line.strip()
        if not value:
            continue
        if len(value.split()) != 1:
            raise DataFormatError(path, n, what, line)
        problem = id_problem(value, IdSyntax.TOKEN)
        if problem is not None:
            raise id_error(path, n, value, "an id", IdSyntax.TOKEN, problem)
        yield n, value


def iter_id_records(path: PathLike, id_fields: tuple[str, ...], what: str) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """``(line_no, id, object)`` of a JSON-lines file of records with unique ids.

    The id is the first of ``id_fields`` present (:func:`get_id`); an id seen
    before is a DuplicateRecordError naming both lines.
    """
    seen: dict[str, int] = {}
    for n, obj in iter_jsonl(path):
        rid = get_field(path, n, obj, *id_fields)  # get_id's two steps, inline: this loop reads whole corpora
        if id_problem(rid, IdSyntax.JSON) is not None:
            raise id_error(path, n, rid, f"a {what}", IdSyntax.JSON)
        first = seen.setdefault(rid, n)
        if first != n:
            raise DuplicateRecordError(path, n, first, what, repr(rid))
        yield n, rid, obj


def get_id(path: PathLike, line_no: int | None, obj: Mapping[str, Any], *names: str, what: str = "id") -> str:
    """The id in the first of ``names`` present in the JSON record ``obj``: a string, or an integer
    read as its decimal string, that follows the id rule of JSON formats (:attr:`IdSyntax.JSON`:
    not blank, not over-long); else a DataFormatError naming the line."""
    rid: str = get_field(path, line_no, obj, *names)
    problem = id_problem(rid, IdSyntax.JSON)
    if problem is not None:
        raise id_error(path, line_no, rid, f"a {what}", IdSyntax.JSON, problem)
    return rid


def extra_fields(obj: Mapping[str, Any], known: tuple[str, ...]) -> Mapping[str, Any]:
    """The fields of a record other than ``known``, frozen (kept as the record's ``meta``)."""
    return MappingProxyType({k: v for k, v in obj.items() if k not in known})


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
    "int": "an integer between -2^63 and 2^63-1",
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
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, int):
            return INT64_MIN <= value <= INT64_MAX, value
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
    return parse_json(path, None, text), text


def parse_json(path: PathLike, line_no: int | None, text: str, *, infinity: bool = False) -> Any:
    """``text`` parsed as strict JSON, or a DataFormatError naming the file and line.

    The one JSON reader of finegrain: ``line_no`` is the line of a JSON-lines
    record (None for a whole file, whose error line comes from the parser).
    Refused with a clear error rather than a crash or a silent value: invalid
    JSON, ``NaN`` / ``Infinity`` (not JSON), integers longer than Python
    converts (4,300 digits) and nesting deeper than the parser can follow.
    ``infinity`` lets ``Infinity`` / ``-Infinity`` through (Python's json writes
    them for infinite floats, as in saved run scores); ``NaN`` never.
    """
    try:
        value = json.loads(text, parse_constant=_infinity_only if infinity else _no_constant)
    except json.JSONDecodeError as e:
        if line_no is None:
            lines = text.splitlines()
            found = lines[e.lineno - 1] if 0 < e.lineno <= len(lines) else ""
            raise DataFormatError(path, e.lineno, f"valid JSON ({e.msg} at column {e.colno})", found) from None
        raise DataFormatError(path, line_no, f"a JSON object ({e.msg} at column {e.colno})", text) from None
    except _NotJson as e:
        raise DataFormatError(path, line_no, "JSON numbers", str(e), "NaN and Infinity are not JSON; write null or a number") from None
    except RecursionError:
        raise DataFormatError(
            path, line_no, "JSON nested at most a few hundred levels deep", _head(text),
            "the file is not a record of this format; check that it is the right file",
        ) from None
    except ValueError as e:  # an integer literal past Python's int conversion limit
        raise DataFormatError(path, line_no, "JSON numbers of ordinary size", f"{e}", "write the number in a shorter form") from None
    # Only a \\u escape makes a surrogate (decoded UTF-8 never holds one); look further only then.
    if "\\u" in text and _SURROGATE_ESCAPE.search(text):
        _refuse_lone_surrogates(path, line_no, text, value)
    return value


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _refuse_lone_surrogates(path: PathLike, line_no: int | None, text: str, value: Any) -> None:
    """A DataFormatError when any string of ``value`` (object keys included) holds a lone surrogate.

    JSON pairs ``\\ud83d\\ude00`` into one character; a surrogate left in a
    Python string is half of a character, which no UTF-8 file can hold, so
    every writer would fail on it later.
    """
    stack = [value]  # iterative: a document nested as deep as the parser allows must not overflow here
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            m = _SURROGATE.search(v)
            if m is not None:
                if line_no is None:
                    line_no = _line_of_escape(text, m.group())
                i = m.start()
                shown = ("..." if i > 30 else "") + v[max(0, i - 30) : i + 30] + ("..." if i + 30 < len(v) else "")
                raise DataFormatError(
                    path, line_no, "valid UTF-8 text", shown,
                    f"the text holds {describe_char(m.group())}; re-export the file as valid UTF-8",
                )
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


def _line_of_escape(text: str, ch: str) -> int | None:
    m = re.search(re.escape(f"\\u{ord(ch):04x}"), text, re.IGNORECASE)
    return None if m is None else text.count("\n", 0, m.start()) + 1


class _NotJson(ValueError):
    pass


def _no_constant(name: str) -> Any:
    raise _NotJson(name)


def _infinity_only(name: str) -> Any:
    if name == "Infinity":
        return float("inf")
    if name == "-Infinity":
        return float("-inf")
    raise _NotJson(name)


def _head(text: str, width: int = 60) -> str:
    return text[:width] + ("..." if len(text) > width else "")


def line_of(text: str, *needles: str) -> int | None:
    """1-based line of the first occurrence of any JSON-encoded ``needles`` in ``text`` (for error messages)."""
    best: int | None = None
    for needle in needles:
        for enc in {json.dumps(needle, ensure_ascii=False), json.dumps(needle)}:
            i = text.find(enc)
            if i >= 0 and (best is None or i < best):
                best = i
    return None if best is None else text.count("\n", 0, best) + 1
