"""Documents split into passages of controlled length, cut between sentences where possible.

DuReader-retrieval builds its passages from paragraphs of about 256 Chinese
characters (Qiu et al., 2022, Sect. 2.2.2, "Passage Length Control");
:func:`split_passages` gives every passage at most ``max_chars`` characters
(of its text; the title is not counted):

1. **Sentences.** A document is cut at line breaks, then into sentences: in
   ``zh`` after a run of 。！？；!?; or … (closing quotes and brackets that
   follow stay with the sentence); in ``en`` where ``sentencex`` (Wikimedia's
   rule-based segmenter, abbreviations such as "Dr." and "U.S." known) puts a
   boundary. Whitespace around a sentence belongs to no passage.
2. **Long sentences.** A sentence longer than ``max_chars`` is cut hard into
   pieces of at most ``max_chars``: at the last whitespace or clause mark
   (，、：,:) in the second half of the window, else at the last position that
   is not inside a word (a run of Latin letters or digits; between two Chinese
   characters is fine), else exactly at ``max_chars`` (a "word" longer than
   the window).
3. **Packing.** Sentences (and pieces) are packed greedily in order: a passage
   takes the next sentence while the passage, from its first character to the
   sentence's last, stays within ``max_chars``.
4. **Stride.** With ``stride=N`` (``0 <= N < max_chars``), each passage after
   the first starts up to N characters before the previous one ended, so
   consecutive passages share up to N characters: at the earliest sentence
   start in that window, else at the earliest word start in it (never so early
   that its first new sentence would not fit). ``stride=0`` (the default)
   gives passages that do not overlap.

With ``stride=0`` the passages of a document cover every non-whitespace
character of it exactly once, in order, and each passage is the document's
text between its ``start`` and ``end`` offsets.

Passage ids are ``{doc_id}#p{n}``, ``n`` counting from 0 in document order:
the same document text, ``max_chars``, ``stride`` and language always give the
same ids, and the document id is what precedes the last ``#p``
(:func:`doc_of`). :func:`write_passages` writes a BEIR ``corpus.jsonl`` whose
records also carry the mapping: ``{"_id", "title", "text", "doc_id", "start",
"end"}``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from finegrain._lazy import require
from finegrain.build.textset import TextItem, as_text_set
from finegrain.errors import FinegrainError
from finegrain.io._lines import open_text_write
from finegrain.text.lang import CJK, Lang, detect_lang, parse_lang
from finegrain.types import Corpus, Document

DEFAULT_MAX_CHARS = 256
_ZH_END = "。！？；!?;…"
_CLOSERS = "”’\"'」』）)］]】〉》"
#: A zh sentence: text up to and including a run of terminators and the closing marks after it.
ZH_SENTENCE = re.compile(rf"[^{_ZH_END}]+(?:[{_ZH_END}]+[{re.escape(_CLOSERS)}]*)?|[{_ZH_END}]+[{re.escape(_CLOSERS)}]*")
_CLAUSE = frozenset("，、：,:；;）)")


@dataclass(frozen=True)
class Passage:
    """A piece of a document: ``text == document_text[start:end]``."""

    id: str
    doc_id: str
    n: int
    start: int
    end: int
    text: str
    title: str = ""


@dataclass(frozen=True)
class PassageSet:
    """The passages of a set of documents and how they were cut.

    ``n_empty_documents`` counts documents with no text (no passage);
    ``n_hard_cuts`` the cuts made inside a sentence longer than ``max_chars``.
    """

    passages: tuple[Passage, ...]
    max_chars: int
    stride: int
    lang: str
    n_documents: int
    n_empty_documents: int
    n_hard_cuts: int

    def __len__(self) -> int:
        return len(self.passages)

    def __iter__(self) -> Iterator[Passage]:
        return iter(self.passages)

    @property
    def longest(self) -> int:
        return max((len(p.text) for p in self.passages), default=0)

    def doc_ids(self) -> dict[str, str]:
        """``{passage_id: doc_id}``."""
        return {p.id: p.doc_id for p in self.passages}

    def to_corpus(self) -> Any:
        """The passages as a :class:`~finegrain.types.Corpus` (``doc_id``, ``start``, ``end`` in each meta)."""

        return Corpus(Document(p.id, p.text, p.title,
                               MappingProxyType({"doc_id": p.doc_id, "start": p.start, "end": p.end}))
                      for p in self.passages)


def passage_id(doc_id: str, n: int) -> str:
    return f"{doc_id}#p{n}"


def doc_of(pid: str) -> str:
    """The document id of a passage id ``{doc_id}#p{n}`` (the id itself when it has no ``#p{n}`` end)."""
    head, sep, tail = pid.rpartition("#p")
    return head if sep and tail.isdigit() else pid


