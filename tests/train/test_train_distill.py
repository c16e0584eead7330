"""``finegrain distill``: a teacher's ranking relabels generated pairs (positive, hard negatives, GIST filter).

The pure core (:func:`relabel`) is checked on hand-made rankings: the margin rule drops a candidate scoring
above the positive's score less the margin (both strategies, as sentence-transformers' GISTEmbedLoss states
them), negatives come only from the window, the source stays the positive within the top ``source_k`` and
gives way to the teacher's top-1 (or is dropped) beyond it, a query's other sources are never its
negatives. The driver and the CLI run BM25 as the teacher on a toy pool: a dataset pool makes the output
transductive, transductive input stays so, and ``finegrain train`` trains on the negatives written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_train_finetune import tiny_st  # noqa: F401 - the tiny random BERT fixture, shared
from typer.testing import CliRunner

from finegrain.cli.main import app, main
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.retrieve.registry import get_retriever
from finegrain.train.distill import DistillRule, Ranking, distill, relabel, teacher_queries
from finegrain.train.finetune import TrainConfig, train_encoder
from finegrain.train.finetune_data import Pair, read_pairs
from finegrain.types import Corpus, Document, Queries, Query

POOL = {f"p{i}": f"passage {i}" for i in range(12)}


def _pair(query: str, pid: str, line: int = 1) -> Pair:
    return Pair(query, POOL[pid], f"id:{pid}", "kw", line)


def _ranking(*entries: tuple[str, float]) -> Ranking:
    return Ranking(tuple(e[0] for e in entries), tuple(float(e[1]) for e in entries))


# ranks 1..8: the source p0 first (score 10), then candidates in falling order
RANKED = _ranking(("p0", 10), ("p1", 9.9), ("p2", 9.8), ("p3", 9.6), ("p4", 9.0), ("p5", 7.0), ("p6", 5.0),
                  ("p7", 1.0))


# --------------------------------------------------------------------------- the margin rule (GIST)


@pytest.mark.parametrize(("strategy", "margin", "kept", "false_negatives"), [
    ("relative", 0.05, ["p4"], 2),   # limit 10 - 0.5 = 9.5: p2 (9.8) and p3 (9.6) are false negatives
    ("absolute", 0.5, ["p4"], 2),    # the same limit in score units
    ("absolute", 2.5, ["p5"], 3),    # limit 7.5: p4 (9.0) goes too
    ("relative", 0.0, ["p2"], 0),    # no margin: only a candidate above the positive itself would go
])
def test_a_negative_scoring_above_the_margin_is_dropped(strategy: str, margin: float, kept: list[str],
                                                        false_negatives: int) -> None:
    rule = DistillRule(source_k=1, window=(3, 8), negatives=1, margin=margin, margin_strategy=strategy)
    (out,), counts = relabel([_pair("q", "p0")], POOL, {"q": RANKED}, rule)
    assert list(out.negative_ids) == kept and out.negatives == tuple(POOL[k] for k in kept)
    assert counts.false_negatives == false_negatives and counts.candidates == 6


def test_the_margin_is_measured_from_the_pairs_own_positive() -> None:
    """A source kept at rank 3 (score 9.8) bars less than the teacher's top-1 (score 10) would."""
    ranked = _ranking(("p1", 10), ("p2", 9.95), ("p0", 9.8), ("p3", 9.4), ("p4", 9.0), ("p5", 8.0))
    rule = DistillRule(source_k=3, window=(4, 6), negatives=1, margin=0.05)  # limit 9.8 - 0.49 = 9.31
    (out,), counts = relabel([_pair("q", "p0")], POOL, {"q": ranked}, rule)
    assert out.positive_from == "source" and out.teacher_rank == 3 and out.teacher_score == 9.8
    assert out.negative_ids == ("p4",) and counts.false_negatives == 1


