"""``load_dataset("irds:NAME")``: any ir_datasets dataset that is already on disk, as a finegrain :class:`Dataset`.

``NAME`` is an ir_datasets id (``beir/scifact/test``, ``msmarco-passage/dev/small``);
the dataset must have documents, queries and qrels. Nothing is downloaded:
while the records are read, ir_datasets' network sources are switched off
(only :class:`ir_datasets.util.LocalDownload` and files already in its cache,
``$IR_DATASETS_HOME``, are read), so a dataset that is not on disk fails at once
with the command that downloads it, instead of starting a download of
gigabytes inside an evaluation.

Records map as ir_datasets documents them: a document's ``text`` and
``title`` fields (else its ``default_text()``), a query's ``text`` (else
``default_text()``), qrels ``(query_id, doc_id, relevance)``. The language
is the dataset's ``queries_lang()`` when it is ``en`` or ``zh``, else
detected from the query texts; ``lang=`` overrides it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from finegrain._lazy import require
from finegrain.datasets.dataset import Dataset, lang_of_folder, make_dataset
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.text.lang import parse_lang
from finegrain.types import Corpus, Document, Qrels, Queries, Query

PREFIX = "irds:"


class _NotOnDisk(Exception):
    """Raised by the switched-off network sources; carries what would have been fetched."""


def load_irds(name: str, *, lang: str | None = None) -> Any:
    """The ir_datasets dataset ``name`` (without the ``irds:`` prefix) as a :class:`~finegrain.datasets.Dataset`."""

    irds = require("ir_datasets", "interop")
    try:
        ds = irds.load(name)
    except KeyError:
        known = list(irds.registry)
        raise UnknownNameError("ir_datasets dataset", name, known) from None
    missing = [part for part in ("docs", "queries", "qrels") if not ds.has(part)]
    if missing:
        raise FinegrainError(f"ir_datasets dataset {name!r} has no {' or '.join(missing)}",
                             "pick a dataset id with documents, queries and qrels, e.g. beir/scifact/test")
    with _offline(irds, name):
        corpus = Corpus(_document(d) for d in ds.docs_iter())
        queries = Queries(Query(q.query_id, _query_text(q)) for q in ds.queries_iter())
        qrels = Qrels.from_records((q.query_id, q.doc_id, int(q.relevance)) for q in ds.qrels_iter())
    if lang is not None:
        language = str(parse_lang(lang))
    else:
        declared = _declared_lang(ds)
        language = declared if declared in ("en", "zh") else lang_of_folder(Path(name), queries)
    info: dict[str, Any] = {
        "source": f"ir_datasets:{name}",
        "license": "see the ir_datasets documentation of this dataset",
        "citation": "",
        "fully_judged": False,
        "ir_datasets": {"id": name, "version": getattr(irds, "__version__", "unknown")},
    }
    home = irds.util.home_path()
    dataset = make_dataset(PREFIX + name, "ir_datasets", Path(home), corpus, queries, qrels, language, info)
    assert isinstance(dataset, Dataset)
    return dataset


# --------------------------------------------------------------------------- records


def _document(d: Any) -> Document:
    fields = getattr(d, "_fields", ())
    if "text" in fields:
        return Document(d.doc_id, str(d.text), str(getattr(d, "title", "") or ""))
    return Document(d.doc_id, str(d.default_text()) if hasattr(d, "default_text") else "")


def _query_text(q: Any) -> str:
    if "text" in getattr(q, "_fields", ()):
        return str(q.text)
    return str(q.default_text()) if hasattr(q, "default_text") else ""


def _declared_lang(ds: Any) -> str | None:
    try:
        value = ds.queries_lang()
    except Exception:  # noqa: BLE001 - a handler without a declared language
        return None
    return value if isinstance(value, str) else None


# --------------------------------------------------------------------------- no downloads


@contextlib.contextmanager
def _offline(irds: Any, name: str) -> Iterator[None]:
    """Switch off every ir_datasets network source for the duration; a fetch becomes a clear error.

    The switch is undone on exit, also on error: nothing stays changed in ir_datasets.
    """
    download = irds.util.download
    local = download.LocalDownload
    sources = [c for c in _subclasses(download.BaseDownload) if not issubclass(c, local) and "stream" in c.__dict__]
    saved = {c: c.__dict__["stream"] for c in sources}

    def refuse(self: Any) -> Any:
        raise _NotOnDisk(getattr(self, "url", None) or getattr(self, "_url", None) or type(self).__name__)

    try:
        for c in sources:
            setattr(c, "stream", refuse)  # noqa: B010 - a class attribute mypy cannot see
        try:
            yield
        except _NotOnDisk as e:
            raise _not_on_disk(name, str(e)) from None
        except RuntimeError as e:  # "All download sources failed": look for ours among the mirrors' errors
            found = [err for _, err in (e.args[1] if len(e.args) > 1 and isinstance(e.args[1], list) else [])
                     if isinstance(err, _NotOnDisk)]
            if found:
                raise _not_on_disk(name, str(found[0])) from None
            raise
    finally:
        for c, stream in saved.items():
            setattr(c, "stream", stream)  # noqa: B010


def _not_on_disk(name: str, source: str) -> FinegrainError:
    return FinegrainError(
        f"ir_datasets dataset {name!r} is not on disk (reading it would download {source})",
        f"download it once with: python -m ir_datasets export {name} docs > /dev/null && "
        f"python -m ir_datasets export {name} qrels > /dev/null (files go to $IR_DATASETS_HOME, "
        "default ~/.ir_datasets), then load it again",
    )


def _subclasses(cls: type) -> list[type]:
    out: list[type] = []
    sub: type
    for sub in cls.__subclasses__():
        out.append(sub)
        out.extend(_subclasses(sub))
    return out
