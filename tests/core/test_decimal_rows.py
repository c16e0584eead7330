"""Scores read column-wise with numpy (finegrain.numbers.decimal_rows) against Python's ``float``.

Properties protected:
- every field of the decimal grammar gives exactly the double ``float`` gives (the same bits, the sign
  of zero included), whether numpy reads it (a mantissa below 2**53, at most 22 fraction digits) or
  ``float`` does (17 significant digits, an exponent, a long fraction): hypothesis over the grammar;
- a field outside the grammar, or one that overflows, gives None (the caller's line reader names it);
- the common short decimals are read by numpy, not by ``float`` one at a time.
"""

from __future__ import annotations

import builtins

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finegrain import numbers
from finegrain.numbers import decimal_rows


def _rows(fields: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """Fields as zero-padded rows of bytes, as the TREC fast path hands them over."""
    w = max(1, *map(len, fields))
    chars = np.frombuffer(b"".join(f.ljust(w, b"\0") for f in fields), dtype=np.uint8).reshape(len(fields), w)
    return chars, np.fromiter(map(len, fields), dtype=np.int64, count=len(fields))


def _same_doubles(got: np.ndarray, fields: list[bytes]) -> None:
    want = np.array([float(f) for f in fields])
    assert got.view(np.uint64).tolist() == want.view(np.uint64).tolist(), [
        (f, g, x) for f, g, x in zip(fields, got.tolist(), want.tolist()) if np.float64(g).tobytes() != np.float64(x).tobytes()
    ]


_digits = st.text("0123456789", max_size=22)
_leading_zeros = st.tuples(st.integers(0, 30), st.integers(1, 2**53)).map(lambda t: "0" * t[0] + str(t[1]))


@st.composite
def decimals(draw: st.DrawFn) -> bytes:
    """A C decimal literal: sign, integer digits, fraction, exponent; leading zeros and 16 to 20 digits often."""
    sign = draw(st.sampled_from(["", "", "-", "+"]))
    whole = draw(st.one_of(_digits, st.integers(0, 2**64).map(str), st.just("9007199254740993")))
    frac = draw(st.one_of(st.none(), _digits, st.integers(0, 10**17).map(lambda x: f"{x:017d}"),
                          _leading_zeros))  # around the 22 fraction digits numpy divides by exactly
    if not whole and not frac:
        whole = "0"
    exp = draw(st.one_of(st.none(), st.none(), st.integers(-30, 30), st.integers(-400, 400)))
    text = sign + whole + ("" if frac is None else "." + frac)
    if exp is not None:
        text += draw(st.sampled_from("eE")) + (f"{exp:+d}" if draw(st.booleans()) else str(exp))
    return text.encode()


@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(decimals(), st.floats(allow_nan=False, allow_infinity=False).map(lambda x: repr(x).encode())),
                min_size=1, max_size=40))
def test_every_decimal_reads_as_float_reads_it(fields: list[bytes]) -> None:
    got = decimal_rows(*_rows(fields))
    if all(np.isfinite(float(f)) for f in fields):
        assert got is not None
        _same_doubles(got, fields)
    else:
        assert got is None  # an overflow: the line reader names it


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 2**53 + 8), st.integers(0, 30), st.sampled_from(["", "-"])),
                min_size=1, max_size=40))
def test_mantissas_near_two_to_the_53_and_fractions_near_22_digits(parts: list[tuple[int, int, str]]) -> None:
    """Where numpy's exact division ends (a mantissa of 2**53, a 22-digit fraction) and ``float`` takes over."""
    fields = []
    for m, k, sign in parts:
        digits = str(m).rjust(k + 1, "0")
        fields.append(f"{sign}{digits[:len(digits) - k]}.{digits[len(digits) - k:]}".encode())
    got = decimal_rows(*_rows(fields))
    assert got is not None
    _same_doubles(got, fields)


@pytest.mark.parametrize("field", [b"-0", b"-0.0", b"+0.000", b"9007199254740993", b"9007199254740992.5",
                                   b"0.1", b"1.0000000000000000000001", b"123456789.0123456789012", b".5", b"5.",
                                   b"4.9e-324", b"1.7976931348623157e308", b"1e-400", b"0.35000000000000003"])
def test_edge_decimals_read_as_float_reads_them(field: bytes) -> None:
    got = decimal_rows(*_rows([b"1.5", field]))
    assert got is not None
    _same_doubles(got, [b"1.5", field])


@pytest.mark.parametrize("field", [b".", b"+", b"-", b"1e", b"e5", b"1.2.3", b"--1", b"1e+", b"1-", b"1e1e1", b"1_0",
                                   b"nan", b"inf", b"0x1p3", b"1e999", b"-1e309", "٣".encode()])
def test_a_field_outside_the_grammar_or_overflowing_is_none(field: bytes) -> None:
    assert decimal_rows(*_rows([b"1.5", field])) is None


def test_short_decimals_never_reach_float(monkeypatch: pytest.MonkeyPatch) -> None:
    fields = [b"0.35", b"-12.5", b"3", b"+0.125", b"1234567.891", b"0.000001"]
    monkeypatch.setattr(numbers, "float", lambda x: pytest.fail(f"float({x!r})"), raising=False)
    got = decimal_rows(*_rows(fields))
    monkeypatch.setattr(numbers, "float", builtins.float, raising=False)
    assert got is not None
    _same_doubles(got, fields)
