"""The BM25 retrievers behind the names ``bm25-okapi`` and ``bm25``: tokenize by language, index, search.

``bm25-okapi`` reproduces the CapRetrieval paper's BM25 baseline (Xu et al.,
2025, Appx. C; reference code github.com/lxucs/CapRetrieval ``run.py``):
rank_bm25's BM25Okapi (k1=1.5, b=0.75, epsilon=0.25) over jieba tokens
(:meth:`~finegrain.text.JiebaTokenizer.capretrieval`), every
document scoring >= 1e-3, sorted by score with a stable sort, so that equal
scores keep corpus order (``ties="index-order"``, see
:meth:`finegrain.retrieve.bm25.BM25.search`). With finegrain's own tie rule
(document id descending) the figures move slightly, at nDCG@1 most
(``docs/results/retrieval.md``).

``bm25`` is bm25s' default scoring (lucene variant, k1=1.5, b=0.75; finegrain's
:class:`~finegrain.retrieve.bm25.BM25` computes the same scores in float64) with
the ``default`` tokenizers and the top 1000 documents per query.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from tqdm.auto import tqdm

from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.retrieve.base import ShardForm
from finegrain.retrieve.bm25 import BM25, TIES, BM25Params, Ties, Variant, finite
from finegrain.retrieve.registry import RETRIEVERS
from finegrain.text.tokenizer import PRESETS, get_tokenizer
from finegrain.types import Corpus, Queries, Run

_TOKENIZE_CHUNK = 4096


@dataclass(frozen=True)
class BM25Retriever:
    """A :class:`~finegrain.retrieve.base.Retriever` over :class:`~finegrain.retrieve.bm25.BM25`.

    ``threshold`` keeps documents scoring >= it (None: no threshold);
    ``default_k`` is the cut used when ``retrieve`` is given ``top_k=None``.
    ``tokenizer`` names a preset of :func:`~finegrain.text.get_tokenizer`.
    A document's text is its ``text``, or ``title + " " + text`` when it has a title.
    """

    shard_form: ClassVar[ShardForm | None] = "bm25"
    name: str = "bm25-okapi"
    variant: Variant = "okapi"
    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25
    threshold: float | None = 1e-3
    default_k: int | None = None
    ties: Ties = "index-order"
    tokenizer: str = "capretrieval"

    def __post_init__(self) -> None:
        BM25Params(self.variant, self.k1, self.b, self.epsilon)  # validates
        if self.threshold is not None and not finite(self.threshold):
            raise FinegrainError(f"threshold={self.threshold!r} is not a finite number", "pass threshold=1e-3 or None")
        if self.default_k is not None and (
            isinstance(self.default_k, bool) or not isinstance(self.default_k, int) or self.default_k < 1
        ):
            raise FinegrainError(f"default_k={self.default_k!r} is not a whole number >= 1", "pass default_k=1000 or None")
        if self.ties not in TIES:
            raise FinegrainError(f"unknown ties rule {self.ties!r}", f"use one of {', '.join(repr(t) for t in TIES)}")
        if self.tokenizer not in PRESETS:
            raise UnknownNameError("tokenizer preset", self.tokenizer, PRESETS)
        if self.threshold is None and self.default_k is None:
            raise FinegrainError(
                f"retriever {self.name!r} has neither a threshold nor a default_k",
                "set threshold=1e-3 or default_k=1000",
            )

    def config(self) -> dict[str, Any]:
        """Parameters and the tokenizer of each language, JSON-able, for provenance."""
        cfg = asdict(self)
        cfg["tokenizers"] = {lang: get_tokenizer(lang, self.tokenizer).config() for lang in ("zh", "en")}
        return cfg

    def retrieve(
        self, corpus: Corpus, queries: Queries, *, lang: str, top_k: int | None, show_progress: bool = True
    ) -> Run:
        bm = self.build_index(corpus, lang=lang, show_progress=show_progress)
        return bm.search(
            get_tokenizer(lang, self.tokenizer).queries(queries.texts),
            list(queries.ids),
            k=top_k if top_k is not None else self.default_k,
            threshold=self.threshold,
            ties=self.ties,
            name=self.name,
            show_progress=show_progress,
        )

    def build_index(self, corpus: Corpus, *, lang: str, show_progress: bool = True) -> BM25:
        """The BM25 index of ``corpus`` with this retriever's parameters and ``lang``'s tokenizer."""

        tok = get_tokenizer(lang, self.tokenizer)
        texts = [f"{d.title} {d.text}" if d.title else d.text for d in corpus.values()]
        doc_tokens: list[list[str]] = []
        with tqdm(total=len(texts), desc="BM25 tokenize", unit="doc", disable=not show_progress, leave=False) as bar:
            for i in range(0, len(texts), _TOKENIZE_CHUNK):
                chunk = texts[i : i + _TOKENIZE_CHUNK]
                doc_tokens.extend(tok.documents(chunk))
                bar.update(len(chunk))
        return BM25(self.variant, k1=self.k1, b=self.b, epsilon=self.epsilon, tokenizer=tok).index(doc_tokens, corpus.ids)


def okapi_retriever(**options: Any) -> BM25Retriever:
    """``bm25-okapi``: the CapRetrieval paper's BM25 (see the module docstring)."""
    return _make("bm25-okapi", {}, options)


def lucene_retriever(**options: Any) -> BM25Retriever:
    """``bm25``: bm25s' default BM25 (lucene, k1=1.5, b=0.75), ``default`` tokenizers, top 1000."""
    defaults = {"variant": "lucene", "threshold": None, "default_k": 1000, "ties": "doc-id", "tokenizer": "default"}
    return _make("bm25", defaults, options)


def _make(name: str, defaults: dict[str, Any], options: dict[str, Any]) -> BM25Retriever:
    return BM25Retriever(name=name, **{**defaults, **RETRIEVERS.check(name, options)})
