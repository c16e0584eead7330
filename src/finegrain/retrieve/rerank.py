"""Rerankers and retrieve-then-rerank: the second stage of DuReader-retrieval's pipeline.

DuReader-retrieval (Qiu et al., 2022, Sec. 3.1) evaluates a two-stage system:
a first-stage retriever (BM25, or a dual encoder) returns the top N passages
(N=50 there) and a cross-encoder, which reads query and passage together,
re-scores only those. Here:

* :class:`Reranker` is the typed boundary (``score(query, passages)``);
* :class:`CrossEncoderReranker` adapts any local Hugging Face sequence
  classification model (a directory written by ``save_pretrained``) to it;
  it never downloads (``local_files_only=True``); needs the ``rerank`` extra;
* :func:`rerank` is the pure pipeline step on a :class:`~finegrain.types.Run`;
* :class:`RerankRetriever` (registry name ``rerank``) is the adapter from a
  first-stage Retriever + a Reranker to a Retriever.

**What happens beyond the depth.** Only the top ``depth`` documents of each
query (by the one ranking rule) are reranked. With ``rest="append"`` (the
default) the documents below keep their first-stage order underneath all
reranked ones, so recall at cut-offs beyond ``depth`` stays that of the first
stage; they get scores strictly below the lowest reranked score ``floor`` of
the query (``floor - s, floor - 2s, ...`` in first-stage order, with
``s = max(1, |floor|)``), so the scores of the tail are placeholders that only
encode order. ``rest="drop"`` returns the reranked top ``depth`` only.
Equal reranker scores are ordered by the Run rule (document id descending).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol, runtime_checkable

import numpy as np

from finegrain._lazy import require
from finegrain.errors import FinegrainError
from finegrain.retrieve.base import Retriever
from finegrain.retrieve.encoders.base import local_model_folder
from finegrain.types import Corpus, Queries, Run

RESTS: tuple[str, ...] = ("append", "drop")


@runtime_checkable
class Reranker(Protocol):
    """Scores passages for one query; a higher score means more relevant.

    ``score`` returns one float per passage, in the order given (an empty list
    gives an empty array). ``name`` and ``config()`` are recorded as provenance.
    """

    name: str

    def config(self) -> dict[str, Any]: ...

    def score(self, query: str, passages: list[str]) -> np.ndarray: ...


# --------------------------------------------------------------------------- cross-encoder adapter


@dataclass(frozen=True)
class CrossEncoderReranker:
    """A local cross-encoder: ``AutoModelForSequenceClassification`` over ``(query, passage)`` pairs.

    ``model_path`` is a directory with a model and its tokenizer saved by
    ``save_pretrained``. The score of a pair is the model's logit when it has
    one label, and ``logit[1] - logit[0]`` (the log-odds of label 1,
    "relevant") when it has two. Pairs are tokenized together and truncated to
    ``max_length`` tokens (the longer side first); ``batch_size`` pairs go
    through the model at once, in eval mode without gradients, so scores are
    deterministic on a given machine. The model is loaded on the first call to
    :meth:`score`.
    """

    model_path: str
    max_length: int = 512
    batch_size: int = 32
    device: str = "cpu"
    name: str = "cross-encoder"

    def __post_init__(self) -> None:
        object.__setattr__(self, "model_path", str(self.model_path))
        local_model_folder(self.model_path, what="cross-encoder", markers=("config.json",),
                           saved_by="model.save_pretrained() and tokenizer.save_pretrained()",
                           example="--set model=/path/to/cross-encoder")
        for key in ("max_length", "batch_size"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise FinegrainError(f"{key}={v!r} is not a whole number >= 1", f"e.g. {key}=32")
        _backend()  # fail now, not after the first stage ran, when torch/transformers are missing

    def config(self) -> dict[str, Any]:
        cfg: dict[str, Any] = {
            "model_path": self.model_path,
            "max_length": self.max_length,
            "batch_size": self.batch_size,
            "device": self.device,
        }
        if "_loaded" in self.__dict__:  # what was actually run, once known
            model = self._loaded[1]
            cfg["architecture"] = type(model).__name__
            cfg["num_labels"] = int(model.config.num_labels)
        return cfg

    @cached_property
    def _loaded(self) -> tuple[Any, Any]:
        torch, transformers = _backend()
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(self.model_path, local_files_only=True)
            model = transformers.AutoModelForSequenceClassification.from_pretrained(
                self.model_path, local_files_only=True
            )
        except (OSError, ValueError) as e:
            raise FinegrainError(
                f"cannot load a cross-encoder from {self.model_path!r}: {str(e).splitlines()[0]}",
                "the folder must hold a sequence-classification model and its tokenizer (save_pretrained)",
            ) from None
        if int(model.config.num_labels) not in (1, 2):
            raise FinegrainError(
                f"the model in {self.model_path!r} has {model.config.num_labels} labels",
                "a cross-encoder reranker needs num_labels=1 (a relevance logit) or 2 (not relevant / relevant)",
            )
        model.to(torch.device(self.device))
        model.eval()
        return tokenizer, model

    def score(self, query: str, passages: list[str]) -> np.ndarray:
        if not passages:
            return np.empty(0, dtype=np.float64)
        torch, _ = _backend()
        tokenizer, model = self._loaded
        out: list[np.ndarray] = []
        with torch.inference_mode():
            for i in range(0, len(passages), self.batch_size):
                chunk = list(passages[i : i + self.batch_size])
                enc = tokenizer(
                    [query] * len(chunk),
                    chunk,
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(torch.device(self.device))
                logits = model(**enc).logits.float()
                s = logits[:, 0] if logits.shape[1] == 1 else logits[:, 1] - logits[:, 0]
                out.append(s.cpu().numpy().astype(np.float64))
        return np.concatenate(out)


def _backend() -> tuple[Any, Any]:
    torch = require("torch", "rerank")
    transformers = require("transformers", "rerank")
    return torch, transformers


# --------------------------------------------------------------------------- the pipeline step


def rerank(
    run: Run,
    queries: Queries,
    corpus: Corpus,
    reranker: Reranker,
    *,
    depth: int = 100,
    rest: str = "append",
    name: str | None = None,
    show_progress: bool = False,
) -> Run:
    """Rerank the top ``depth`` of every query of ``run`` with ``reranker``.

    Queries keep their order; a query with no results stays empty. The text of
    a document is ``title + " " + text`` when it has a title (as for BM25).
    ``rest`` says what happens to the documents below ``depth`` (module
    docstring). Every query of ``run`` must be in ``queries`` and every
    document in ``corpus``.
    """
    from tqdm.auto import tqdm

    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise FinegrainError(f"depth={depth!r} is not a whole number >= 1", "e.g. depth=100")
    if rest not in RESTS:
        raise FinegrainError(f"rest={rest!r} is not known", f"use one of {', '.join(map(repr, RESTS))}")
    order, offsets, vocab = run.order, run.offsets, run.vocab
    codes = run.doc_codes
    new_offsets = [0]
    new_codes: list[np.ndarray] = []
    new_values: list[np.ndarray] = []
    for i, qid in enumerate(tqdm(run.qids, desc="rerank", unit="query", disable=not show_progress, leave=False)):
        ranked = codes[order[offsets[i] : offsets[i + 1]]]
        head = ranked[:depth]
        if len(head) == 0:
            new_offsets.append(new_offsets[-1])
            continue
        if qid not in queries:
            raise FinegrainError(f"query {qid!r} of run {run.name!r} is not among the queries", "rerank a run of the same dataset")
        texts = [_doc_text(corpus, vocab[c], run.name) for c in head.tolist()]
        scores = np.asarray(reranker.score(queries[qid].text, texts), dtype=np.float64).reshape(-1)
        if len(scores) != len(head) or not np.all(np.isfinite(scores)):
            raise FinegrainError(
                f"reranker {reranker.name!r} gave {len(scores)} scores (finite: {bool(np.all(np.isfinite(scores)))}) "
                f"for {len(head)} passages of query {qid!r}",
                "a Reranker returns one finite score per passage",
            )
        tail = ranked[depth:] if rest == "append" else ranked[:0]
        new_codes += [head, tail]
        floor = float(scores.min())  # the tail goes strictly below it, in first-stage order
        new_values += [scores, floor - max(1.0, abs(floor)) * np.arange(1, len(tail) + 1, dtype=np.float64)]
        new_offsets.append(new_offsets[-1] + len(head) + len(tail))
    return Run(
        run.qids,
        np.asarray(new_offsets, dtype=np.int64),
        np.concatenate(new_codes) if new_codes else np.empty(0, dtype=np.int64),
        vocab,
        np.concatenate(new_values) if new_values else np.empty(0, dtype=np.float64),
        name=name or f"{run.name}>>{reranker.name}",
        check=False,
    )


def _doc_text(corpus: Corpus, doc_id: str, run_name: str) -> str:
    try:
        d = corpus[doc_id]
    except KeyError:
        raise FinegrainError(
            f"document {doc_id!r} of run {run_name!r} is not in the corpus", "rerank a run of the same dataset"
        ) from None
    return f"{d.title} {d.text}" if d.title else d.text


# --------------------------------------------------------------------------- the retriever adapter


@dataclass(frozen=True)
class RerankRetriever:
    """A :class:`~finegrain.retrieve.base.Retriever`: ``first_stage`` then :func:`rerank` by ``reranker``.

    The first stage retrieves its own cut (or ``top_k``, if larger than
    ``depth``) when ``rest="append"``, its top ``depth`` when ``rest="drop"``;
    the reranked run is cut to ``top_k`` when given.
    """

    first_stage: Retriever
    reranker: Reranker
    depth: int = 100
    rest: str = "append"
    name: str = "rerank"

    def __post_init__(self) -> None:
        if not isinstance(self.first_stage, Retriever):
            raise FinegrainError(f"first stage {self.first_stage!r} is not a Retriever", "pass a retriever or a name")
        if not isinstance(self.reranker, Reranker):
            raise FinegrainError(f"{self.reranker!r} is not a Reranker", "it needs name, config() and score()")
        if isinstance(self.depth, bool) or not isinstance(self.depth, int) or self.depth < 1:
            raise FinegrainError(f"depth={self.depth!r} is not a whole number >= 1", "e.g. depth=100")
        if self.rest not in RESTS:
            raise FinegrainError(f"rest={self.rest!r} is not known", f"use one of {', '.join(map(repr, RESTS))}")

    def config(self) -> dict[str, Any]:
        return {
            "depth": self.depth,
            "rest": self.rest,
            "first_stage": {"name": self.first_stage.name, **self.first_stage.config()},
            "reranker": {"name": self.reranker.name, **self.reranker.config()},
        }

    def retrieve(
        self, corpus: Corpus, queries: Queries, *, lang: str, top_k: int | None, show_progress: bool = True
    ) -> Run:
        if self.rest == "drop":
            first_k: int | None = self.depth
        else:
            first_k = None if top_k is None else max(top_k, self.depth)
        first = self.first_stage.retrieve(corpus, queries, lang=lang, top_k=first_k, show_progress=show_progress)
        out = rerank(
            first, queries, corpus, self.reranker, depth=self.depth, rest=self.rest, name=self.name,
            show_progress=show_progress,
        )
        return out.cut(top_k) if top_k is not None else out


def rerank_retriever(
    model: str | None = None,
    first_stage: str = "bm25-okapi",
    depth: int = 100,
    **opts: Any,
) -> RerankRetriever:
    """``rerank``: ``--set model=PATH`` (required), ``first_stage=bm25-okapi``, ``depth=100``, ``rest=append``.

    Cross-encoder options: ``max_length=512``, ``batch_size=32``, ``device=cpu``.
    ``FIRST_STAGE.KEY=VALUE`` passes an option to the first stage, e.g.
    ``--set bm25-okapi.k1=1.2`` or, with ``first_stage=hybrid``, ``--set hybrid.fusion=convex``.
    """
    from finegrain.retrieve.hybrid import split_options
    from finegrain.retrieve.registry import RETRIEVERS, get_retriever

    given = {"first_stage": first_stage, "depth": depth, **opts, **({"model": model} if model is not None else {})}
    checked = RETRIEVERS.check("rerank", given)
    first_stage, depth, model = checked.pop("first_stage"), checked.pop("depth"), checked.pop("model", None)
    own, nested = split_options(checked)
    ce_keys = ("max_length", "batch_size", "device")
    stray = sorted(set(nested) - {first_stage})
    if stray:
        raise FinegrainError(
            f"option {stray[0]}.{next(iter(nested[stray[0]]))} names no stage of this reranker",
            f"the first stage is {first_stage!r}: write {first_stage}.KEY=VALUE",
        )
    if model is None:
        raise FinegrainError(
            "retriever 'rerank' needs a local cross-encoder model folder",
            "pass it with --set model=/path/to/model (a folder saved with save_pretrained)",
        )
    if first_stage == "rerank":
        raise FinegrainError("first_stage='rerank' would rerank a reranking", "use a first-stage retriever such as bm25-okapi")
    reranker = CrossEncoderReranker(str(model), **{k: own[k] for k in ce_keys if k in own})
    return RerankRetriever(
        first_stage=get_retriever(str(first_stage), **nested.get(first_stage, {})),
        reranker=reranker,
        depth=depth,
        rest=own.get("rest", "append"),
    )


__all__ = [
    "CrossEncoderReranker",
    "Reranker",
    "RerankRetriever",
    "rerank",
    "rerank_retriever",
]
