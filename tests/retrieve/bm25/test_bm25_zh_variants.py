"""Chinese BM25 tokenisations: character bigrams (Lucene CJKAnalyzer style), jieba search/precise mode, their fusion."""

from __future__ import annotations

from pathlib import Path

import pytest

from finegrain.errors import FinegrainError
from finegrain.retrieve.bm25 import BM25
from finegrain.retrieve.bm25.retriever import BM25Retriever
from finegrain.retrieve.fusion.methods import rrf
from finegrain.retrieve.registry import RETRIEVERS, get_retriever
from finegrain.text import Tokenizer, get_tokenizer
from finegrain.text.bigrams import CJKBigramSplitter, cjk_bigrams, fold_width
from finegrain.text.words import splitter_from_config
from finegrain.types import Corpus, Document, Queries, Query

SPLIT = CJKBigramSplitter().split_one


@pytest.mark.parametrize(("text", "tokens"), [
    ("一只小猫", ["一只", "只小", "小猫"]),
    ("猫", ["猫"]),  # a lone CJK character is its own token
    ("猫，狗。", ["猫", "狗"]),  # punctuation ends a run: no bigram across it
    ("红色的iPhone 15手机", ["红色", "色的", "iphone", "15", "手机"]),  # Latin and digits whole, lower-cased
    ("我在2024年去了U.S.A.", ["我在", "2024", "年去", "去了", "u.s.a"]),
    ("价格3.5元，共1,000件", ["价格", "3.5", "元", "共", "1,000", "件"]),
    ("ＡＢＣ１２３　猫咪！", ["abc123", "猫咪"]),  # full-width ASCII and the ideographic space folded
    ("it's a_b--c", ["it's", "a", "b", "c"]),  # "_" and "-" separate words
    ("日本語のテキスト", ["日本", "本語", "語の", "のテ", "テキ", "キス", "スト"]),  # kana are CJK too
    ("", []),
    ("  ，。 ", []),
])
def test_bigram_splitter_hand_computed(text: str, tokens: list[str]) -> None:
    assert SPLIT(text) == tokens


def test_bigram_helpers_and_lowercase_switch() -> None:
    assert cjk_bigrams("") == [] and cjk_bigrams("ab") == ["ab"] and cjk_bigrams("abc") == ["ab", "bc"]
    assert fold_width("Ｈｉ！\u3000x") == "Hi! x"
    assert CJKBigramSplitter(lowercase=False).split_one("Big猫") == ["Big", "猫"]


def test_bigram_splitter_config_round_trips() -> None:
    sp = CJKBigramSplitter(lowercase=False)
    assert splitter_from_config(sp.config()) == sp
    tok = get_tokenizer("zh", "cjk-bigram")
    assert Tokenizer.from_config(tok.config()) == tok
    assert tok.documents(["小猫睡觉"]) == tok.queries(["小猫睡觉"]) == [["小猫", "猫睡", "睡觉"]]


def test_jieba_modes_of_the_new_presets() -> None:
    text = "中华人民共和国"
    search = ["中华", "华人", "人民", "共和", "共和国", "中华人民共和国"]  # jieba's documented search-mode example
    s = get_tokenizer("zh", "jieba-search")
    assert s.queries([text]) == s.documents([text]) == [search]
    p = get_tokenizer("zh", "jieba-precise")
    assert p.queries([text]) == p.documents([text]) == [[text]]
    # the paper's preset is untouched: search mode for documents, precise for queries
    c = get_tokenizer("zh", "capretrieval")
    assert c.documents([text]) == [search] and c.queries([text]) == [[text]]
    # all else as in capretrieval: raw documents, normalised queries, whitespace tokens kept
    assert s.documents(["Big 猫"]) == [["Big", " ", "猫"]] and s.queries(["Big  猫"]) == [["big", " ", "猫"]]
    for preset in ("jieba-search", "jieba-precise", "cjk-bigram"):
        assert get_tokenizer("en", preset) == get_tokenizer("en", "capretrieval")


