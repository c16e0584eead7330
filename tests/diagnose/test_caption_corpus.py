"""The caption-corpus protocol: metrics from ranks, averaging, ranking with ties, Flickr8k loaders."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from dense_fakes import BagOfWordsEncoder
from finegrain.diagnose.caption_corpus import (
    average_groups,
    build_caption_corpus,
    evaluate_vectors,
    per_query_metrics,
    qrels_for,
    rank_metrics,
    relevant_ranks,
    run_caption_corpus,
    top_k_run,
)
from finegrain.errors import DataFormatError, DuplicateIdError, FinegrainError
from finegrain.evaluate.evaluate import evaluate
from finegrain.io.flickr8k import (
    IMAGELESS,
    load_flickr8k,
    read_flickr8k_captions,
    read_flickr8k_split,
)
from finegrain.ranking import rank_docs

# --------------------------------------------------------------------------- metrics from ranks


def test_metrics_from_hand_computed_ranks() -> None:
    ranks = np.array([1, 2, 6, 11, 1])
    m = rank_metrics(ranks)
    assert m["recall@1"] == pytest.approx(2 / 5)
    assert m["recall@5"] == pytest.approx(3 / 5)
    assert m["recall@10"] == pytest.approx(4 / 5)
    assert m["mrr@5"] == pytest.approx((1 + 1 / 2 + 0 + 0 + 1) / 5)
    assert m["mrr@10"] == pytest.approx((1 + 1 / 2 + 1 / 6 + 0 + 1) / 5)
    assert m["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 6 + 1 / 11 + 1) / 5)
    assert m["median_rank"] == 2
    assert m["fail_rate@1"] == pytest.approx(3 / 5)
    # fails % is exactly 1 - R@1 (the paper's Table 6 columns obey this too: 0.4354 -> 56.46 %)
    assert m["fail_rate@1"] == pytest.approx(1 - m["recall@1"])


def test_median_of_even_count_and_bad_ranks() -> None:
    assert rank_metrics(np.array([1, 2, 3, 10]))["median_rank"] == 2.5
    pq = per_query_metrics(np.array([3]))
    assert pq["mrr@5"][0] == pytest.approx(1 / 3) and pq["recall@1"][0] == 0.0
    with pytest.raises(FinegrainError, match="1-based"):
        per_query_metrics(np.array([0, 1]))


# --------------------------------------------------------------------------- texts and averaging


def test_build_caption_corpus_splits_query_from_rest() -> None:
    items = [("a", ["a0", "a1", "a2"]), ("b", ["b0", "b1"])]
    c = build_caption_corpus(items)
    assert c.queries == ("a0", "b0")
    assert c.group(0) == ("a1", "a2") and c.group(1) == ("b1",)
    c2 = build_caption_corpus(items, query_index=1)
    assert c2.queries == ("a1", "b1") and c2.group(0) == ("a0", "a2") and c2.group(1) == ("b0",)
    last = build_caption_corpus(items, query_index=-1)
    assert last.queries == ("a2", "b1")


@pytest.mark.parametrize(
    "items, index, match",
    [
        ([("a", ["only one"])], 0, "needs a query and at least one"),
        ([("a", ["x", "y"]), ("b", ["x", "y", "z"])], 2, "has no text #2"),
        ([("a", ["x", "y"]), ("a", ["u", "v"])], 0, "twice"),
        ([], 0, "no items"),
    ],
)
def test_build_caption_corpus_errors(items, index, match) -> None:
    with pytest.raises(FinegrainError, match=match):
        build_caption_corpus(items, query_index=index)


def test_average_groups_mean_then_renormalise() -> None:
    v = np.array([[1, 0], [0, 1], [0.6, 0.8]], dtype=np.float32)
    off = np.array([0, 2, 3])
    plain = average_groups(v, off, renormalise=False)
    np.testing.assert_allclose(plain, [[0.5, 0.5], [0.6, 0.8]], atol=1e-7)
    unit = average_groups(v, off)
    s = 1 / math.sqrt(2)
    np.testing.assert_allclose(unit, [[s, s], [0.6, 0.8]], atol=1e-7)
    with pytest.raises(FinegrainError, match="non-empty"):
        average_groups(v, np.array([0, 0, 3]))
    with pytest.raises(FinegrainError, match="zero vector"):
        average_groups(np.array([[1, 0], [-1, 0]], dtype=np.float32), np.array([0, 2]))


def test_renormalising_changes_ranking_like_cosine_does() -> None:
    # entry A = mean of two orthogonal vectors (norm 0.71), entry B one vector at 60 degrees to the query:
    # by cosine A wins (0.71 > 0.5); by the raw mean inner product B wins (0.5 > 0.35).
    q = np.array([[1.0, 1.0, 0.0]], dtype=np.float32) / np.sqrt(2)
    a = np.array([[1, 0, 0], [0, 1, 0]], dtype=np.float32)
    b = np.array([[0.5, 0.5, np.sqrt(0.5)]], dtype=np.float32)
    corpus = build_caption_corpus([("A", ["qa", "a1", "a2"]), ("B", ["qb", "b1"])])
    sv = np.vstack([a, b])
    qv = np.vstack([q, q])
    cos = evaluate_vectors(corpus, qv, sv)
    raw = evaluate_vectors(corpus, qv, sv, renormalise=False)
    assert cos.ranks.tolist() == [1, 2] and raw.ranks.tolist() == [2, 1]


# --------------------------------------------------------------------------- ranks, ties, the Run view


def _brute_ranks(scores: np.ndarray, ids: list[str]) -> tuple[list[int], list[str]]:
    ranks, tops = [], []
    for i, row in enumerate(scores):
        order = rank_docs({d: float(s) for d, s in zip(ids, row)})
        ranks.append(order.index(ids[i]) + 1)
        tops.append(order[0])
    return ranks, tops


def test_relevant_ranks_match_brute_force_sort_with_ties() -> None:
    rng = np.random.default_rng(7)
    n, dim = 40, 6
    # few distinct values -> many exact ties, which the one rule must break by id descending
    q = rng.integers(-2, 3, size=(n, dim)).astype(np.float32)
    c = rng.integers(-2, 3, size=(n, dim)).astype(np.float32)
    c[5] = c[6] = c[7]
    ids = [f"img{j:03d}" for j in rng.permutation(n)]
    ranks, top, rel_s, top_s = relevant_ranks(q, c, np.arange(n), ids, block=7)
    want_ranks, want_tops = _brute_ranks(q @ c.T, ids)
    assert ranks.tolist() == want_ranks
    assert [ids[t] for t in top] == want_tops
    np.testing.assert_allclose(rel_s, np.diag(q @ c.T))
    np.testing.assert_allclose(top_s, (q @ c.T).max(axis=1))


def test_metrics_agree_with_finegrain_evaluate_on_the_full_run() -> None:
    rng = np.random.default_rng(3)
    n, dim = 60, 8
    q = rng.normal(size=(n, dim)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    c = q + rng.normal(scale=0.9, size=(n, dim)).astype(np.float32)
    c /= np.linalg.norm(c, axis=1, keepdims=True)
    ids = [f"i{j}" for j in range(n)]
    ranks, *_ = relevant_ranks(q, c, np.arange(n), ids)
    mine = rank_metrics(ranks)
    assert 0 < mine["recall@1"] < 1, "the fixture should have failures and successes"
    run = top_k_run(q, c, ids, k=None)
    assert run.n_entries == n * n
    ev = evaluate(qrels_for(ids), run, list(mine)).aggregate()
    for key, value in mine.items():
        assert ev[key] == pytest.approx(value, abs=1e-12), key
    cut = top_k_run(q, c, ids, k=5)
    assert all(len(cut[qid]) == 5 for qid in ids)
    assert evaluate(qrels_for(ids), cut, ["mrr@5"]).aggregate()["mrr@5"] == pytest.approx(mine["mrr@5"])


# --------------------------------------------------------------------------- end to end with a fake encoder


def test_end_to_end_with_bag_of_words_encoder() -> None:
    items = [
        ("dog", ["a dog runs on grass", "dog running grass", "brown dog on a lawn", "dog plays"]),
        ("surf", ["a man surfs a wave", "surfer riding wave", "man on surfboard in the sea"]),
        ("bike", ["a girl rides a bike", "girl on bicycle", "child riding a bike down the street"]),
        ("snow", ["skier in the snow", "a man skiing down snow", "snowy mountain skier"]),
    ]
    enc = BagOfWordsEncoder(dim=512)
    corpus = build_caption_corpus(items)
    res = run_caption_corpus(corpus, enc)
    kinds = [k for k, _ in enc.calls]
    assert kinds == ["query", "passage"]
    assert enc.calls[0][1] == [t[0] for _, t in items]
    assert enc.calls[1][1] == [s for _, t in items for s in t[1:]]
    # independent computation: mean of the bag-of-words rows, cosine, argsort
    qv = enc.encode([t[0] for _, t in items], kind="query")
    groups = [enc.encode(list(t[1:]), kind="passage").mean(axis=0) for _, t in items]
    entries = np.array([g / np.linalg.norm(g) for g in groups])
    s = qv @ entries.T
    want = [int((s[i] > s[i, i]).sum()) + 1 for i in range(len(items))]
    assert res.ranks.tolist() == want
    assert res.metrics["recall@1"] == pytest.approx(np.mean(np.array(want) == 1))
    assert res.n_failures == sum(r != 1 for r in want)
    assert res.timings["encode_seconds"] >= 0 and res.encoder["dim"] == 512


def test_failures_name_the_retrieved_item() -> None:
    # query of "b" is identical to "a"'s corpus text: "b" fails, retrieving "a"
    items = [("a", ["red car", "red car"]), ("b", ["red car", "blue boat"])]
    res = run_caption_corpus(build_caption_corpus(items), BagOfWordsEncoder(dim=64))
    assert res.ranks.tolist() == [1, 2]
    (f,) = res.failures()
    assert f["query_id"] == "b" and f["ground_truth"] == "b" and f["retrieved"] == "a" and f["rank"] == 2
    assert f["score_retrieved"] > f["score_ground_truth"]


# --------------------------------------------------------------------------- Flickr8k loaders


def test_flickr8k_real_files(data_root: Path) -> None:
    folder = data_root / "flickr8k"
    everything = load_flickr8k(folder, "all")
    assert len(everything.images) == 8091
    assert all(len(c) == 5 for c in everything.captions.values())
    assert sum(len(c) for c in everything.captions.values()) == 40455
    assert not IMAGELESS & set(everything.images)
    assert everything.source.renamed == ((6731, "2258277193_586949ec62.jpg.1", "2258277193_586949ec62.jpg"),)
    assert len(everything.source.images) == 8092 and everything.source.n_captions == 40460
    sizes = {}
    for split in ("test", "dev", "train"):
        s = load_flickr8k(folder, split)
        sizes[split] = set(s.images)
        assert all(len(c) == 5 for c in s.captions.values())
    assert len(sizes["test"]) == 1000 and len(sizes["dev"]) == 1000 and len(sizes["train"]) == 6000
    assert not (sizes["test"] & sizes["dev"]) and not (sizes["test"] & sizes["train"])
    test = load_flickr8k(folder, "test")
    first = (folder / "Flickr_8k.testImages.txt").read_text().split()[0]
    assert test.images[0] == first
    line = next(ln for ln in (folder / "Flickr8k.token.txt").read_text().splitlines() if ln.startswith(first + "#0"))
    assert test.captions[first][0] == line.split("\t", 1)[1].strip()


def _write(p: Path, text: str) -> Path:
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize(
    "text, line, expected",
    [
        ("a.jpg#0\tone\na.jpg#1 two without tab\n", 2, "TAB"),
        ("a.jpg#0\tone\na.jpg-1\tbad id\n", 2, "caption id"),
        ("a.jpg#0\tone\na.jpg#x\tbad number\n", 2, "caption id"),
        ("a.jpg#0\tone\na.jpg#1\t   \n", 2, "a caption after the TAB"),
        ("a.jpg#0\tone\nb.jpg#0\tx\na.jpg#0\tagain\n", 3, "first at line 1"),
        ("a.jpg#0\tone\na.jpg#2\tthree\n", 1, "no caption #1"),
    ],
)
def test_token_file_errors_name_the_line(tmp_path: Path, text: str, line: int, expected: str) -> None:
    path = _write(tmp_path / "Flickr8k.token.txt", text)
    with pytest.raises(DataFormatError) as e:
        read_flickr8k_captions(path)
    assert e.value.line == line
    assert f"{path}:{line}" in str(e.value) and expected in str(e.value)


def test_split_file_errors(tmp_path: Path) -> None:
    caps = read_flickr8k_captions(_write(tmp_path / "t.txt", "a.jpg#0\tx\na.jpg#1\ty\n"))
    assert caps.captions["a.jpg"] == ("x", "y")
    with pytest.raises(DataFormatError, match=r"split.txt:2: expected an image with captions"):
        read_flickr8k_split(_write(tmp_path / "split.txt", "a.jpg\nzzz.jpg\n"), caps)
    with pytest.raises(DuplicateIdError):
        read_flickr8k_split(_write(tmp_path / "dup.txt", "a.jpg\na.jpg\n"), caps)
    with pytest.raises(FinegrainError, match="unknown Flickr8k split"):
        load_flickr8k(tmp_path, "val")
