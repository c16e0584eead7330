"""Lines of fields as numpy columns: the vectorised fast path of the TREC qrels and run readers.

A file is read in blocks that end at a line end; each block is split into fields and lines
with numpy on its raw bytes, so no Python object is made per line. Ids are interned by their
bytes: each field is copied into a zero-padded row of 8-byte words, rows are grouped by a
hash of their words and every row is compared with its group's first row word for word, so a
hash collision can never merge two ids (many rows go to Arrow's hash table, which compares
whole rows). Grades are read digit by digit with numpy; scores too, as
an integer mantissa and a power of ten wherever that gives exactly ``float``'s double, and by
``float`` one field at a time elsewhere (:func:`finegrain.numbers.decimal_rows`).

The fast path never decides that an input is wrong. Anything it does not take as it is (a
NUL byte, bytes that are not UTF-8, a line with another number of fields, a number outside
the plain grammar, an id that breaks the id rule, a duplicate pair, a line too long, a broken
stream, an empty file) raises :class:`Decline`, and the reader reads the file again with its
line-by-line path, which accepts what the grammar allows (hex scores, 19-digit grades) and
names the line of any error. So both paths accept the same files with the same result and
refuse the same files with the same error.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from finegrain.arrow_ids import byte_rows, dictionary_codes, worth_arrow
from finegrain.errors import FinegrainError
from finegrain.io import _lines
from finegrain.io._lines import PathLike, line_too_long, open_binary, read_block
from finegrain.io.ids import IdSyntax, first_bad_id
from finegrain.native import NATIVE
from finegrain.numbers import decimal_rows
from finegrain.types import Qrels, first_appearance

#: Bytes per block of the block readers.
CHUNK = 32 << 20
#: Bytes per block of the fast path: small enough that its arrays are reused from block to block
#: rather than mapped afresh (each fresh page costs a fault).
FAST_CHUNK = 4 << 20
#: The longest id the fast path interns, in bytes; a longer one (rare: ids are tens of bytes) sends
#: the file to the line-by-line path, so one long id does not pad every row of a block to its width.
MAX_FAST_ID_BYTES = 256
#: Grades of up to this many digits are read by the fast path (any such number fits int64).
_GRADE_DIGITS = 18
#: The longest score the fast path reads, in bytes (a double needs at most 17 significant digits).
_MAX_SCORE_BYTES = 64

WHITESPACE = np.zeros(256, dtype=bool)
WHITESPACE[list(b" \t\n\r\x0b\x0c")] = True  # bytes.split()'s whitespace

_K = np.uint64(0x9E3779B97F4A7C15)  # an odd multiplier for the word hash (any odd constant is correct)


class Decline(Exception):
    """The fast path does not take this input; the caller reads it line by line."""


# --------------------------------------------------------------------------- blocks


def blocks(path: PathLike, chunk: int | None = None, *, numbered: bool = True) -> Iterator[tuple[int, bytes]]:
    """``(line number of the block's first line, bytes)`` blocks that end at a line end.

    ``numbered=False`` skips counting lines: every block's number is then 0 (for readers that never
    name a line). A leading UTF-8 byte-order mark is dropped. A line longer than
    :data:`~finegrain.io._lines.MAX_LINE_BYTES` is refused once that many of
    its bytes are held (the rest is never read); :func:`check_line_lengths`
    checks every line of a block against the same bound.
    """
    limit = _lines.MAX_LINE_BYTES
    size = CHUNK if chunk is None else chunk
    line = 1
    rest = b""
    first = True
    with open_binary(path) as f:
        while True:
            data = read_block(path, f, size)
            if not data:
                break
            if first and data.startswith(b"\xef\xbb\xbf"):
                data = data[3:]
            first = False
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                rest += data
                if len(rest) > limit:
                    raise line_too_long(path, line, limit)
                continue
            # one copy at most: the line begun in the last read, then this read up to its last line end
            block = data if not rest and cut == len(data) else b"".join((rest, memoryview(data)[:cut]))
            rest = data[cut:]
            if len(rest) > limit:
                raise line_too_long(path, line + block.count(b"\n"), limit)
            yield (line if numbered else 0), block
            if numbered:
                line += block.count(b"\n")
    if rest:
        yield (line if numbered else 0), rest


def check_line_lengths(path: PathLike, first_line: int, newlines: np.ndarray, size: int) -> None:
    """Refuse a line of the block longer than :data:`~finegrain.io._lines.MAX_LINE_BYTES` (its line end not counted)."""
    limit = _lines.MAX_LINE_BYTES
    if size <= limit:
        return
    ends = np.append(newlines, size)
    lengths = np.diff(ends, prepend=-1) - 1
    too_long = np.flatnonzero(lengths > limit)
    if len(too_long):
        raise line_too_long(path, first_line + int(too_long[0]), limit)


def fast_blocks(path: PathLike, *, numbered: bool = True) -> Iterator[tuple[int, bytes]]:
    """:func:`blocks` for a fast path: text blocks of valid UTF-8 without NUL bytes, each line within bounds;
    anything else (or a file that cannot be read) is a :class:`Decline`."""
    try:
        for first_line, block in blocks(path, FAST_CHUNK, numbered=numbered):
            if b"\0" in block or not (block.isascii() or _is_utf8(block)):
                raise Decline
            if len(block) > _lines.MAX_LINE_BYTES:
                newlines = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
                check_line_lengths(path, first_line, newlines, len(block))
            yield first_line, block
    except FinegrainError:
        raise Decline from None


def _is_utf8(block: bytes) -> bool:
    try:
        block.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# --------------------------------------------------------------------------- fields


@dataclass(frozen=True, slots=True)
class Fields:
    """The rows of one block: field ``j`` of row ``i`` is ``block[starts[i, j]:ends[i, j]]``; ``lines[i]`` its line.

    ``words[p]`` is the 8 bytes of the block from byte ``p`` as a little-endian
    integer (the block is followed by 8 zero bytes), so a field is read 8 bytes
    at a time.
    """

    words: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    lines: np.ndarray

    def __len__(self) -> int:
        return len(self.lines)

    def column(self, j: int, k: int) -> np.ndarray:
        """Field ``j`` of every row as ``k`` 8-byte words, zero-padded (its first ``8 * k`` bytes)."""
        starts = self.starts[:, j]
        lengths = self.ends[:, j] - starts
        out = np.empty((len(starts), k), dtype="<u8")
        last = len(self.words) - 1
        for c in range(k):
            at = starts + 8 * c if c == 0 else np.minimum(starts + 8 * c, last)  # past a short field: masked out
            word = self.words[at]
            word &= _LOW_BYTES[np.clip(lengths - 8 * c, 0, 8)]
            out[:, c] = word
        return out

    def width(self, j: int) -> int:
        """The longest field ``j``, in bytes."""
        return int((self.ends[:, j] - self.starts[:, j]).max(initial=0))


_LOW_BYTES = np.array([(1 << (8 * r)) - 1 for r in range(9)], dtype="<u8")


def split_fields(block: bytes, first_line: int, width: int, *, more: bool = False) -> Fields:
    """The lines of ``block`` split on ASCII whitespace as ``bytes.split()`` does; blank lines are dropped.

    Every other line must hold exactly ``width`` fields (``more``: at least
    ``width``, the first ``width`` kept), else :class:`Decline`.
    """
    buf = np.frombuffer(block, dtype=np.uint8)
    ws = np.empty(len(buf) + 2, dtype=bool)
    ws[0] = ws[-1] = True
    inner = ws[1:-1]
    np.greater_equal(buf, 9, out=inner)
    inner &= buf <= 13
    inner |= buf == 32
    change = np.flatnonzero(ws[1:] != ws[:-1])  # field starts and ends, alternating
    starts, ends = change[0::2], change[1::2]
    newlines = np.flatnonzero(buf == 10)
    n_lines = len(newlines) + (0 if block.endswith(b"\n") else 1)
    padded = block + bytes(8)
    words = np.ndarray((len(block) + 1,), dtype="<u8", buffer=padded, strides=(1,))
    if len(starts) == width * n_lines:
        # the common file: no blank line, every line `width` fields. Then every row of `width`
        # consecutive fields starts after the line end before it and ends before the one after it.
        s = starts.reshape(-1, width)
        if (s[1:, 0] > newlines[: n_lines - 1]).all() and (s[:, -1] < np.append(newlines, len(buf))[:n_lines]).all():
            lines = np.arange(first_line, first_line + n_lines, dtype=np.int64)
            return Fields(words, s, ends.reshape(-1, width), lines)
    upto = np.searchsorted(starts, newlines)  # fields before each line end
    if n_lines > len(newlines):
        upto = np.append(upto, len(starts))
    counts = np.diff(upto, prepend=0)
    rows = np.flatnonzero(counts)
    kept = counts[rows]
    if (kept < width).any() if more else (kept != width).any():
        raise Decline
    at = (upto - counts)[rows][:, None] + np.arange(width)
    return Fields(words, starts[at], ends[at], rows + first_line)


def split_tabs(block: bytes, first_line: int, width: int) -> Fields:
    """The lines of ``block`` split on tabs (a BEIR qrels line: fields may hold spaces); empty lines are
    dropped. Every other line must hold exactly ``width`` fields, else :class:`Decline`."""
    buf = np.frombuffer(block, dtype=np.uint8)
    tabs = np.flatnonzero(buf == 9)
    newlines = np.flatnonzero(buf == 10)
    line_ends = newlines if block.endswith(b"\n") else np.append(newlines, len(buf))
    line_starts = np.concatenate(([0], newlines[: len(line_ends) - 1] + 1))
    upto = np.searchsorted(tabs, line_ends)  # tabs before each line end
    counts = np.diff(upto, prepend=0)
    rows = np.flatnonzero(line_ends > line_starts)
    if (counts[rows] != width - 1).any():  # an empty line holds no tab
        raise Decline
    inner = tabs[(upto[rows] - (width - 1))[:, None] + np.arange(width - 1)]
    starts = np.concatenate((line_starts[rows, None], inner + 1), axis=1)
    ends = np.concatenate((inner, line_ends[rows, None]), axis=1)
    words = np.ndarray((len(block) + 1,), dtype="<u8", buffer=block + bytes(8), strides=(1,))
    return Fields(words, starts, ends, rows + first_line)


# --------------------------------------------------------------------------- compiled lines


class NativeLines:
    """The compiled reading of a file's lines (``finegrain._native``), where it is built: the whitespace split
    of :func:`split_fields` (``tabs``: the tab split of :func:`split_tabs`), the query and document ids
    (fields 0 and ``doc``) interned by their bytes as :class:`Interner` interns them, and field ``value``
    read as :func:`grades` or :func:`scores` read it, in one C pass a block, with no numpy array per field.
    A line it does not take as it is (another number of fields, a number outside the plain grammar) is a
    :class:`Decline`, as in the numpy path."""

    def __init__(self, width: int, value: int, *, integral: bool, more: bool = False, doc: int = 2,
                 tabs: bool = False) -> None:
        self._state = NATIVE.columns_new(width, more, value, integral, doc, tabs)
        self._add = NATIVE.columns_add
        self._dtype = np.int64 if integral else np.float64
        self.counts = np.empty(0, dtype=np.int64)
        """Results per line, for :meth:`run_jsonl` (after :meth:`finish`)."""

    @classmethod
    def run_jsonl(cls) -> NativeLines:
        """The reading of ``run.jsonl`` query lines as :func:`finegrain.io.run_jsonl.write_run_jsonl` writes them
        (the header line apart): one query code per line and its number of results (:attr:`counts`), a
        document code and score per result."""
        lines = cls(3, 1, integral=False)
        lines._add = NATIVE.jsonl_add
        return lines

    @staticmethod
    def available() -> bool:
        return NATIVE is not None

    def add(self, block: bytes) -> None:
        if not self._add(self._state, block):
            raise Decline

    def finish(self) -> tuple[list[str], np.ndarray, list[str], np.ndarray, np.ndarray]:
        """``(qids, query codes, document ids, document codes, values)``, ids in order of first appearance."""
        qids, qc, docs, dc, values, counts = NATIVE.columns_finish(self._state)
        self.counts = np.frombuffer(counts, dtype=np.int64)
        return (qids, np.frombuffer(qc, dtype=np.int64), docs, np.frombuffer(dc, dtype=np.int64),
                np.frombuffer(values, dtype=self._dtype))


def first_row(block: bytes) -> list[bytes]:
    """The fields of the block's first non-blank line (whitespace as :func:`split_fields` splits it)."""
    at = 0
    while at < len(block):
        end = block.find(b"\n", at)
        end = len(block) if end < 0 else end
        fields = block[at:end].split()
        if fields:
            return fields
        at = end + 1
    return []