# --------------------------------------------------------------------------- the entry point


def split_passages(documents: Any, max_chars: int = DEFAULT_MAX_CHARS, stride: int = 0,
                   lang: str | Lang | None = None) -> PassageSet:
    """Split ``documents`` into passages (see the module docstring).

    ``documents`` is anything :func:`finegrain.build.textset.as_text_set` reads
    as passages: a corpus file, a dataset name, a ``Corpus``, a mapping
    ``id -> text``. ``lang`` defaults to the dataset's, else the one detected.
    """
    check_lengths(max_chars, stride)
    ts = as_text_set(documents, "passages")
    if lang is not None:
        language = parse_lang(lang)
    elif ts.lang:
        language = parse_lang(ts.lang)
    else:
        language = detect_lang(" ".join(ts.texts[:200]), min_share=0.3)
    out: list[Passage] = []
    empty = cuts = 0
    for item in ts.items:
        spans, n_cuts = split_text(item.text, max_chars, stride, language)
        cuts += n_cuts
        if not spans:
            empty += 1
        out.extend(_passages(item, spans))
    return PassageSet(tuple(out), max_chars, stride, str(language), len(ts), empty, cuts)


def check_lengths(max_chars: int, stride: int) -> None:
    if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
        raise FinegrainError(f"max_chars {max_chars!r} is not a whole number >= 1", "use --max-chars 256")
    if isinstance(stride, bool) or not isinstance(stride, int) or not 0 <= stride < max_chars:
        raise FinegrainError(f"stride {stride!r} is not a whole number in [0, max_chars={max_chars})",
                             "the stride is the overlap between passages: 0 (none) up to max_chars - 1")


def _passages(item: TextItem, spans: Sequence[tuple[int, int]]) -> Iterator[Passage]:
    for n, (s, e) in enumerate(spans):
        yield Passage(passage_id(item.id, n), item.id, n, s, e, item.text[s:e], item.title)


def split_text(text: str, max_chars: int, stride: int, lang: str | Lang) -> tuple[list[tuple[int, int]], int]:
    """``([(start, end), ...], hard cuts)``: the passage spans of one text."""
    units: list[tuple[int, int]] = []
    cuts = 0
    for s, e in sentence_spans(text, lang):
        if e - s <= max_chars:
            units.append((s, e))
            continue
        pieces = _hard_cut(text, s, e, max_chars)
        cuts += len(pieces) - 1
        units.extend(pieces)
    return _pack(text, units, max_chars, stride), cuts


# --------------------------------------------------------------------------- sentences


