"""Named datasets and folders in a known format, loaded as one frozen :class:`Dataset`.

Names (``finegrain datasets`` lists them):

=========================  ===========================================  ====
name                       folder                                       lang
=========================  ===========================================  ====
``embedded/captions-en``   shipped in the package (no data root)        en
``embedded/captions-zh``   shipped in the package (no data root)        zh
``capretrieval/zh``        ``$DATA/capretrieval/zh``                     zh
``capretrieval/en``        ``$DATA/capretrieval/en`` (types via zh ids)  en
``dureader/mini``          ``$DATA/dureader_mini``                       zh
``photobench/album1``      ``$DATA/photobench/album1``, English queries  en
``photobench/album1/zh``   the same album, Chinese queries               zh
=========================  ===========================================  ====

``$DATA`` is the data root of :class:`~finegrain.settings.Settings`
(``$FINEGRAIN_DATA``, else ``../shared/data`` when present). A registered name
wins over a folder of the same relative path; write ``./name`` for the folder.

Any folder in a known format also loads by path; the format is detected from
its files: ``candidates.jsonl`` + ``queries.jsonl`` is CapRetrieval,
``corpus.jsonl`` + ``queries.jsonl`` + ``qrels.tsv`` or ``qrels/`` is BEIR,
``metadata.json`` + ``*_query.json`` is a PhotoBench album. The language of a
folder comes from its name (``zh``, ``en``, ``cn``) or else from its query
texts (mostly CJK characters -> ``zh``); ``lang=`` overrides it, and picks the
query language of a PhotoBench album.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from finegrain.datasets.dataset import Dataset, lang_of_folder, make_dataset
from finegrain.datasets.irds import PREFIX, load_irds
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.frozen import EMPTY
from finegrain.io.beir import qrels_path, qrels_splits, read_beir
from finegrain.io.capretrieval import TYPES, apply_types, read_capretrieval, read_types, type_assignment
from finegrain.io.photobench import read_album
from finegrain.registry import Registry
from finegrain.settings import DATA_ENV, Settings
from finegrain.text.lang import parse_lang
from finegrain.version import __version__

EMBEDDED_ROOT = Path(__file__).resolve().parent / "embedded"
DEFAULT_DATASET = "embedded/captions-en"



@dataclass(frozen=True)
class DatasetInfo:
    """One registered name, for listings: where it lives and whether it is there."""

    name: str
    help: str
    lang: str
    location: str  # "embedded:<folder>" or a folder relative to the data root
    available: bool
    how_to_get: str | None = None  # for a dataset that is not ready: the files, the folder they go in, the source


# --------------------------------------------------------------------------- registered names


@dataclass(frozen=True)
class _Spec:
    name: str
    loader: str  # "module:function" taking (spec, folder, settings) -> Dataset
    location: str  # relative to the data root, or "embedded:<relative folder>"
    lang: str
    help: str
    options: Mapping[str, Any] = field(default_factory=lambda: EMPTY)

    @property
    def embedded(self) -> bool:
        return self.location.startswith("embedded:")

    def folder(self, settings: Settings) -> Path:
        if self.embedded:
            return EMBEDDED_ROOT / self.location.removeprefix("embedded:")
        root = settings.require_data_root()
        path = root / self.location
        if not path.is_dir():
            top = self.location.split("/")[0]
            raise FinegrainError(
                f"dataset {self.name!r} needs the folder {str(path)!r}, which does not exist",
                f"set {DATA_ENV} to the data folder that holds {top}/ (now {str(root)!r}), or "
                + how_to_get(self, root),
            )
        return path

    @property
    def is_beir(self) -> bool:
        return self.loader.endswith(":_load_beir_spec")

    def load(self, settings: Settings, split: str | None = None) -> Dataset:
        module, _, attr = self.loader.partition(":")
        fn: Callable[..., Dataset] = getattr(importlib.import_module(module), attr)
        return fn(self, self.folder(settings), settings, **({"split": split} if split is not None else {}))


_THIS = "finegrain.datasets.registry"

# name, loader (_load_<loader>_spec below), location, lang, help, options (``source`` keys _PROVENANCE;
# ``mteb_task``: the name an MTEB result file gives the dataset, finegrain.results.mteb)
_TABLE: tuple[tuple[str, str, str, str, str, dict[str, str]], ...] = (
    ("embedded/captions-en", "capretrieval", "embedded:captions/en", "en",
     "80 image captions, 37 graded queries (English); ships with finegrain", {"source": "embedded"}),
    ("embedded/captions-zh", "capretrieval", "embedded:captions/zh", "zh",
     "the same captions and queries in Chinese; ships with finegrain", {"source": "embedded"}),
    ("capretrieval/zh", "capretrieval", "capretrieval/zh", "zh",
     "CapRetrieval: 3,024 Chinese image captions, 404 queries, graded 0/1/2, fully judged",
     {"source": "capretrieval", "mteb_task": "CapRetrieval"}),
    ("capretrieval/en", "capretrieval", "capretrieval/en", "en",
     "CapRetrievalEn: the English version (same ids; types from capretrieval/zh)",
     {"source": "capretrieval", "types_from": "capretrieval/zh", "mteb_task": "CapRetrievalEn"}),
    ("dureader/mini", "beir", "dureader_mini", "zh",
     "DuReader-retrieval training rows (RocketQA examples): 8 queries, 133 passages; negatives sampled",
     {"source": "dureader"}),
    ("photobench/album1", "photobench", "photobench/album1", "en",
     "PhotoBench album 1: 1,069 photos (metadata + faces, no images); 20 queries with public ground truth",
     {"source": "photobench"}),
    ("photobench/album1/zh", "photobench", "photobench/album1", "zh",
     "PhotoBench album 1 with the Chinese query texts", {"source": "photobench"}),
)

_SPECS: tuple[_Spec, ...] = tuple(
    _Spec(name, f"{_THIS}:_load_{loader}_spec", location, lang, help_, MappingProxyType(options))
    for name, loader, location, lang, help_, options in _TABLE
)

_PROVENANCE: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {
        "embedded": MappingProxyType(
            {
                "files": "",
                "source": "written by the finegrain authors (src/finegrain/datasets/embedded/captions)",
                "license": "Apache-2.0 (as finegrain)",
                "citation": "finegrain embedded caption set",
                "fully_judged": True,
                "revision": f"finegrain-{__version__}",  # the files ship inside the package
            }
        ),
        "capretrieval": MappingProxyType(
            {
                "files": "candidates.jsonl, queries.jsonl and types.json (a CapRetrieval folder)",
                "source": "github.com/lxucs/CapRetrieval @ e055902 (dataset/CapRetrieval, dataset/CapRetrievalEn)",
                "revision": "e055902",
                "license": "Apache-2.0",
                "citation": (
                    "Liyan Xu, Zhenlin Su, Mo Yu, Jiangnan Li, Fandong Meng, Jie Zhou. Dense Retrievers Can "
                    "Fail on Simple Queries: Revealing The Granularity Dilemma of Embeddings. 2025."
                ),
                "fully_judged": True,
            }
        ),
        "dureader": MappingProxyType(
            {
                "files": "corpus.jsonl, queries.jsonl and qrels.tsv (a BEIR folder made from the training rows)",
                "source": "github.com/PaddlePaddle/RocketQA @ e2bfcfc, examples/data (training-format rows, "
                "not the dev set)",
                "revision": "e2bfcfc",
                "license": "Apache-2.0 (RocketQA repository)",
                "citation": (
                    "Yifu Qiu, Hongyu Li, Yingqi Qu, Ying Chen, Qiaoqiao She, Jing Liu, Hua Wu, Haifeng Wang. "
                    "DuReader_retrieval: A Large-scale Chinese Benchmark for Passage Retrieval from Web "
                    "Search Engine. 2022."
                ),
                "fully_judged": False,
            }
        ),
        "photobench": MappingProxyType(
            {
                "files": "metadata.json, face_info_en.json, face_info_cn.json and the *_query.json files",
                "source": "github.com/LaVieEnRose365/PhotoBench @ db6ae80 (dataset/protected/album1, "
                "dataset/samples/album1)",
                "revision": "db6ae80",
                "license": "none stated upstream: evaluation inside this project only, do not redistribute",
                "citation": (
                    "Tianyi Xu, Rong Shan, Junjie Wu, et al. PhotoBench: Beyond Visual Matching Towards "
                    "Personalized Intent-Driven Photo Retrieval."
                ),
                "fully_judged": True,
            }
        ),
    }
)


def registry() -> Registry[_Spec]:
    """A fresh registry of the built-in names (built on each call: no module state)."""
    reg: Registry[_Spec] = Registry("dataset")
    for spec in _SPECS:
        reg.register(spec.name, spec, spec.help)
    return reg


def list_datasets(settings: Settings | None = None) -> list[DatasetInfo]:
    """The registered names, with whether each can be loaded now (never raises)."""
    settings = settings or Settings.from_env()
    root = settings.data_root
    out = []
    for spec in _SPECS:
        if spec.embedded:
            available = (EMBEDDED_ROOT / spec.location.removeprefix("embedded:")).is_dir()
        else:
            available = root is not None and (root / spec.location).is_dir()
        how = None if available else how_to_get(spec, root)
        out.append(DatasetInfo(spec.name, spec.help, spec.lang, spec.location, available, how))
    return out


def how_to_get(spec: _Spec, root: Path | None) -> str:
    """Where a registered dataset's files go and where they come from, on one line."""
    source = _PROVENANCE[spec.options["source"]]
    if root is None:
        where = (f"${DATA_ENV}/{spec.location} ({DATA_ENV} is not set and ../shared/data does not exist: "
                 f"set {DATA_ENV} to the folder that holds {spec.location.split('/')[0]}/)")
    else:
        where = f"{root / spec.location} (${DATA_ENV}/{spec.location})"
    return f"put {source['files']} in {where}; from {source['source']}, license: {source['license']}"