def test_relative_margin_of_a_negative_score_uses_its_size() -> None:
    """s+ - |s+| * margin: for s+ = -2 and margin 0.5 the limit is -3, below the positive, as for s+ > 0."""
    ranked = _ranking(("p0", -2.0), ("p1", -2.5), ("p2", -3.5))
    rule = DistillRule(source_k=1, window=(2, 3), negatives=1, margin=0.5)
    (out,), counts = relabel([_pair("q", "p0")], POOL, {"q": ranked}, rule)
    assert out.negative_ids == ("p2",) and counts.false_negatives == 1


def test_a_pair_left_with_too_few_negatives_is_dropped() -> None:
    rule = DistillRule(source_k=1, window=(2, 5), negatives=2, margin=0.05)  # p1..p3 all above 9.5
    out, counts = relabel([_pair("q", "p0")], POOL, {"q": RANKED}, rule)
    assert out == () and counts.dropped["too_few_negatives"] == 1 and counts.kept == 0


# --------------------------------------------------------------------------- the window


@settings(max_examples=60, deadline=None)
@given(scores=st.lists(st.integers(0, 20), min_size=2, max_size=12), first=st.integers(1, 12),
       span=st.integers(0, 11), negatives=st.integers(1, 3), source_at=st.integers(0, 11))
def test_negatives_come_from_the_window_in_rank_order(scores: list[int], first: int, span: int, negatives: int,
                                                      source_at: int) -> None:
    ids = [f"p{i}" for i in range(len(scores))]
    ranked = Ranking(tuple(ids), tuple(float(s) for s in sorted(scores, reverse=True)))
    window = (first, first + span)
    if span + 1 < negatives:
        return
    rule = DistillRule(source_k=3, window=window, negatives=negatives, margin=0.1)
    source = ids[min(source_at, len(ids) - 1)]
    out, counts = relabel([_pair("q", source)], POOL, {"q": ranked}, rule)
    for p in out:
        ranks = [ranked.ids.index(n) + 1 for n in p.negative_ids]
        assert all(window[0] <= r <= window[1] for r in ranks) and ranks == sorted(ranks)
        assert p.passage_id not in p.negative_ids and source not in p.negative_ids
        assert all(ranked.scores[r - 1] <= rule.threshold(p.teacher_score) for r in ranks)
        assert len(p.negatives) == negatives
    assert counts.kept + sum(counts.dropped.values()) == 1


def test_a_window_past_the_ranking_gives_no_negative() -> None:
    out, counts = relabel([_pair("q", "p0")], POOL, {"q": RANKED}, DistillRule(source_k=1, window=(9, 20)))
    assert out == () and counts.dropped["too_few_negatives"] == 1 and counts.candidates == 0


# --------------------------------------------------------------------------- the positive


@pytest.mark.parametrize(("source", "source_k", "unconfirmed", "expect"), [
    ("p0", 3, "teacher", ("source", "p0", 1)),
    ("p2", 3, "teacher", ("source", "p2", 3)),    # within the top 3: the source stays
    ("p3", 3, "teacher", ("teacher", "p0", 1)),   # rank 4: the teacher's top-1 takes its place
    ("p2", 1, "teacher", ("teacher", "p0", 1)),   # source_k=1: always the teacher's top-1
    ("p11", 3, "teacher", ("teacher", "p0", 1)),  # not ranked at all
    ("p3", 3, "drop", None),
])
def test_the_positive_rule(source: str, source_k: int, unconfirmed: str, expect: tuple | None) -> None:
    rule = DistillRule(source_k=source_k, window=(5, 8), negatives=1, margin=0.05, unconfirmed=unconfirmed)
    out, counts = relabel([_pair("q", source)], POOL, {"q": RANKED}, rule)
    if expect is None:
        assert out == () and counts.dropped["unconfirmed"] == 1
        return
    (p,) = out
    assert (p.positive_from, p.passage_id, p.teacher_rank) == expect and p.passage == POOL[expect[1]]
    assert p.source_passage_id == source and source not in p.negative_ids
    assert (counts.positive_source, counts.positive_teacher) == ((1, 0) if expect[0] == "source" else (0, 1))


