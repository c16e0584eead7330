"""Text units: what two texts are matched by, one rule for overlap, ROUGE-L, MinHash and span F1.

* ``zh``: every Chinese character is a unit, and every run of other letters or
  digits (a Latin word, a number) is one unit: ``"oracle 时间格式"`` ->
  ``oracle``, ``时``, ``间``, ``格``, ``式``. This is the character level the
  DuReader and CapRetrieval papers compare Chinese at, without cutting
  ``app`` into three letters.
* ``en``: words, the :data:`finegrain.text.words.WORD` runs (``\\w+``) of the
  English word splitter: ``"it's 3.5"`` -> ``it``, ``s``, ``3``, ``5``.

Punctuation and whitespace are never units. Each unit is NFKC-normalised and
case-folded (``Ｏｒａｃｌｅ`` -> ``oracle``), so full-width and half-width
forms match. :func:`unit_spans` keeps each unit's character offsets in the
original text (a matched span can be shown as written).

:func:`shared_units` counts the units pairs of texts share, for every pair at once.

:func:`exact_key` is the form two texts must share to be exact duplicates:
NFKC, case-folded, runs of whitespace collapsed to one space, ends stripped.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

import numpy as np

from finegrain.text.lang import Lang, parse_lang
from finegrain.text.words import WORD

_CJK: Final = "\u3400-\u9fff\uf900-\ufaff"
#: A Chinese character, or a run of other word characters.
ZH_UNIT: Final = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")
#: An English word (the English splitter's pattern).
EN_UNIT: Final = WORD


def _pattern(lang: str | Lang) -> re.Pattern[str]:
    return ZH_UNIT if parse_lang(lang) is Lang.ZH else EN_UNIT


def normalize_unit(unit: str) -> str:
    """NFKC, then case-folded."""
    return unicodedata.normalize("NFKC", unit).casefold()


def units(text: str, lang: str | Lang) -> list[str]:
    """The units of ``text`` in ``lang``, in order (see the module docstring)."""
    return [normalize_unit(m.group()) for m in _pattern(lang).finditer(text)]


def unit_spans(text: str, lang: str | Lang) -> list[tuple[int, int, str]]:
    """``(start, end, unit)`` for each unit of ``text``: offsets into ``text`` as written, the unit normalised."""
    return [(m.start(), m.end(), normalize_unit(m.group())) for m in _pattern(lang).finditer(text)]


def exact_key(text: str) -> str:
    """The form exact duplicates share: NFKC, case-folded, whitespace runs made one space, ends stripped."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def shared_units(ua: Sequence[Sequence[str]], ub: Sequence[Sequence[str]], *, block_rows: int = 256,
                 keep: Callable[[Any, Any, Any], Any] | None = None) -> Iterator[tuple[int, int, int]]:
    """``(i, j, shared)`` for every pair sharing a unit: ``shared`` counts units with multiplicity
    (``sum over u of min(count in a, count in b)``), an upper bound of their LCS.

    Computed as a sparse product: each occurrence ``k`` of a unit ``u`` is a
    column ``(u, k)``, so two rows share exactly ``min`` columns per unit.
    ``keep(shared, len_a, len_b)``, given numpy arrays, returns a mask of the
    pairs to yield (a bound that rules pairs out without a Python loop over them).
    """
    from scipy import sparse

    vocab: dict[tuple[str, int], int] = {}

    def matrix(rows: Sequence[Sequence[str]]) -> Any:
        indptr, cols = [0], []
        for toks in rows:
            seen: dict[str, int] = {}
            for u in toks:
                k = seen[u] = seen.get(u, 0) + 1
                cols.append(vocab.setdefault((u, k), len(vocab)))
            indptr.append(len(cols))
        return indptr, cols

    pa, ca = matrix(ua)
    pb, cb = matrix(ub)
    shape = len(vocab)
    A = sparse.csr_matrix((np.ones(len(ca), dtype=np.int32), ca, pa), shape=(len(ua), shape))
    Bt = sparse.csr_matrix((np.ones(len(cb), dtype=np.int32), cb, pb), shape=(len(ub), shape)).T.tocsr()
    len_a, len_b = np.diff(np.asarray(pa)), np.diff(np.asarray(pb))
    for start in range(0, len(ua), block_rows):
        block = (A[start:start + block_rows] @ Bt).tocoo()
        rows, cols, vals = block.row + start, block.col, block.data
        if keep is not None:
            mask = keep(vals, len_a[rows], len_b[cols])
            rows, cols, vals = rows[mask], cols[mask], vals[mask]
        yield from zip(rows.tolist(), cols.tolist(), vals.tolist())