def dataset_names() -> list[str]:
    return [s.name for s in _SPECS]


# --------------------------------------------------------------------------- loading


def load_dataset(
    name_or_path: str | Path,
    settings: Settings | None = None,
    *,
    lang: str | None = None,
    split: str | None = None,
    types_from: str | Path | None = None,
) -> Dataset:
    """Load a registered dataset by name, a folder in a known format by path, or an ir_datasets dataset.

    Registered names (``finegrain list datasets``) live under the data root, ``$FINEGRAIN_DATA``; the
    embedded caption sets ship with the package. A folder's format (CapRetrieval, BEIR/MTEB, PhotoBench)
    is detected from its files. Types are never borrowed silently: a CapRetrieval folder without a
    ``types.json`` stays untyped unless ``types_from`` names the folder whose types to use.

    Args:
        name_or_path: A registered name (``embedded/captions-en``, ``capretrieval/zh``), a folder, or
            ``irds:ID`` for an ir_datasets dataset already on disk.
        settings: Where the data root is (default: from the environment).
        lang: The query language of a PhotoBench album (``en`` or ``zh``); for other folders it overrides
            the detected language; with a registered name it must be that dataset's language.
        split: The qrels split of a BEIR folder (``qrels/<split>.tsv``).
        types_from: A CapRetrieval folder whose ``types.json`` types this folder's queries (same ids).

    Returns:
        A frozen ``Dataset``: ``corpus``, ``queries`` (with their types) and ``qrels``, and its metadata.

    Raises:
        UnknownNameError: An unknown name (with near names).
        FinegrainError: A registered name whose folder is missing (saying where its files go and where
            they come from), a missing data root, a file where a folder was expected, or a language or
            split the dataset does not have.

    Examples:
        >>> from finegrain import load_dataset
        >>> ds = load_dataset("embedded/captions-en")
        >>> len(ds.corpus), len(ds.queries)
        (80, 37)
    """
    settings = settings or Settings.from_env()
    text = str(name_or_path)
    if not isinstance(name_or_path, Path) and text.startswith("irds:"):  # any ir_datasets dataset on disk

        irds: Dataset = load_irds(text[len(PREFIX):], lang=lang)
        return irds
    reg = registry()
    if not isinstance(name_or_path, Path) and text in reg:
        spec = reg.get(text)
        if lang is not None and parse_lang(lang) != spec.lang:
            raise FinegrainError(
                f"dataset {spec.name!r} is in {spec.lang!r}, not {lang!r}", _lang_hint(spec.name, parse_lang(lang))
            )
        if split is not None and not spec.is_beir:
            raise _not_beir(spec.name, split)
        return spec.load(settings, split)
    path = Path(text).expanduser()
    if path.is_dir():
        return load_folder(path, lang=lang, split=split, types_from=types_from)
    if path.exists():
        raise FinegrainError(f"{text!r} is a file; a dataset is a folder or a registered name", "give the folder")
    if isinstance(name_or_path, Path) or text.startswith(("/", "./", "../", "~", ".\\")):
        raise FinegrainError(f"no dataset folder {text!r}", "check the path, or give a registered name")
    raise UnknownNameError("dataset", text, reg.names())