def test_a_passage_with_the_sources_text_is_the_source() -> None:
    """Pools repeat captions: the teacher ranking a copy of the source counts as ranking the source, and the
    source itself, lower down, is no negative."""
    pool = {**POOL, "copy": POOL["p5"]}
    ranked = _ranking(("copy", 10), ("p1", 5), ("p5", 4.9), ("p2", 1))
    (p,), _ = relabel([_pair("q", "p5")], pool, {"q": ranked}, DistillRule(source_k=1, window=(3, 4)))
    assert p.positive_from == "source" and p.passage_id == "p5" and p.negative_ids == ("p2",)


def test_a_querys_other_sources_are_never_its_negatives_and_duplicates_merge() -> None:
    """One query text generated from p0, p6 and p7: each source is a positive (or gave way to one), never a
    negative of the query; two records that end with the same positive are written once."""
    pairs = [_pair("q", "p0", 1), _pair("q", "p6", 2), _pair("q", "p7", 3), _pair("r", "p1", 4)]
    rule = DistillRule(source_k=1, window=(2, 8), negatives=2, margin=0.0)
    out, counts = relabel(pairs, POOL, {"q": RANKED, "r": RANKED}, rule)
    assert [(p.query, p.passage_id, p.positive_from) for p in out] == [("q", "p0", "source"), ("r", "p0", "teacher")]
    assert out[0].negative_ids == ("p1", "p2")
    assert counts.dropped["duplicate"] == 2 and counts.records == 4 and counts.queries == 2
    assert not {"p6", "p7"} & {n for p in out for n in p.negative_ids if p.query == "q"}
    assert out[1].negative_ids == ("p2", "p3")  # r's source p1 is barred from r's negatives


def test_no_ranking_and_a_ranking_over_another_pool() -> None:
    out, counts = relabel([_pair("q", "p0")], POOL, {"q": Ranking((), ())}, DistillRule())
    assert out == () and counts.dropped["no_ranking"] == 1
    with pytest.raises(FinegrainError, match="the teacher ranked passage 'x9', which the pool does not hold"):
        relabel([_pair("q", "p0")], POOL, {"q": _ranking(("x9", 1.0))}, DistillRule())


@pytest.mark.parametrize(("kw", "message"), [
    ({"window": (0, 5)}, "window 0:5 is not FIRST:LAST"),
    ({"window": (9, 5)}, "window 9:5 is not FIRST:LAST"),
    ({"window": (5, 5), "negatives": 2}, "fewer than 2 negatives"),
    ({"negatives": 0}, "negatives=0 is not a whole number >= 1"),
    ({"margin": -0.1}, "margin=-0.1 is not a number"),
    ({"margin": float("nan")}, "margin=nan is not a number"),
])
def test_a_bad_rule_is_one_clear_error(kw: dict, message: str) -> None:
    with pytest.raises(FinegrainError, match=message):
        DistillRule(**kw)
    with pytest.raises(UnknownNameError, match="did you mean 'relative'"):
        DistillRule(margin_strategy="relativ")


# --------------------------------------------------------------------------- the driver, BM25 as the teacher

