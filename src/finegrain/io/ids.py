"""The one id rule: what a query id, document id or run tag may be, in each file format.

An id is a string of 1 to :data:`MAX_ID_CHARS` characters, not all of them
whitespace, and never holds a lone surrogate (half of a cut character, which no UTF-8 file
can hold). What else it may hold depends on how the format separates fields:

``IdSyntax.TOKEN``
    a field of a whitespace-separated line: TREC qrels and runs (and the run
    tag), one-id-per-line lists. No whitespace (any Unicode space: readers
    built on Python's ``str.split`` cut there too) and no control character
    (C0, DEL, C1), so a written line always reads back as the same fields.
    A query id, the first field of its line, does not start with ``#``:
    trec_eval-compatible readers take such a line for a comment; nor with
    U+FEFF: on the first line of a file, every reader drops it as a
    byte-order mark.
``IdSyntax.TSV_FIELD``
    a field of a tab-separated line: BEIR/MTEB qrels ``.tsv``. Spaces are
    fine; no control character (tab and line ends included) and no Unicode
    line or paragraph separator.
``IdSyntax.JSON``
    a JSON string: ``run.jsonl``, pool files, JSON-lines records. JSON
    escapes every other character, so spaces, tabs and file names survive.

Every writer of ids checks them here before it writes anything (so a bad id
never leaves a half-written file) and every reader refuses an id that breaks
the rule of its format, naming the file and line. :func:`trec_safe` says
whether a set of ids can go to a TREC file at all (the savers fall back to
``run.jsonl`` when not).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from enum import Enum

from finegrain.errors import DataFormatError, FinegrainError

#: The longest id, in characters: far above any real id (document ids of the
#: largest collections are tens of characters; file names stay under 255
#: bytes), low enough that a stray text column read as ids is caught.
MAX_ID_CHARS = 1_000


class IdSyntax(Enum):
    """How a format separates an id from the next field (see the module docstring)."""

    TOKEN = "token"
    TSV_FIELD = "tsv"
    JSON = "json"

    def expected(self, what: str = "an id") -> str:
        """What ``what`` (``"a query id"``, ...) of this syntax is, for error messages."""
        head = f"{what} of 1 to {MAX_ID_CHARS:,} characters"
        if self is IdSyntax.TOKEN:
            return f"{head} without whitespace or control characters"
        if self is IdSyntax.TSV_FIELD:
            return f"{head} without tabs, line breaks or other control characters"
        return f"{head} of valid text"


_SURROGATE = "\ud800-\udfff"
_CONTROL = "\x00-\x1f\x7f-\x9f"
# The characters each syntax refuses inside an id. re's \s is str.isspace(): every Unicode space.
_TOKEN_FORBIDDEN = re.compile(f"[{_CONTROL}{_SURROGATE}\\s]")
_TSV_FORBIDDEN = re.compile(f"[{_CONTROL}{_SURROGATE}\u2028\u2029]")
_JSON_FORBIDDEN = re.compile(f"[{_SURROGATE}]")


def _forbidden(syntax: IdSyntax) -> re.Pattern[str]:
    # identity tests, not a dict: hashing an Enum member is a Python-level call, and this is on the hot path
    if syntax is IdSyntax.TOKEN:
        return _TOKEN_FORBIDDEN
    return _TSV_FORBIDDEN if syntax is IdSyntax.TSV_FIELD else _JSON_FORBIDDEN


# What a TOKEN id opening a line may not start with: '#' (a comment to trec_eval-compatible readers) and
# U+FEFF (on the first line of a file, the byte-order mark readers drop).
_LINE_OPENERS = ("#", "\ufeff")

_NAMES = {"\t": "a tab", "\n": "a line break", "\r": "a carriage return", " ": "a space", "\x00": "a NUL byte"}


def describe_char(ch: str) -> str:
    """A character an id may not hold, in words: ``a tab``, ``a lone surrogate \\ud83d``, ``U+3000``."""
    if ch in _NAMES:
        return _NAMES[ch]
    code = ord(ch)
    if 0xD800 <= code <= 0xDFFF:
        return f"a cut character (lone surrogate \\u{code:04x})"
    kind = "a control character" if code < 0xA0 else "a space or separator"
    return f"{kind} U+{code:04X}"


def id_problem(value: object, syntax: IdSyntax, *, first_field: bool = False) -> str | None:
    """Why ``value`` cannot be an id of ``syntax`` (``"is empty"``, ``"holds a tab"``, ...), or None.

    ``first_field``: the id opens its line (a TREC query id), so it may not start with ``#``.
    """
    if not isinstance(value, str):
        return f"is a {type(value).__name__}, not a string"
    if not value.strip():
        return "is empty" if not value else "is blank (only whitespace)"
    if len(value) > MAX_ID_CHARS:
        return f"is {len(value):,} characters long (at most {MAX_ID_CHARS:,})"
    if syntax is IdSyntax.JSON and value.isascii():  # JSON refuses only surrogates; isascii() is O(1)
        return None
    m = _forbidden(syntax).search(value)
    if m is not None:
        return f"holds {describe_char(m.group())}"
    if first_field and syntax is IdSyntax.TOKEN and value.startswith(_LINE_OPENERS):
        if value.startswith("#"):
            return "starts with '#' (a comment line to trec_eval-compatible readers)"
        return "starts with U+FEFF (a byte-order mark to readers when it opens the file)"
    return None


def first_bad_id(values: Iterable[object], syntax: IdSyntax, *, first_field: bool = False) -> tuple[object, str] | None:
    """The first of ``values`` that is not an id of ``syntax``, with the reason; None when all are.

    Fast when all are good (one regex over the joined ids, lengths in C), so
    readers and writers check every id of a run of millions of entries.
    """
    vals: Sequence[object] = values if isinstance(values, list | tuple) else list(values)
    if _all_good(vals, syntax, first_field):
        return None
    for v in vals:
        problem = id_problem(v, syntax, first_field=first_field)
        if problem is not None:
            return v, problem
    return None


def _all_good(vals: Sequence[object], syntax: IdSyntax, first_field: bool) -> bool:
    if not vals:
        return True
    try:
        joined = "".join(vals)  # type: ignore[arg-type]  # a non-string is a TypeError: the slow path names it
    except TypeError:
        return False
    if "" in vals or max(map(len, vals)) > MAX_ID_CHARS:  # type: ignore[arg-type]
        return False
    # JSON refuses only surrogates, which an ASCII string cannot hold (isascii() is O(1) on a str)
    if not (syntax is IdSyntax.JSON and joined.isascii()) and _forbidden(syntax).search(joined):
        return False
    if syntax is not IdSyntax.TOKEN and not all(map(str.strip, vals)):  # type: ignore[arg-type]  # a blank id
        return False
    return not (first_field and syntax is IdSyntax.TOKEN and any(str(v).startswith(_LINE_OPENERS) for v in vals))


def show_id(value: object, width: int = 60) -> str:
    """``repr(value)``, cut to ``width`` characters with its length when longer (an over-long id)."""
    text = repr(value)
    if len(text) <= width:
        return text
    size = f" ({len(value):,} characters)" if isinstance(value, str) else ""
    return text[: width - 3] + "..." + size


def check_ids(
    values: Iterable[object], what: str, syntax: IdSyntax, *, target: str, hint: str, first_field: bool = False
) -> None:
    """Refuse to write ids that break the rule: a FinegrainError naming the id, why and ``target``
    (what was to be written, e.g. ``"a TREC run file 'out/run.trec'"``). Call before writing anything."""
    bad = first_bad_id(values, syntax, first_field=first_field)
    if bad is not None:
        value, problem = bad
        raise FinegrainError(f"cannot write {what} {show_id(value)} to {target}: it {problem}, and the format "
                             f"takes {syntax.expected()}", hint)


def id_error(path: str | os.PathLike[str], line: int | None, value: object, what: str, syntax: IdSyntax,
             problem: str | None = None) -> DataFormatError:
    """The reader's error for an id that breaks the rule of ``syntax``: names file, line, the id and why
    (``what``: ``"a query id"``, ``"a document id"``, ...)."""
    why = problem or id_problem(value, syntax) or "breaks the id rule"
    if "surrogate" in why:
        fix = "re-export the file as valid UTF-8"
    elif "long" in why:
        fix = "shorten the id"
    elif syntax is IdSyntax.JSON or "empty" in why or "blank" in why:
        fix = "give every record an id"
    else:
        fix = "rename the id, or keep the data in a JSON format such as run.jsonl, which can hold it"
    found = value if isinstance(value, str) else repr(value)
    return DataFormatError(path, line, syntax.expected(what), found, f"the id {why}; {fix}")


def trec_safe(values: Iterable[object], *, first_field: bool = False) -> bool:
    """Whether every one of ``values`` can be a field of a TREC file (:attr:`IdSyntax.TOKEN`)."""
    return first_bad_id(values, IdSyntax.TOKEN, first_field=first_field) is None


__all__ = ["MAX_ID_CHARS", "IdSyntax", "check_ids", "describe_char", "first_bad_id", "id_error", "id_problem",
           "show_id", "trec_safe"]
