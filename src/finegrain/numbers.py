"""The one number grammar of finegrain: what trec_eval's C parsers accept, nothing more.

trec_eval reads a grade with ``atol`` and a score with ``atof``. Python's
``int`` and ``float`` are more generous than C: they read ``1_0`` as 10,
fullwidth ``２`` and Arabic-Indic ``٣`` as digits, and Python integers have no
upper bound, so a grade of 2^63 would wrap when stored as int64. Every number
finegrain reads from text goes through these functions instead: the file
readers (TREC, BEIR qrels, ...), ``--set KEY=VALUE`` options
(:meth:`finegrain.registry.Param.convert`), the command line's numeric options
and metric cutoffs (``ndcg@10``):

- an **integer** is ``[+-]?[0-9]+`` in ASCII digits, between -2^63 and 2^63-1
  (:func:`parse_int`; a grade is such an integer, :func:`parse_grade`);
- a **float** is a C decimal (``[+-]?(digits[.digits]|.digits)([eE][+-]?digits)?``)
  or C hexadecimal (``0x1.8p3``) floating-point literal, and finite
  (:func:`parse_float`).

Anything else is refused with the reason, so the caller can name the file
and line, or the option. Numbers are never "mostly" read: ``atol("2.5")`` is 2 in
trec_eval, but here ``2.5`` is not a grade.
"""

from __future__ import annotations

import re

import numpy as np

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1

_INT = re.compile(r"[+-]?[0-9]+\Z", re.ASCII)
# Unambiguous alternatives inside atomic groups: a failed match never backtracks
# through earlier fields (one linear pass over a column of ten million scores).
_DEC = rb"(?>[+-]?(?:[0-9]++(?:\.[0-9]*+)?|\.[0-9]++)(?:[eE][+-]?[0-9]++)?)"
_HEX = rb"(?>[+-]?0[xX](?:[0-9a-fA-F]++(?:\.[0-9a-fA-F]*+)?|\.[0-9a-fA-F]++)(?:[pP][+-]?[0-9]++)?)"
_DECIMAL = re.compile(_DEC + rb"\Z")
_HEXADECIMAL = re.compile(_HEX + rb"\Z")
_NOT_FINITE = re.compile(rb"[+-]?(?:inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?)\Z", re.IGNORECASE)

GRADE_EXPECTED = "an integer grade (ASCII digits, between -2^63 and 2^63-1)"
INT_EXPECTED = "a whole number (ASCII digits, between -2^63 and 2^63-1)"
SCORE_EXPECTED = "a finite number (a C decimal or hex floating-point literal)"


