"""Term coverage: the idf-weighted share of query terms a passage holds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from finegrain.errors import FinegrainError
from finegrain.retrieve.registry import RERANKERS, get_retriever
from finegrain.retrieve.rerank.coverage import CoverageScorer, TermCoverage
from finegrain.retrieve.rerank.cross_encoder import Reranker
from finegrain.types import Corpus, Document, Queries, Query

EN = ["a red car parked on the street", "a blue car on the road", "a dog on the grass",
      "the cat sleeps on the sofa", "a red apple on the table"]


def test_is_a_reranker_and_reports_its_config() -> None:
    c = TermCoverage.fit(EN, "en")
    assert isinstance(c, Reranker)
    assert c.config()["n_documents"] == 5
    assert c.config()["scorer"] == "coverage"


def test_full_partial_and_no_coverage() -> None:
    c = TermCoverage.fit(EN, "en")
    s = c.score("red car", ["a red car parked on the street", "a blue car on the road", "a dog on the grass"])
    assert s[0] == pytest.approx(1.0)
    assert s[2] == 0.0
    assert 0.0 < s[1] < 1.0


def test_weights_are_idf_over_the_fitted_corpus() -> None:
    c = TermCoverage.fit(EN, "en")
    # "red" is in 2 of 5 passages, "car" in 2, "street" in 1: holding the rare one covers more
    s = c.score("red car street", ["street", "red"])
    n = 5
    idf = {t: math.log((n + 1) / (df + 0.5)) for t, df in (("red", 2), ("car", 2), ("street", 1))}
    total = sum(idf.values())
    assert s[0] == pytest.approx(idf["street"] / total)
    assert s[1] == pytest.approx(idf["red"] / total)
    assert s[0] > s[1]


def test_a_term_the_corpus_lacks_weighs_most_and_matches_nothing_it_lacks() -> None:
    c = TermCoverage.fit(EN, "en")
    assert c.weight("zeppelin") > c.weight("street") > c.weight("the")
    s = c.score("red zeppelin", ["a red car"])
    assert 0.0 < s[0] < 0.5


def test_chinese_terms_match_as_substrings_when_jieba_cuts_the_passage_differently() -> None:
    corpus = ["一只猫在沙发上睡觉", "一只狗在草地上奔跑", "红色的汽车停在路边", "海边的沙滩"]
    c = TermCoverage.fit(corpus, "zh")
    terms = c.terms("沙发上的猫")
    assert "沙发" in terms and "猫" in terms
    s = c.score("沙发上的猫", ["一只猫在沙发上睡觉", "一只狗在草地上奔跑", "猫"])
    assert s[0] > s[2] > s[1]
    # 沙发 inside a longer word still counts: the passage holds the characters
    assert c.score("沙发", ["沙发床"])[0] == pytest.approx(1.0)


def test_lower_cases_and_orders_scores_like_the_passages() -> None:
    c = TermCoverage.fit(EN, "en")
    a = c.score("RED Car", ["a dog", "A RED CAR"])
    assert a.tolist() == pytest.approx([0.0, 1.0])


def test_empty_inputs() -> None:
    c = TermCoverage.fit(EN, "en")
    assert c.score("red car", []).shape == (0,)
    assert np.all(c.score("   ", ["a red car"]) == 0.0)


def test_unknown_preset_is_a_clear_error() -> None:
    with pytest.raises(FinegrainError, match="preset"):
        TermCoverage.fit(EN, "en", preset="nope")


def test_rerank_with_coverage_fits_idf_on_the_whole_corpus_and_moves_fuller_passages_up() -> None:
    docs = ["a red car parked on the street", "a blue car on the road", "a dog on the grass",
            "the cat sleeps on the sofa", "a red apple on the table", "car"]
    corpus = Corpus(Document(f"d{i}", t) for i, t in enumerate(docs))
    queries = Queries([Query("q1", "red car street")])
    r = get_retriever("rerank", first_stage="bm25-okapi", scorer="coverage", alpha=1.0)
    run = r.retrieve(corpus, queries, lang="en", top_k=None, show_progress=False)
    assert run.ranked("q1")[0] == "d0"  # the only passage holding all three terms
    assert isinstance(r.reranker, CoverageScorer)
    assert r.reranker.config()["n_documents"] == len(docs)  # idf over the corpus, not over the head
    assert isinstance(RERANKERS.build("coverage"), CoverageScorer)


def test_the_coverage_scorer_refuses_to_score_before_it_is_fitted_and_with_model() -> None:
    with pytest.raises(FinegrainError, match="not fitted"):
        CoverageScorer().score("red car", ["a red car"])
    with pytest.raises(FinegrainError, match="model"):
        get_retriever("rerank", scorer="coverage", model="/nowhere")