def load_folder(
    folder: str | Path, *, lang: str | None = None, split: str | None = None, types_from: str | Path | None = None
) -> Dataset:
    """Load a folder whose format is detected from its files (see the module docstring)."""
    path = Path(folder).expanduser()
    fmt = detect_format(path)
    if fmt is None:
        names = ", ".join(sorted(p.name for p in path.iterdir())[:12]) if path.is_dir() else ""
        raise FinegrainError(
            f"{str(path)!r} is not a dataset folder in a known format (it holds: {names or 'nothing'})",
            "CapRetrieval needs candidates.jsonl + queries.jsonl; BEIR needs corpus.jsonl + queries.jsonl "
            "+ qrels.tsv or qrels/; PhotoBench needs metadata.json + *_query.json",
        )
    name = str(path)
    if split is not None and fmt != "beir":
        raise _not_beir(str(path), split, fmt)
    if types_from is not None and fmt != "capretrieval":
        raise FinegrainError(f"types_from applies to CapRetrieval folders; {str(path)!r} is {fmt}", "leave it out")
    if fmt == "capretrieval":
        source = None
        if types_from is not None:
            source = Path(types_from).expanduser()
            if not (source / "types.json").is_file() or not (source / "queries.jsonl").is_file():
                raise FinegrainError(
                    f"types_from {str(source)!r} is not a CapRetrieval folder with types.json and queries.jsonl",
                    "give the folder whose types.json to use",
                )
        return _load_capretrieval(name, path, lang, None, source)
    if fmt == "beir":
        return _load_beir(name, path, lang, split)
    return _load_photobench(name, path, parse_lang(lang) if lang else "en")