class NumberError(ValueError):
    """A field is not a number of the grammar; ``reason`` says what is wrong, ``hint`` how to fix it."""

    def __init__(self, reason: str, hint: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.hint = hint


def parse_int(text: str) -> int:
    """``text`` as an integer of the grammar (ASCII digits, int64), or NumberError."""
    return _int64(text, "number", INT_EXPECTED, "write a whole number", "use a smaller number")


def parse_grade(text: str) -> int:
    """``text`` as a grade, or NumberError."""
    return _int64(text, "grade", GRADE_EXPECTED, "grades are integers; round them or write 0/1/2/...",
                  "use small integer grades (0, 1, 2, ...)")


def _int64(text: str, what: str, expected: str, not_whole: str, too_big: str) -> int:
    if not _INT.match(text):
        hint = None
        if _is_decimal(text):
            hint = not_whole
        elif any(c.isdigit() and not c.isascii() for c in text):
            hint = f"write the {what} in ASCII digits 0-9"
        raise NumberError(f"{_clip(text)!r} is not {expected}", hint)
    range_name = "grade range" if what == "grade" else "range"
    if len(text.lstrip("+-0")) > 19:  # longer than any int64 (and than Python converts past 4,300 digits)
        raise NumberError(f"{_clip(text)} is outside the {range_name} -2^63..2^63-1", too_big)
    value = int(text)
    if not INT64_MIN <= value <= INT64_MAX:
        raise NumberError(f"{text} is outside the {range_name} -2^63..2^63-1", too_big)
    return value


def parse_float(raw: bytes | str) -> float:
    """``raw`` as a finite float of the grammar (a score, an option's value), or NumberError."""
    b = raw.encode("utf-8", "surrogateescape") if isinstance(raw, str) else raw
    if _DECIMAL.match(b):
        value = float(b)
    elif _HEXADECIMAL.match(b):
        try:
            value = float.fromhex(b.decode("ascii"))
        except OverflowError:
            value = float("inf")
    elif _NOT_FINITE.match(b):
        raise NumberError(
            f"{_show(b)} is not a finite number", "NaN and infinity cannot be ranked or compared; write a finite number"
        )
    else:
        raise NumberError(f"{_show(b)} is not {SCORE_EXPECTED}")
    if value != value or value in (float("inf"), float("-inf")):
        raise NumberError(f"{_show(b)} overflows a double", "write a number within the double range (about 1.8e308)")
    return value


def decimal_column(column: list[bytes]) -> np.ndarray | None:
    """The scores of a column of plain C decimal literals, or None when any field needs a closer look.

    Fast path of the run reader: one numpy pass checks that only the bytes
    ``0-9 + - . e E`` occur (so no ``_``, no non-ASCII digit, no ``nan``);
    within that alphabet Python's ``float`` accepts exactly C's decimal
    literals. Fields it refuses, or values that overflow, give None and
    the caller goes field by field with :func:`parse_float`.
    """
    if not column:
        return np.empty(0, dtype=np.float64)
    joined = np.frombuffer(b"".join(column), dtype=np.uint8)
    if not _DECIMAL_BYTES[joined].all():
        return None
    try:
        values = np.fromiter(map(float, column), np.float64, len(column))
    except ValueError:
        return None
    return values if np.isfinite(values).all() else None


_DECIMAL_BYTES = np.zeros(256, dtype=bool)
_DECIMAL_BYTES[list(b"0123456789+-.eE")] = True


#: Powers of ten that are exact doubles (up to 10**22: 5**22 < 2**53); a fast field has at most 19 digits.
_EXACT_POW10 = np.array([10.0**k for k in range(20)])
_MAX_EXACT_INT = np.uint64(1 << 53)  # every integer up to it is a double
#: Fields longer than this (a sign, a dot and 16 digits) cannot hold a mantissa below 2**53 in digits
#: alone; they are converted by ``float``.
_FAST_DECIMAL_BYTES = 18


def decimal_rows(chars: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
    """The scores of fields given as rows of bytes (``chars``: n x w uint8, row ``i`` holding its field in
    its first ``lengths[i]`` bytes, zeros after), exactly the doubles :func:`float` reads; None when a field
    is not a plain C decimal literal or overflows (the caller then goes field by field with
    :func:`parse_float`, which names the reason).

    One numpy pass checks the alphabet ``0-9 + - . e E`` (within it ``float`` accepts exactly C's decimal
    literals). A field ``[+-]?digits[.digits]`` is then read with numpy, column by column, as an integer
    mantissa ``M`` and a count ``f`` of fraction digits: when ``M <= 2**53`` and the field has at most 19
    digits (so ``f <= 19``), ``M`` and ``10**f`` are exact doubles, so one division, rounded once by IEEE
    arithmetic, is the correctly rounded value of the decimal, which is what ``float`` returns (Clinger's fast path). Every other field
    (an exponent, 17 significant digits, a long fraction) is converted by ``float`` one at a time.
    """
    n = len(chars)
    if n == 0:
        return np.empty(0, dtype=np.float64)
    w = chars.shape[1]
    if not _DECIMAL_BYTES[chars[np.arange(w) < lengths[:, None]]].all():
        return None
    mant = np.zeros(n, dtype=np.uint64)
    digits = np.zeros(n, dtype=np.int64)  # digits, then digits + the dot + a leading sign
    dot_at = np.full(n, -1, dtype=np.int64)
    dots = np.zeros(n, dtype=np.int64)
    for c in range(min(w, _FAST_DECIMAL_BYTES)):
        col = chars[:, c]
        d = col - np.uint8(48)  # wraps for every other byte, so d < 10 only for a digit
        is_digit = d < 10
        step = mant * np.uint64(10)
        step += d
        np.copyto(mant, step, where=is_digit)
        digits += is_digit
        is_dot = col == 46
        np.copyto(dot_at, c, where=is_dot)
        dots += is_dot
    sign = (chars[:, 0] == 43) | (chars[:, 0] == 45)
    frac = np.where(dots == 1, lengths - 1 - dot_at, 0)
    fast = (
        (lengths <= _FAST_DECIMAL_BYTES)
        & (digits >= 1)
        & (dots <= 1)
        & (digits + dots + sign == lengths)  # nothing but digits, one dot and a leading sign
        & (digits <= 19)  # no uint64 wrap, and 10**frac is exact
        & (mant <= _MAX_EXACT_INT)
    )
    values = mant.astype(np.float64)
    values /= _EXACT_POW10[np.minimum(frac, 19)]
    np.negative(values, out=values, where=chars[:, 0] == 45)
    slow = np.flatnonzero(~fast)
    if len(slow):
        rows = np.ascontiguousarray(chars[slow]).view(f"S{w}").ravel().tolist()  # the zero padding is cut
        try:
            values[slow] = np.fromiter(map(float, rows), np.float64, len(rows))
        except ValueError:
            return None
    return values if np.isfinite(values).all() else None


def _is_decimal(text: str) -> bool:
    return _DECIMAL.match(text.encode("utf-8", "surrogateescape")) is not None


def _clip(text: str, width: int = 40) -> str:
    return text if len(text) <= width else f"{text[:width]}... ({len(text)} characters)"


def _show(b: bytes) -> str:
    return repr(b.decode("utf-8", "replace"))