def test_saved_index_knows_its_bigram_tokenizer(tmp_path: Path) -> None:
    tok = get_tokenizer("zh", "cjk-bigram")
    docs = ["一只小猫在睡觉", "小狗在草地上跑", "海边的螃蟹"]
    bm = BM25("okapi", tokenizer=tok).index_texts(docs, ["a", "b", "c"])
    bm.save(tmp_path / "idx")
    loaded = BM25.load(tmp_path / "idx")
    assert loaded.tokenizer == tok
    assert loaded.search_texts(["小猫"], ["q"], k=3)["q"] == bm.search_texts(["小猫"], ["q"], k=3)["q"]


def test_bigram_bm25_equals_rank_bm25() -> None:
    rank_bm25 = pytest.importorskip("rank_bm25")
    tok = get_tokenizer("zh", "cjk-bigram")
    docs = ["一只小猫在沙发上睡觉", "小狗在草地上跑来跑去", "海边的沙滩上有螃蟹和小猫", "a red car 红色汽车"]
    ref = rank_bm25.BM25Okapi(tok.documents(docs), k1=1.5, b=0.75, epsilon=0.25)
    bm = BM25("okapi", k1=1.5, b=0.75, epsilon=0.25, tokenizer=tok).index_texts(docs, ["a", "b", "c", "d"])
    for q in ["小猫睡觉", "红色 car", "沙滩"]:
        assert list(bm.scores(tok.queries([q])[0])) == pytest.approx(list(ref.get_scores(tok.queries([q])[0])))


def test_variant_retrievers_resolve_and_rank() -> None:
    for name, preset in (("bm25-okapi-search", "jieba-search"), ("bm25-okapi-precise", "jieba-precise"),
                         ("bm25-okapi-bigram", "cjk-bigram")):
        r = get_retriever(name)
        assert isinstance(r, BM25Retriever) and r.name == name and r.tokenizer == preset
        assert (r.variant, r.k1, r.b, r.threshold, r.ties) == ("okapi", 1.5, 0.75, 1e-3, "index-order")
        assert r.config()["tokenizers"]["zh"] == get_tokenizer("zh", preset).config()
        assert get_retriever(name, k1=1.2).k1 == 1.2
    corpus = Corpus([Document("d1", "一只小猫在睡觉"), Document("d2", "小狗在跑"), Document("d3", "猫咪")])
    queries = Queries([Query("q", "小猫")])
    run = get_retriever("bm25-okapi-bigram").retrieve(corpus, queries, lang="zh", top_k=None, show_progress=False)
    assert run.ranked("q") == ["d1"], "only d1 holds the bigram 小猫"
    with pytest.raises(FinegrainError, match="did you mean"):
        get_retriever("bm25-okapi-bigram", tokeniser="x")


def test_jieba_bigram_fusion_is_rrf_of_the_two() -> None:
    h = get_retriever("bm25-jieba-bigram")
    assert h.name == "bm25-jieba-bigram" and [p.name for p in h.parts] == ["bm25-okapi", "bm25-okapi-bigram"]
    assert (h.fusion, h.k, h.weights, h.depth) == ("rrf", 60, None, 1000)
    assert RETRIEVERS.params("bm25-jieba-bigram")["parts"].default == ("bm25-okapi", "bm25-okapi-bigram")
    corpus = Corpus([Document("d1", "一只小猫在睡觉"), Document("d2", "小猫咪"), Document("d3", "睡觉的狗")])
    queries = Queries([Query("q", "小猫睡觉")])
    fused = h.retrieve(corpus, queries, lang="zh", top_k=None, show_progress=False)
    parts = [p.retrieve(corpus, queries, lang="zh", top_k=1000, show_progress=False) for p in h.parts]
    assert fused.ranked("q") == rrf(parts, k=60, depth=1000).ranked("q")
    assert fused.name == "bm25-jieba-bigram"
