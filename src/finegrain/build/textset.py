"""The texts of one set (queries or passages) from the files users have, and the same set written back without some.

:func:`read_text_set` takes:

* **a TSV or plain-text file**: one row per line, fields split on tabs (a line
  without a tab is one field). The DuReader-retrieval training files are read
  as they are: ``dual.train.tsv`` (``query, title, passage, title, passage,
  label``), ``cross.train.tsv`` (``query, title, passage, label``),
  ``dureader.q`` (``query - - 0``) and ``dureader.para`` (``- passage``).
  ``field="queries"`` reads column 1; ``field="passages"`` reads column 2 of
  2-column rows, 3 of 4-column rows, 3 and 5 of 6-column rows, 1 of 1-column
  rows; ``column=N`` (1-based) reads another column. Every row must have as
  many fields as the first. A cell that is empty or ``-`` (DuReader's
  placeholder) holds no text. The same text on many rows (a query with many
  passages) is one item, whose id is ``L<n>``, ``n`` the line it first appears
  on, or ``L<n>c<column>`` when two columns are read.
* **a JSON-lines file** (the first non-blank line starts with ``{``): BEIR /
  CapRetrieval records, the id in ``_id`` or ``id``, the text in ``text`` (or
  ``query``, CapRetrieval's queries); ``title`` is kept for passages. Ids are
  unique (a repeated id is an error naming both lines).
* **a dataset** (a registered name such as ``dureader/mini`` or a dataset
  folder): its queries, or its corpus with ``field="passages"``.

:func:`write_without` writes the set back in its own format without the given
items: file rows are copied byte for byte except the rows that hold a dropped
item (a 6-column DuReader row goes when either of its passages is dropped); a
dataset is written as a folder of its format (BEIR or CapRetrieval) without
the dropped queries (and their judgements) or passages (and the judgements
that name them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from finegrain.datasets.registry import dataset_names, load_dataset
from finegrain.errors import DataFormatError, FinegrainError, UnknownNameError, check_unique_ids
from finegrain.frozen import EMPTY
from finegrain.io._lines import get_field, iter_id_records, iter_lines, open_text_write
from finegrain.io.beir import write_beir
from finegrain.io.capretrieval import write_capretrieval
from finegrain.io.idlist import _is_jsonl  # the one "is this JSON lines?" rule
from finegrain.settings import Settings
from finegrain.types import Corpus, Qrels, Queries

Field = Literal["queries", "passages"]
FIELDS: tuple[str, ...] = ("queries", "passages")
#: Cells that hold no text in a TSV row (DuReader writes ``-`` for a missing query or passage).
PLACEHOLDERS = frozenset({"", "-"})
# Which columns hold passages, by the number of fields of a row (DuReader's shapes; 1-based).
_PASSAGE_COLUMNS: Mapping[int, tuple[int, ...]] = MappingProxyType({1: (1,), 2: (2,), 4: (3,), 6: (3, 5)})
_FILE_SUFFIXES = (".tsv", ".txt", ".jsonl", ".json", ".gz", ".q", ".para", ".csv")


@dataclass(frozen=True)
class TextItem:
    """One query or passage: its id, text, title (passages of JSON files and datasets) and, for a passage
    cut by ``finegrain passages``, the document it was cut from (its JSON record's ``doc_id``)."""

    id: str
    text: str
    title: str = ""
    doc_id: str | None = None


@dataclass(frozen=True)
class TextSet:
    """The items of one source, in source order, with what is needed to write the source back.

    ``format`` is ``"tsv"``, ``"jsonl"``, ``"dataset"`` or ``"memory"``;
    ``field`` is ``"queries"``, ``"passages"`` or ``"items"`` (a set built in
    memory); ``lines`` maps each item of a file to the 1-based lines it was
    read from; ``lang`` is the dataset's language when the source is one.
    """

    items: tuple[TextItem, ...]
    source: str
    format: str
    field: str
    lines: Mapping[str, tuple[int, ...]] = dataclasses.field(default_factory=lambda: EMPTY, repr=False)
    lang: str | None = None
    columns: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        check_unique_ids((i.id for i in self.items), "item id", f" in {self.source}")
        if not isinstance(self.lines, MappingProxyType):
            object.__setattr__(self, "lines", MappingProxyType(dict(self.lines)))

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[TextItem]:
        return iter(self.items)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(i.id for i in self.items)

    @property
    def texts(self) -> list[str]:
        return [i.text for i in self.items]

    def __repr__(self) -> str:
        return f"TextSet({len(self.items)} {self.field} from {self.source!r}, {self.format})"


# --------------------------------------------------------------------------- reading


def check_field(value: str) -> Field:
    if value not in FIELDS:
        raise UnknownNameError("field", str(value), FIELDS)
    return value  # type: ignore[return-value]


def read_text_set(source: str | Path, field: str = "queries", *, column: int | None = None,
                  settings: Any = None) -> TextSet:
    """The ``field`` items of ``source``: a TSV / text file, a JSON-lines file, a dataset name or folder.

    Raises :class:`~finegrain.errors.FinegrainError` for a missing source, an
    empty one (no item), a TSV row of the wrong shape, or a JSON record without
    an id or text, naming the file and line.
    """
    fld = check_field(field)
    if column is not None and (isinstance(column, bool) or not isinstance(column, int) or column < 1):
        raise FinegrainError(f"column {column!r} is not a column number", "columns count from 1: --column 1")
    path = Path(str(source)).expanduser()
    if path.is_file():
        ts = _read_jsonl(path, fld) if _is_jsonl(path) else _read_tsv(path, fld, column)
        if column is not None and ts.format == "jsonl":
            raise FinegrainError(f"--column applies to TSV files; {str(path)!r} is JSON lines",
                                 "leave --column out: the text is the record's 'text' field")
    else:
        if column is not None:
            raise FinegrainError(f"--column applies to TSV files; {str(source)!r} is a dataset", "leave --column out")
        ts = _read_dataset(source, fld, settings)
    if not ts.items:
        where = "rows" if ts.format == "tsv" else "records" if ts.format == "jsonl" else fld
        raise FinegrainError(f"{ts.source!r} has no {fld} (no {where} with text)",
                             "check the file; an empty or all-placeholder source cannot be compared")
    return ts


def as_text_set(value: Any, field: str = "queries") -> TextSet:
    """``value`` as a :class:`TextSet`: a TextSet as it is; a path or dataset name read with
    :func:`read_text_set`; a finegrain ``Queries`` / ``Corpus``; a mapping ``id -> text``; or a
    sequence of texts (ids ``"0"``, ``"1"``, ...)."""

    if isinstance(value, TextSet):
        return value
    if isinstance(value, str | Path):
        return read_text_set(value, field)
    if isinstance(value, Queries):
        return TextSet(tuple(TextItem(q.id, q.text) for q in value.values()), "queries", "memory", "queries")
    if isinstance(value, Corpus):
        return TextSet(tuple(TextItem(d.id, d.text, d.title) for d in value.values()), "corpus", "memory", "passages")
    if isinstance(value, Mapping):
        items = []
        for k, v in value.items():
            if not isinstance(v, str):
                raise FinegrainError(f"the text of item {k!r} is a {type(v).__name__}, not a string",
                                     "pass a mapping of id -> text")
            items.append(TextItem(str(k), v))
        return TextSet(tuple(items), "mapping", "memory", "items")
    if isinstance(value, Sequence):
        bad = next((v for v in value if not isinstance(v, str)), None)
        if bad is not None:
            raise FinegrainError(f"item {bad!r} is a {type(bad).__name__}, not a string", "pass a list of texts")
        return TextSet(tuple(TextItem(str(i), t) for i, t in enumerate(value)), "list", "memory", "items")
    raise FinegrainError(f"cannot read texts from a {type(value).__name__}",
                         "pass a file path, a dataset name, a mapping id -> text or a list of texts")


def _read_tsv(path: Path, fld: Field, column: int | None) -> TextSet:
    width: int | None = None
    first_line = 0
    cols: tuple[int, ...] = ()
    items: dict[str, TextItem] = {}
    by_text: dict[str, str] = {}
    lines: dict[str, list[int]] = {}
    for n, line in iter_lines(path):
        if not line.strip():
            continue
        cells = line.split("\t")
        if width is None:
            width, first_line = len(cells), n
            cols = _columns(path, n, width, fld, column)
        elif len(cells) != width:
            raise DataFormatError(path, n, f"{width} tab-separated fields, as on line {first_line}",
                                  f"{len(cells)} fields: {line}", "every row of a TSV file has the same columns")
        for c in cols:
            text = cells[c - 1].strip()
            if text in PLACEHOLDERS:
                continue
            item_id = by_text.get(text)
            if item_id is None:
                item_id = f"L{n}" if len(cols) == 1 else f"L{n}c{c}"
                by_text[text] = item_id
                items[item_id] = TextItem(item_id, text)
            seen = lines.setdefault(item_id, [])
            if not seen or seen[-1] != n:
                seen.append(n)
    return TextSet(tuple(items.values()), str(path), "tsv", fld,
                   {k: tuple(v) for k, v in lines.items()}, columns=cols)


def _columns(path: Path, n: int, width: int, fld: Field, column: int | None) -> tuple[int, ...]:
    if column is not None:
        if column > width:
            raise DataFormatError(path, n, f"at least {column} tab-separated fields (--column {column})",
                                  f"{width}", f"choose a column between 1 and {width}")
        return (column,)
    if fld == "queries":
        return (1,)
    cols = _PASSAGE_COLUMNS.get(width)
    if cols is None:
        raise DataFormatError(
            path, n, "DuReader rows of 1, 2, 4 or 6 tab-separated fields to find the passages",
            f"{width} fields", "say which column holds the passages with --column N (1-based)",
        )
    return cols


def _read_jsonl(path: Path, fld: Field) -> TextSet:
    items: list[TextItem] = []
    lines: dict[str, tuple[int, ...]] = {}
    for n, rid, obj in iter_id_records(path, ("_id", "id"), "id"):
        text = get_field(path, n, obj, "text", "query", kind="text")
        title = obj.get("title")
        doc = obj.get("doc_id")
        items.append(TextItem(rid, text, title if isinstance(title, str) else "",
                              str(doc) if isinstance(doc, str | int) and not isinstance(doc, bool) else None))
        lines[rid] = (n,)
    return TextSet(tuple(items), str(path), "jsonl", fld, lines)


def _read_dataset(source: str | Path, fld: Field, settings: Any) -> TextSet:
    text = str(source)
    looks_like_file = text.lower().endswith(_FILE_SUFFIXES) or (
        ("/" in text or "\\" in text) and text not in dataset_names() and not Path(text).expanduser().is_dir())
    if looks_like_file and not text.startswith("irds:"):
        raise FinegrainError(f"no file or folder {text!r}", "check the path, or give a dataset name (finegrain list datasets)")
    ds = load_dataset(source, settings or Settings.from_env())
    if fld == "queries":
        items = tuple(TextItem(q.id, q.text) for q in ds.queries.values())
    else:
        items = tuple(TextItem(d.id, d.text, d.title) for d in ds.corpus.values())
    return TextSet(items, ds.name, "dataset", fld, lang=ds.lang)


# --------------------------------------------------------------------------- writing


def write_without(ts: TextSet, drop: Iterable[str], out: str | Path, *, settings: Any = None) -> Path:
    """Write ``ts``'s source without the items ``drop`` (ids of ``ts``) to ``out``, in the source's format.

    A file source gives a file (gzipped when ``out`` ends in ``.gz``); a dataset
    gives a folder. Returns the path written.
    """
    dropped = frozenset(drop)
    unknown = sorted(dropped - set(ts.ids))
    if unknown:
        raise FinegrainError(f"cannot drop {unknown[0]!r}: {ts.source} has no such item", "drop ids of this set")
    out_path = Path(out)
    if ts.format in ("tsv", "jsonl"):
        if out_path.resolve() == Path(ts.source).resolve():
            raise FinegrainError(f"--drop {str(out)!r} is the input file itself", "write to another file")
        skip = {n for i in dropped for n in ts.lines.get(i, ())}
        with open_text_write(out_path) as f:
            for n, line in iter_lines(ts.source):
                if n not in skip:
                    f.write(line + "\n")
        return out_path
    if ts.format == "dataset":
        return _write_dataset_without(ts, dropped, out_path, settings)
    raise FinegrainError(f"a set built in memory ({ts.source}) has no format to write back",
                         "read the set from a file or a dataset to write it without the dropped items")


def _write_dataset_without(ts: TextSet, dropped: frozenset[str], out: Path, settings: Any) -> Path:
    ds = load_dataset(ts.source, settings or Settings.from_env())
    fmt = ds.meta.get("format")
    if fmt not in ("beir", "capretrieval"):
        raise FinegrainError(f"--drop writes BEIR and CapRetrieval datasets; {ds.name!r} is {fmt}",
                             "export its queries or corpus to a JSON-lines file and give that file instead")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FinegrainError(f"--drop {str(out)!r} exists and is not an empty folder",
                             "a dataset is written as a new folder: choose a new path")
    corpus, queries = ds.corpus, ds.queries
    if ts.field == "queries":
        queries = Queries(q for q in ds.queries.values() if q.id not in dropped)
        judged = {q: dict(ds.qrels[q]) for q in ds.qrels if q not in dropped}
    else:
        corpus = Corpus(d for d in ds.corpus.values() if d.id not in dropped)
        judged = {q: {d: g for d, g in ds.qrels[q].items() if d not in dropped} for q in ds.qrels}
    qrels = Qrels.from_dict(judged)
    if fmt == "beir":
        write_beir(out, corpus, queries, qrels)
    else:
        write_capretrieval(out, corpus, queries, qrels)
    return out