COLOURS = ["red", "blue", "green", "black", "white", "brown"]
ANIMALS = ["dog", "cat", "horse", "bird"]


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A BEIR folder of 24 passages 'a COLOUR ANIMAL runs on the grass near the house' (queries and qrels
    that distill never reads), and pairs 'COLOUR ANIMAL' / 'ANIMAL' from each passage."""
    d = tmp_path_factory.mktemp("toy")
    beir = d / "toy"
    (beir / "qrels").mkdir(parents=True)
    docs = {f"d{i}": f"a {c} {a} runs on the grass near the house" for i, (c, a) in
            enumerate((c, a) for c in COLOURS for a in ANIMALS)}
    (beir / "corpus.jsonl").write_text("".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in docs.items()))
    (beir / "queries.jsonl").write_text('{"_id": "q1", "text": "secret red dog"}\n')
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td0\t1\n")
    lines = []
    for k, v in docs.items():
        w = v.split()
        for q in (f"{w[1]} {w[2]}", w[2]):
            lines.append(json.dumps({"query": q, "passage": v, "passage_id": k, "style": "kw", "source": "rules"}))
    (d / "pairs.jsonl").write_text("\n".join(lines) + "\n")
    (d / "pairs.jsonl.provenance.json").write_text(json.dumps({"transductive": False, "transductive_dataset": None}))
    return d


def test_bm25_as_the_teacher_over_a_file_pool(toy: Path, tmp_path: Path) -> None:
    rule = DistillRule(source_k=1, window=(2, 12), negatives=2, margin=0.05, scores_k=3)
    result = distill(toy / "pairs.jsonl", toy / "toy" / "corpus.jsonl", retriever="bm25-okapi", rule=rule,
                     lang="en", show_progress=False)
    c = result.counts
    assert c.records == 48 and c.queries == 28 and c.kept + sum(c.dropped.values()) == 48
    assert c.queries_kept == len({p.query for p in result.pairs}) < c.queries
    # 'red dog' names one passage: its source is the teacher's top-1, kept with two negatives
    red_dog = next(p for p in result.pairs if p.query == "red dog")
    assert red_dog.positive_from == "source" and red_dog.passage_id == "d0" and len(red_dog.negatives) == 2
    assert red_dog.teacher_top is not None and red_dog.teacher_top.ids[0] == "d0"
    top = red_dog.to_json()["teacher_top"]  # what finegrain train --kl-weight reads: texts with their scores
    assert len(top["ids"]) == len(top["texts"]) == len(top["scores"]) == 3 and top["texts"][0] == red_dog.passage
    (tmp_path / "one.jsonl").write_text(json.dumps(red_dog.to_json()) + "\n")
    assert read_pairs(tmp_path / "one.jsonl").pairs[0].teacher == tuple(zip(top["texts"], top["scores"], strict=True))
    # 'dog' was generated from six passages, the only six BM25 returns for it: all are its sources, none may
    # be its negative, so none of its records is written (one lacks negatives, five end on the same top-1)
    assert not [p for p in result.pairs if p.query == "dog"]
    assert c.dropped["duplicate"] >= 5 * len(ANIMALS) and c.dropped["too_few_negatives"] >= len(ANIMALS)
    prov = result.provenance
    assert prov["transductive"] is False and prov["transductive_dataset"] is None
    assert prov["teacher"]["retriever"] == "bm25-okapi" and prov["rule"]["window"] == [2, 12]
    assert prov["counts"]["kept"] == c.kept and prov["input"]["records"] == 48


def test_a_dataset_pool_is_transductive_and_transductive_input_stays_so(toy: Path, tmp_path: Path) -> None:
    rule = DistillRule(source_k=1, window=(2, 12))
    result = distill(toy / "pairs.jsonl", toy / "toy", retriever="bm25-okapi", rule=rule, lang="en",
                     show_progress=False)
    assert result.provenance["transductive"] is True and result.provenance["transductive_dataset"]
    marked = tmp_path / "pairs.jsonl"
    marked.write_bytes((toy / "pairs.jsonl").read_bytes())
    (tmp_path / "pairs.jsonl.provenance.json").write_text(json.dumps({"transductive": True,
                                                                      "transductive_dataset": "capretrieval/zh"}))
    again = distill(marked, toy / "toy" / "corpus.jsonl", retriever="bm25-okapi", rule=rule, lang="en",
                    show_progress=False)
    assert again.provenance["transductive"] is True and again.provenance["transductive_dataset"] == "capretrieval/zh"


def test_the_cli_writes_pairs_that_train_reads(toy: Path, tiny_st: Path, tmp_path: Path,  # noqa: F811
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "distilled.jsonl"
    code = main(["distill", str(toy / "pairs.jsonl"), "-r", "bm25-okapi", "--pool", str(toy / "toy"), "-l", "en",
                 "--source-k", "1", "--window", "2:12", "--negatives", "1", "-o", str(out), "-q"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "TRANSDUCTIVE: the pairs are relabelled over the passages of" in printed.out
    assert "dropped as false negatives" in printed.out
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert records and all(len(r["negatives"]) == 1 and r["negatives"][0] != r["passage"] for r in records)
    prov = json.loads((tmp_path / "distilled.jsonl.provenance.json").read_text())
    assert prov["transductive"] is True and prov["counts"]["kept"] == len(records)
    assert all(len(p.negatives) == 1 for p in read_pairs(out).pairs)

    model = tmp_path / "model"
    result = train_encoder(TrainConfig(base=f"st:{tiny_st}", pairs=out, out=model, steps=2, batch=4, lr=1e-3,
                                       checkpoint_every=2, quiet=True))
    assert result.finished
    training = json.loads((model / "finegrain_training.json").read_text())
    assert training["transductive"] is True and training["transductive_dataset"] == prov["transductive_dataset"]
    with pytest.raises(FinegrainError, match="--hard-negatives bm25 mines negatives, and the pairs file"):
        train_encoder(TrainConfig(base=f"st:{tiny_st}", pairs=out, out=tmp_path / "m2", steps=2, batch=4,
                                  hard_negatives="bm25", quiet=True))


@pytest.mark.parametrize(("args", "expect"), [
    (["--window", "10-50"], "--window '10-50' is not FIRST:LAST"),
    (["--window", "50:10"], "window 50:10 is not FIRST:LAST"),
    (["--margin-strategy", "relativ"], "unknown margin strategy 'relativ'"),
    (["-r", "bm25-okapy"], "did you mean 'bm25-okapi'"),
    (["--set", "k1=x"], "k1"),
    (["-l", "zh"], "--lang zh but the passages of"),
])
def test_cli_bad_input_is_one_error_line(toy: Path, tmp_path: Path, args: list[str], expect: str) -> None:
    base = {"-r": "bm25-okapi", "-l": "en"}
    for flag in ("-r", "-l"):
        if flag in args:
            base.pop(flag)
    argv = ["distill", str(toy / "pairs.jsonl"), "--pool", str(toy / "toy"), "-o", str(tmp_path / "o.jsonl"), "-q",
            *[x for kv in base.items() for x in kv], *args]
    result = CliRunner().invoke(app, argv)
    err = result.stderr if hasattr(result, "stderr") else result.output
    assert result.exit_code == 2, result.output
    assert expect in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o.jsonl").exists()


def test_each_pair_keeps_its_positives_group() -> None:
    """Distilled pairs carry the sibling group of their positive, so batches can still keep one image apart:
    the record's own group for a kept source, the pool's group for the teacher's pick."""
    rule = DistillRule(source_k=1, window=(3, 8), negatives=1, margin=0.0)
    kept = Pair("q", POOL["p0"], "id:p0", "kw", 1, group="imgA")
    moved = Pair("r", POOL["p5"], "id:p5", "kw", 2, group="imgB")
    out, _ = relabel([kept, moved], POOL, {"q": RANKED, "r": RANKED}, rule, {"p0": "imgA", "p5": "imgB"})
    by_query = {d.query: d for d in out}
    assert by_query["q"].group == "imgA" and by_query["q"].to_json()["group"] == "imgA"
    assert by_query["r"].passage_id == "p0" and by_query["r"].group == "imgA"  # the teacher's top-1's group