def sentence_spans(text: str, lang: str | Lang) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text``, whitespace stripped, in order (see the module docstring)."""
    language = parse_lang(lang)
    out: list[tuple[int, int]] = []
    pos = 0
    for line in text.split("\n"):
        pieces = _zh_sentences(line) if language is Lang.ZH else _en_sentences(line)
        for s, e in pieces:
            s, e = _strip(line, s, e)
            if s < e:
                out.append((pos + s, pos + e))
        pos += len(line) + 1
    return out


def _zh_sentences(line: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in ZH_SENTENCE.finditer(line)]


def _en_sentences(line: str) -> list[tuple[int, int]]:
    if not line.strip():
        return []

    sentencex = require("sentencex", "build")
    out: list[tuple[int, int]] = []
    pos = 0
    for seg in sentencex.segment("en", line):
        core = seg.strip()
        if not core:
            continue
        k = line.find(core, pos)
        if k < 0:  # the segmenter changed the text: keep the rest of the line whole
            out.append((pos, len(line)))
            return out
        out.append((k, k + len(core)))
        pos = k + len(core)
    if line[pos:].strip():
        out.append((pos, len(line)))
    return out


def _strip(text: str, s: int, e: int) -> tuple[int, int]:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e


# --------------------------------------------------------------------------- cutting and packing


def _wordish(ch: str) -> bool:
    """A character of a Latin word or number (a letter or digit that is not Chinese)."""
    return ch.isalnum() and not CJK.match(ch)


def is_soft(text: str, p: int) -> bool:
    """Whether cutting ``text`` before position ``p`` cuts no word (not between two Latin letters/digits)."""
    return not (0 < p < len(text) and _wordish(text[p - 1]) and _wordish(text[p]))


def _hard_cut(text: str, s: int, e: int, max_chars: int) -> list[tuple[int, int]]:
    pieces: list[tuple[int, int]] = []
    while e - s > max_chars:
        limit = s + max_chars
        cut = None
        for p in range(limit, s + max_chars // 2, -1):  # a space or clause mark in the second half
            if text[p - 1].isspace() or text[p].isspace() or text[p - 1] in _CLAUSE:
                cut = p
                break
        if cut is None:
            cut = next((p for p in range(limit, s, -1) if is_soft(text, p)), limit)
        a, b = _strip(text, s, cut)
        if a < b:
            pieces.append((a, b))
        s, _ = _strip(text, cut, e)
    if s < e:
        pieces.append((s, e))
    return pieces


def _pack(text: str, units: Sequence[tuple[int, int]], max_chars: int, stride: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(units):
        start = units[i][0]
        if stride and out:
            start = _overlap_start(text, units[:i], out[-1][1], units[i], max_chars, stride)
        end = units[i][1]
        j = i + 1
        while j < len(units) and units[j][1] - start <= max_chars:
            end = units[j][1]
            j += 1
        out.append((start, end))
        i = j
    return out


def _overlap_start(text: str, before: Sequence[tuple[int, int]], prev_end: int, first_new: tuple[int, int],
                   max_chars: int, stride: int) -> int:
    """Where a passage starts that shares up to ``stride`` characters with the previous one (ending at
    ``prev_end``) and still holds its first new sentence ``first_new`` within ``max_chars``."""
    lo = max(prev_end - stride, first_new[1] - max_chars)
    for s, _ in before:  # sentence starts, in order: the earliest in the window
        if lo <= s < prev_end:
            return s
    for p in range(max(lo, 0), prev_end):
        if not text[p].isspace() and is_soft(text, p):
            return p
    return first_new[0]


# --------------------------------------------------------------------------- files


def write_passages(passages: PassageSet | Iterable[Passage], path: str | Path) -> Path:
    """A BEIR ``corpus.jsonl`` (gzipped for ``.gz``): ``_id, title, text, doc_id, start, end`` per passage.

    A folder ``path`` (one that exists, or ends with a separator) gets ``corpus.jsonl`` inside.
    """

    out = Path(path)
    if out.is_dir() or str(path).endswith(("/", "\\")):
        out = out / "corpus.jsonl"
    with open_text_write(out) as f:
        for p in passages:
            f.write(json.dumps({"_id": p.id, "title": p.title, "text": p.text, "doc_id": p.doc_id,
                                "start": p.start, "end": p.end}, ensure_ascii=False) + "\n")
    return out