# --------------------------------------------------------------------------- ids


class Interner:
    """The ids of one column across the blocks of a file: :meth:`add` a block, :meth:`codes` at the end.

    Each block's field is read as rows of 8-byte words and runs of equal rows
    are kept once (a run file lists a query's lines together); at the end all
    rows are grouped at once (:func:`distinct_rows`), so Python objects are
    made for the file's distinct ids only, never per line. Codes follow the
    order of first appearance in the file.
    """

    def __init__(self) -> None:
        self._rows: list[np.ndarray] = []  # each block's runs of equal ids, one row each
        self._runs: list[np.ndarray | None] = []  # each row of the block: the index of its run (None: itself)

    def add(self, f: Fields, j: int) -> None:
        """Take field ``j`` of every row of ``f``; a field over :data:`MAX_FAST_ID_BYTES` bytes is a :class:`Decline`."""
        w = f.width(j)
        if w > MAX_FAST_ID_BYTES:
            raise Decline
        words = f.column(j, max(1, -(-w // 8)))
        n = len(words)
        head = np.ones(n, dtype=bool)
        if n > 1:
            np.not_equal(words[1:, 0], words[:-1, 0], out=head[1:])
            for c in range(1, words.shape[1]):
                head[1:] |= words[1:, c] != words[:-1, c]
        heads = np.flatnonzero(head)
        if len(heads) == n:  # no run (a document column): every row is its own
            self._rows.append(words)
            self._runs.append(None)
        else:
            self._rows.append(words[heads])
            self._runs.append(np.repeat(np.arange(len(heads)), np.diff(np.append(heads, n))))

    def codes(self) -> tuple[list[str], np.ndarray]:
        """``(ids, codes)``: the distinct ids as text in order of first appearance, and the code of every row added."""
        if not self._rows:
            return [], np.empty(0, dtype=np.int64)
        k = max(r.shape[1] for r in self._rows)
        if all(r.shape[1] == k for r in self._rows):
            rows = np.concatenate(self._rows)
        else:
            rows = np.zeros((sum(len(r) for r in self._rows), k), dtype="<u8")
            at = 0
            for r in self._rows:
                rows[at : at + len(r), : r.shape[1]] = r
                at += len(r)
        first, inverse = distinct_rows(rows)
        if all(run is None for run in self._runs):
            codes = inverse
        else:
            parts, at = [], 0
            for r, run in zip(self._rows, self._runs):
                parts.append(inverse[at : at + len(r)] if run is None else inverse[at : at + len(r)][run])
                at += len(r)
            codes = np.concatenate(parts)
        return decode_rows(rows[first]), codes


def distinct_rows(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`finegrain.types.first_appearance` of the rows of ``words`` (n x k 8-byte words): rows are grouped by a hash of
    their words and each row is compared with its group's first, so a hash collision (two different
    rows, one hash) is a :class:`Decline`, never a merge."""
    if len(words) == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    arr = byte_rows(words) if worth_arrow(len(words)) else None
    if arr is not None:  # Arrow's hash table compares whole rows: no collision to check
        inverse = dictionary_codes(arr)[1]
        return first_positions(inverse), inverse
    if words.shape[1] == 1:
        return first_appearance(words[:, 0])
    key = words[:, 0].copy()
    for c in range(1, words.shape[1]):
        key *= _K
        key += words[:, c]
    first, inverse = first_appearance(key)
    for c in range(words.shape[1]):
        column = np.ascontiguousarray(words[:, c])
        if not np.array_equal(column, column[first][inverse]):
            raise Decline
    return first, inverse


def first_positions(inverse: np.ndarray) -> np.ndarray:
    """Where each code first appears, for codes numbered in order of first appearance (each new code is
    one above the largest before it)."""
    seen = np.maximum.accumulate(inverse)
    new = np.empty(len(inverse), dtype=bool)
    new[:1] = True
    np.greater(seen[1:], seen[:-1], out=new[1:])
    return np.flatnonzero(new)


def decode_rows(words: np.ndarray) -> list[str]:
    """Rows of zero-padded 8-byte words as text (the blocks were checked to be UTF-8; ids hold no NUL
    or line end, so the padding is cut and one join decodes them all)."""
    if len(words) == 0:
        return []
    raw = np.ascontiguousarray(words).view(f"S{8 * words.shape[1]}").ravel().tolist()
    return b"\n".join(raw).decode("utf-8").split("\n")


def check_ids(values: list[str], syntax: IdSyntax) -> None:
    """:class:`Decline` when one of ``values`` breaks the id rule of ``syntax``."""
    if first_bad_id(values, syntax) is not None:
        raise Decline


# --------------------------------------------------------------------------- numbers


def grades(f: Fields, j: int) -> np.ndarray:
    """Field ``j`` of every row as an integer grade ``[+-]?[0-9]+`` of at most 18 digits, else :class:`Decline`
    (longer grades are read by the line-by-line path, which checks the int64 range)."""
    n = len(f)
    if n == 0:
        return np.empty(0, dtype=np.int64)
    lengths = f.ends[:, j] - f.starts[:, j]
    w = int(lengths.max())
    if w > _GRADE_DIGITS + 1 or not lengths.all():  # an empty field (a tab-separated line) is no grade
        raise Decline
    m = f.column(j, -(-w // 8)).view(np.uint8)[:, :w]  # little-endian words: the field's bytes in order
    inside = np.arange(w) < lengths[:, None]
    digit = (m >= 48) & (m <= 57)
    sign = (m[:, 0] == 43) | (m[:, 0] == 45)
    ok = digit | ~inside
    ok[:, 0] |= sign
    if not ok.all() or (sign & (lengths < 2)).any() or (lengths - sign > _GRADE_DIGITS).any():
        raise Decline
    value = np.zeros(n, dtype=np.int64)
    d = m.astype(np.int64) - 48
    use = inside & digit
    for c in range(w):
        value = np.where(use[:, c], value * 10 + d[:, c], value)
    return np.where(m[:, 0] == 45, -value, value)


def scores(f: Fields, j: int) -> np.ndarray:
    """Field ``j`` of every row as a finite score written as a plain C decimal literal, else :class:`Decline`
    (hex literals and every refusal are the line-by-line path's)."""
    if len(f) == 0:
        return np.empty(0, dtype=np.float64)
    lengths = f.ends[:, j] - f.starts[:, j]
    w = int(lengths.max())
    if w > _MAX_SCORE_BYTES:
        raise Decline
    values = decimal_rows(f.column(j, -(-w // 8)).view(np.uint8)[:, :w], lengths)
    if values is None:
        raise Decline
    return values


def text(f: Fields, i: int, j: int) -> str:
    """Field ``j`` of row ``i`` as text."""
    k = -(-(int(f.ends[i, j]) - int(f.starts[i, j])) // 8)
    row = Fields(f.words, f.starts[i : i + 1], f.ends[i : i + 1], f.lines[i : i + 1])
    return decode_rows(row.column(j, max(k, 1)))[0]


# --------------------------------------------------------------------------- tables


def repeated_pair(qc: np.ndarray, dc: np.ndarray, n_docs: int) -> bool:
    """Whether a (query code, document code) pair occurs twice: one compiled pass where each query's
    entries come together (:mod:`finegrain.native`), else one sort."""
    if NATIVE is not None:
        got = NATIVE.has_repeats(np.ascontiguousarray(qc, dtype=np.int64), np.ascontiguousarray(dc, dtype=np.int64),
                                 n_docs)
        if got is not None:
            return bool(got)
    key = qc * max(n_docs, 1) + dc
    key.sort()
    return bool((key[1:] == key[:-1]).any())


def judgements(queries: Interner, docs: Interner, g: list[np.ndarray], syntax: IdSyntax) -> Qrels:
    """The qrels of interned columns (blocks in file order), as :meth:`Qrels.from_records` builds them
    from the same lines: queries and documents in order of first appearance, each query's judgements
    in file order. No judgement, an id that breaks the rule of ``syntax`` or a duplicate pair is a
    :class:`Decline`."""
    qids, qc = queries.codes()
    vocab, dc = docs.codes()
    return judgement_table(qids, qc, vocab, dc, np.concatenate(g) if g else np.empty(0, np.int64), syntax)


def judgement_table(qids: list[str], qc: np.ndarray, vocab: list[str], dc: np.ndarray, grade: np.ndarray,
                    syntax: IdSyntax) -> Qrels:
    """:func:`judgements` of columns already interned (by :class:`NativeLines`)."""
    if not len(qc):
        raise Decline
    check_ids(qids, syntax)
    check_ids(vocab, syntax)
    if repeated_pair(qc, dc, len(vocab)):
        raise Decline
    order = np.argsort(qc, kind="stable")
    offsets = np.zeros(len(qids) + 1, dtype=np.int64)
    np.cumsum(np.bincount(qc, minlength=len(qids)), out=offsets[1:])
    return Qrels(qids, offsets, dc[order], vocab, grade[order], check=False)


COMMENT_LINE = re.compile(rb"^[ \t\r\x0b\x0c]*#[^\n]*", re.MULTILINE)  # a line whose first non-blank character is #