def detect_format(folder: Path) -> str | None:
    """``"capretrieval"``, ``"beir"``, ``"photobench"`` or None, from the files in ``folder``."""
    if not folder.is_dir():
        return None

    def has(stem: str) -> bool:
        return (folder / stem).is_file() or (folder / f"{stem}.gz").is_file()

    if (folder / "candidates.jsonl").is_file() and (folder / "queries.jsonl").is_file():
        return "capretrieval"
    if has("corpus.jsonl") and has("queries.jsonl") and (
        (folder / "qrels.tsv").is_file() or (folder / "qrels").is_dir()
    ):
        return "beir"
    if (folder / "metadata.json").is_file() and any(folder.glob("*_query.json")):
        return "photobench"
    return None


# --------------------------------------------------------------------------- format loaders


def _load_capretrieval_spec(spec: _Spec, folder: Path, settings: Settings) -> Dataset:
    types_from = spec.options.get("types_from")
    source_folder = None
    if types_from:
        candidate = settings.require_data_root() / types_from
        if (candidate / "types.json").is_file():
            source_folder = candidate
    return _load_capretrieval(spec.name, folder, spec.lang, _spec_meta(spec), source_folder)


def _load_capretrieval(
    name: str, folder: Path, lang: str | None, meta: dict[str, Any] | None, types_from: Path | None
) -> Dataset:
    info: dict[str, Any] = {"source": str(folder), "license": "unknown", "citation": "", "fully_judged": True}
    info.update(meta or {})
    corpus, queries, qrels = read_capretrieval(folder, types={})
    assignment = None
    if (folder / TYPES).is_file():
        assignment = read_types(folder / TYPES, queries)
    elif types_from is not None:
        assignment = type_assignment(types_from / TYPES, types_from / "queries.jsonl")
        info["types_from"] = str(types_from / TYPES)
    if assignment is not None:
        queries = apply_types(queries, assignment)
        info["types_file"] = assignment.path
        info["types_unmatched"] = tuple(f"{t}: {e}" for t, e in assignment.unmatched)
    info["typed_queries"] = sum(1 for q in queries.values() if q.type is not None)
    lang = parse_lang(lang) if lang else lang_of_folder(folder, queries)
    return make_dataset(name, "capretrieval", folder, corpus, queries, qrels, lang, info)