def test_a_teacher_run_saved_over_teacher_queries_relabels_as_the_live_teacher(toy: Path, tmp_path: Path) -> None:
    """A teacher that cannot run here ranks teacher_queries elsewhere; the saved run, served by the run
    retriever, gives the same pairs as the live teacher (same positives, negatives and teacher scores)."""
    rule = DistillRule(source_k=1, window=(2, 12), negatives=2, margin=0.05, scores_k=3)
    pool = toy / "toy" / "corpus.jsonl"
    live = distill(toy / "pairs.jsonl", pool, retriever="bm25-okapi", rule=rule, lang="en", show_progress=False)
    queries = teacher_queries(read_pairs(toy / "pairs.jsonl").pairs)
    assert list(queries)[:2] == ["q0", "q1"] and len(queries) == live.counts.queries
    docs = [json.loads(line) for line in pool.read_text().splitlines()]
    corpus = Corpus(Document(d["_id"], d["text"]) for d in docs)
    get_retriever("bm25-okapi").retrieve(corpus, queries, lang="en", top_k=rule.depth,
                                         show_progress=False).save(tmp_path / "teacher.trec")
    saved = distill(toy / "pairs.jsonl", pool, retriever="run", retriever_options={"path": str(tmp_path / "teacher.trec")},
                    rule=rule, lang="en", show_progress=False)
    assert [p.to_json() for p in saved.pairs] == [p.to_json() for p in live.pairs]
    assert saved.counts == live.counts
    assert saved.provenance["teacher"]["config"]["sha256"]  # which run taught is on record


