"""The text layer: Lang parsing and detection, splitters, stop words, injected tokenizers, config round trips."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.text import (
    EnglishTokenizer,
    JiebaSplitter,
    JiebaTokenizer,
    Lang,
    RegexSplitter,
    Tokenizer,
    detect_lang,
    get_tokenizer,
    load_jieba,
    parse_lang,
    split_words,
    stopwords,
)


def test_lang_parses_codes_and_aliases_and_equals_its_code() -> None:
    assert parse_lang("zh") is Lang.ZH and parse_lang(" EN ") is Lang.EN
    assert parse_lang("Chinese") is Lang.ZH and parse_lang("zh-CN") is Lang.ZH and parse_lang("english") is Lang.EN
    assert parse_lang("cn") is Lang.ZH  # PhotoBench's spelling, still read
    assert Lang.ZH == "zh" and f"{Lang.EN}" == "en" and json.dumps([Lang.ZH]) == '["zh"]'
    with pytest.raises(FinegrainError, match="unknown language 'fr'.*'zh' or 'en'"):
        parse_lang("fr")
    with pytest.raises(FinegrainError, match="not a string"):
        parse_lang(3)  # type: ignore[arg-type]


def test_detect_lang_any_character_or_a_share() -> None:
    assert detect_lang("杭州 2023") is Lang.ZH and detect_lang("Hangzhou 2023") is Lang.EN
    assert detect_lang("") is Lang.EN
    mixed = "photos from my trip to 杭州"  # 2 of 22 non-space characters are Chinese
    assert detect_lang(mixed) is Lang.ZH
    assert detect_lang(mixed, min_share=0.3) is Lang.EN
    assert detect_lang("小猫 cat", min_share=0.3) is Lang.ZH


def test_split_words_one_splitter_per_language() -> None:
    assert split_words("The CATS, it's 3.5!", "en") == ["the", "cats", "it", "s", "3", "5"]
    jieba = load_jieba()
    assert split_words("Hello 中华人民共和国", "zh") == [w for w in jieba.lcut("hello 中华人民共和国") if not w.isspace()]
    assert load_jieba() is jieba  # loaded once


def test_stopword_lists_by_name() -> None:
    assert "the" in stopwords("en") and "的" in stopwords("zh")
    with pytest.raises(UnknownNameError) as e:
        stopwords("eng")
    assert e.value.suggestions == ["en"]


def test_tokenizer_injects_splitter_stemmer_and_stopwords() -> None:
    tok = Tokenizer(str.split, stemmer=lambda ws: [w.rstrip("s") for w in ws], stopwords=["A"])
    assert tok.documents(["a cats dogs", ""]) == [["cat", "dog"], []]
    # A stem that comes out empty keeps the word.
    assert Tokenizer(str.split, stemmer=lambda ws: ["" for _ in ws]).queries(["x y"]) == [["x", "y"]]
    # Queries may be split differently from documents.
    two = Tokenizer(RegexSplitter(), query_splitter=RegexSplitter(r"\S+", lowercase=False))
    assert two.documents(["A-b c"]) == [["a", "b", "c"]] and two.queries(["A-b c"]) == [["A-b", "c"]]
    assert Tokenizer(RegexSplitter(), stemmer="porter", stopwords="en").documents(["The running cats"]) == [
        ["run", "cat"]
    ]
    with pytest.raises(UnknownNameError, match="unknown stemmer 'portr'"):
        Tokenizer(RegexSplitter(), stemmer="portr")
    with pytest.raises(FinegrainError, match="not a regular expression"):
        RegexSplitter("(")
    with pytest.raises(FinegrainError, match="unknown jieba mode 'full'"):
        JiebaSplitter("full")  # type: ignore[arg-type]


@pytest.mark.parametrize("tok", [
    JiebaTokenizer(), JiebaTokenizer.capretrieval(), JiebaTokenizer(document_mode="precise", hmm=False),
    EnglishTokenizer(), EnglishTokenizer(stem=False, stopwords=["b", "a"]), EnglishTokenizer(stopwords="en"),
    Tokenizer(RegexSplitter(r"\w+"), stopwords="zh", query_splitter=JiebaSplitter("precise")),
], ids=["jieba", "capretrieval", "jieba-precise", "english", "english-custom", "english-stop", "custom"])
def test_config_round_trips_to_an_equal_tokenizer(tok: Tokenizer) -> None:
    cfg = json.loads(json.dumps(tok.config()))
    back = Tokenizer.from_config(cfg)
    assert back == tok and type(back) is type(tok)
    texts = ["图片中显示了 iPhone 15 Pro", "The Running CATS"]
    assert back.documents(texts) == tok.documents(texts) and back.queries(texts) == tok.queries(texts)


def test_function_parts_cannot_be_rebuilt_from_config() -> None:
    cfg = Tokenizer(str.split).config()
    assert cfg["splitter"]["type"] == "function"
    with pytest.raises(UnknownNameError, match="splitter type 'function'"):
        Tokenizer.from_config(cfg)
    with pytest.raises(FinegrainError, match="stemmer .* cannot be rebuilt"):
        Tokenizer.from_config(Tokenizer(RegexSplitter(), stemmer=lambda ws: ws).config())


def test_presets_by_language_and_name() -> None:
    assert get_tokenizer(Lang.ZH) == JiebaTokenizer() and get_tokenizer("chinese", "capretrieval") == JiebaTokenizer.capretrieval()
    assert get_tokenizer("en", "capretrieval") == EnglishTokenizer() != EnglishTokenizer(stem=False)


def test_importing_the_text_layer_loads_no_jieba_or_stemmer() -> None:
    code = ("import sys, finegrain.text, finegrain.retrieve.bm25\n"
            "assert 'jieba' not in sys.modules and 'Stemmer' not in sys.modules, sorted(sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