def _load_beir_spec(spec: _Spec, folder: Path, settings: Settings, split: str | None = None) -> Dataset:
    return _load_beir(spec.name, folder, spec.lang, split, _spec_meta(spec))


def _load_beir(
    name: str, folder: Path, lang: str | None, split: str | None, meta: dict[str, Any] | None = None
) -> Dataset:
    corpus, queries, qrels = read_beir(folder, split)
    info: dict[str, Any] = {"source": str(folder), "license": "unknown", "citation": "", "fully_judged": False}
    info.update(meta or {})
    chosen = qrels_path(folder, split)
    info["qrels_file"] = str(chosen)
    present = [*(["qrels.tsv"] if (folder / "qrels.tsv").is_file() else []), *qrels_splits(folder)]
    if split is None and len(present) > 1:  # the reader chose one: say which, and how to choose
        used = chosen.name if chosen.parent == folder else chosen.stem
        info["qrels_choice"] = (f"{name} has qrels {', '.join(present)}: scored {used} "
                                "(choose one with --split, or split= in Python)")
    lang = parse_lang(lang) if lang else lang_of_folder(folder, queries)
    return make_dataset(name, "beir", folder, corpus, queries, qrels, lang, info)


def _load_photobench_spec(spec: _Spec, folder: Path, settings: Settings) -> Dataset:
    return _load_photobench(spec.name, folder, spec.lang, _spec_meta(spec))


def _load_photobench(name: str, folder: Path, lang: str, meta: dict[str, Any] | None = None) -> Dataset:
    album = read_album(folder)
    queries, qrels = album.queries_and_qrels(lang)
    info: dict[str, Any] = {"source": str(folder), "license": "unknown", "citation": "", "fully_judged": True}
    info.update(meta or {})
    info.update(
        {
            "album": album.name,
            "photos": len(album.photos),
            "queries_total": len(album.queries),
            "queries_with_ground_truth": len(album.judged_queries),
            "query_type": "PhotoBench Source label (V, M, F, VM, VF, MF, VMF)",
            "note": "documents have no text (no captions or images are public); metadata and faces are in "
            "each document's meta",
        }
    )
    return make_dataset(name, "photobench", folder, album.corpus(lang), queries, qrels, lang, info)


# --------------------------------------------------------------------------- helpers


def _not_beir(name: str, split: str, fmt: str | None = None) -> FinegrainError:
    return FinegrainError(f"split {split!r} chooses the qrels file of a BEIR dataset; {name!r} is "
                          + (f"a {fmt} folder" if fmt else "not one"), "leave the split out")


def _spec_meta(spec: _Spec) -> dict[str, Any]:
    """A registered dataset's provenance (source, license, citation, revision, ...) and its MTEB task name."""
    meta = dict(_PROVENANCE[spec.options["source"]])
    if "mteb_task" in spec.options:
        meta["mteb_task"] = spec.options["mteb_task"]
    return meta


def _lang_hint(name: str, lang: str) -> str:
    """Point to the registered twin of ``name`` in ``lang`` (capretrieval/zh -> capretrieval/en)."""
    base = _base_name(name)
    twins = [s.name for s in _SPECS if s.name != name and s.lang == lang and _base_name(s.name) == base]
    return f"use {twins[0]!r}" if twins else f"no {lang!r} version of this dataset is registered"


def _base_name(name: str) -> str:
    for suffix in ("/zh", "/en", "-zh", "-en"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name