def test_the_cli_round_trip_through_a_teacher_run_saved_elsewhere(toy: Path, tmp_path: Path) -> None:
    """--write-queries gives the ids a saved teacher run must use; -r run with that run writes the same pairs
    as the live teacher; without a teacher, pool or output (and no --write-queries) it is one error line."""
    queries_file = tmp_path / "queries.jsonl"
    result = CliRunner().invoke(app, ["distill", str(toy / "pairs.jsonl"), "--write-queries", str(queries_file)])
    assert result.exit_code == 0, result.output
    written = [json.loads(line) for line in queries_file.read_text().splitlines()]
    assert [(q["_id"], q["text"]) for q in written] == [
        (q.id, q.text) for q in teacher_queries(read_pairs(toy / "pairs.jsonl").pairs).values()]
    docs = [json.loads(line) for line in (toy / "toy" / "corpus.jsonl").read_text().splitlines()]
    corpus = Corpus(Document(d["_id"], d["text"]) for d in docs)
    queries = Queries(Query(q["_id"], q["text"]) for q in written)  # as another tool would read the file
    get_retriever("bm25-okapi").retrieve(corpus, queries, lang="en", top_k=50, show_progress=False).save(
        tmp_path / "teacher.trec")
    common = ["distill", str(toy / "pairs.jsonl"), "--pool", str(toy / "toy" / "corpus.jsonl"), "-l", "en", "-q",
              "--source-k", "1", "--window", "2:12", "--negatives", "2", "--teacher-scores", "3"]
    live = CliRunner().invoke(app, [*common, "-r", "bm25-okapi", "-o", str(tmp_path / "live.jsonl")])
    saved = CliRunner().invoke(app, [*common, "-r", "run", "--set", f"path={tmp_path / 'teacher.trec'}",
                                     "-o", str(tmp_path / "saved.jsonl")])
    assert live.exit_code == 0 and saved.exit_code == 0, (live.output, saved.output)
    assert (tmp_path / "saved.jsonl").read_text() == (tmp_path / "live.jsonl").read_text()
    bad = CliRunner().invoke(app, ["distill", str(toy / "pairs.jsonl"), "--pool", str(toy / "toy")])
    err = bad.stderr if hasattr(bad, "stderr") else bad.output
    assert bad.exit_code == 2 and "missing -r/--retriever, -o/--out" in err and len(err.strip().splitlines()) == 1
