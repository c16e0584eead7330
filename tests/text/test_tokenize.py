"""Tokenizers: jieba presets (the CapRetrieval configuration exactly), English words + Porter stems, lookup."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.text import (
    EnglishTokenizer,
    JiebaTokenizer,
    Tokenizer,
    get_tokenizer,
    normalize,
)
from finegrain.text.words import normalize_texts

ZH_DOCS = [
    "图片中显示了 iPhone 15 Pro，价格为 7999元。  Hello World!",
    "这是一张结婚证书，包含新婚夫妇的照片、姓名。",
    "",
    "国资委要求国企在2025年前推行\t未等调整\n和不胜任退出制度",
]


def _jieba():
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


def test_normalize_lowercases_and_folds_whitespace() -> None:
    assert normalize("  Hello\t\tWORLD \n x\u3000y ") == "hello world x y"
    assert normalize("") == ""


def test_capretrieval_preset_is_the_reference_code_exactly() -> None:
    jieba = _jieba()
    tok = JiebaTokenizer.capretrieval()
    # Documents: raw text (no lower-casing), search mode, every token jieba gives.
    assert tok.documents(ZH_DOCS) == [jieba.lcut_for_search(t) for t in ZH_DOCS]
    # Queries: lower-cased and whitespace-folded, then precise mode.
    queries = ["iPhone  手机", "健身房", "WeChat 功能更新"]
    assert tok.queries(queries) == [jieba.lcut(" ".join(q.lower().split())) for q in queries]
    assert "iPhone" in tok.documents(ZH_DOCS)[0] and " " in tok.documents(ZH_DOCS)[0]
    assert tok.queries(["iPhone  手机"])[0] == ["iphone", " ", "手机"]


def test_default_jieba_normalises_both_sides_and_drops_whitespace_tokens() -> None:
    jieba = _jieba()
    tok = JiebaTokenizer()
    docs = tok.documents(ZH_DOCS)
    assert docs == [[w for w in jieba.lcut_for_search(normalize(t)) if not w.isspace()] for t in ZH_DOCS]
    assert all(not w.isspace() for d in docs for w in d)
    assert "iphone" in docs[0] and "iPhone" not in docs[0]
    assert docs[2] == []
    assert tok.queries(["中华人民共和国"]) == [["中华人民共和国"]]
    assert set(tok.documents(["中华人民共和国"])[0]) >= {"中华", "人民", "共和国", "中华人民共和国"}


def test_jieba_modes_can_be_swapped() -> None:
    jieba = _jieba()
    tok = JiebaTokenizer(document_mode="precise", query_mode="search")
    assert tok.documents(["中华人民共和国成立了"]) == [jieba.lcut("中华人民共和国成立了")]
    assert tok.queries(["中华人民共和国"]) == [jieba.lcut_for_search("中华人民共和国")]


def test_jieba_bad_mode_names_the_value() -> None:
    with pytest.raises(FinegrainError, match="'full'.*'search', 'precise'"):
        JiebaTokenizer(document_mode="full")  # type: ignore[arg-type]


def test_jieba_is_lazy_and_quiet() -> None:
    code = (
        "import sys, finegrain.text as t\n"
        "assert 'jieba' not in sys.modules, 'jieba imported at import time'\n"
        "print(t.JiebaTokenizer().documents(['图片中显示了燃气表'])[0])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stderr == "", f"jieba wrote to stderr: {out.stderr!r}"
    assert "燃气表" in out.stdout


def test_english_words_lowercase_and_porter_stems() -> None:
    tok = EnglishTokenizer()
    assert tok.documents(["The Running CATS, running! caresses flies"]) == [
        ["the", "run", "cat", "run", "caress", "fli"]
    ]
    assert tok.queries(["Running cats"]) == [["run", "cat"]]
    # Porter would reduce "s" to "": such a word is kept unstemmed, never an empty token.
    assert tok.documents(["it's 3.5 cafés", ""]) == [["it", "s", "3", "5", "café"], []]


def test_english_without_stemming_and_with_stopwords() -> None:
    assert EnglishTokenizer(stem=False).documents(["The Running CATS"]) == [["the", "running", "cats"]]
    assert EnglishTokenizer(stopwords="en").documents(["The cats are running"]) == [["cat", "run"]]
    assert EnglishTokenizer(stopwords=["CATS"]).documents(["The cats ran"]) == [["the", "ran"]]
    custom = EnglishTokenizer(stopwords=["The", "a", "the"])
    assert custom.stopwords == ("a", "the") and custom == EnglishTokenizer(stopwords=("a", "the"))
    assert json.loads(json.dumps(custom.config()))["stopwords"] == ["a", "the"]
    assert EnglishTokenizer(stopwords="en").config()["stopwords"] == "en"
    with pytest.raises(FinegrainError, match="'fr'.*stopwords='en'"):
        EnglishTokenizer(stopwords="fr")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=6))
def test_english_equals_regex_then_pystemmer(texts: list[str]) -> None:
    import Stemmer

    stem = Stemmer.Stemmer("porter")
    want = [[s or w for w, s in zip(ws, stem.stemWords(ws))] for ws in (re.findall(r"\w+", t.lower()) for t in texts)]
    assert EnglishTokenizer().documents(texts) == want


def test_get_tokenizer_by_language_and_preset() -> None:
    assert get_tokenizer("zh") == JiebaTokenizer()
    assert get_tokenizer("zh", "capretrieval") == JiebaTokenizer.capretrieval()
    assert get_tokenizer("en") == EnglishTokenizer()
    assert get_tokenizer("en", "capretrieval") == EnglishTokenizer()
    for tok in (get_tokenizer("zh"), get_tokenizer("en")):
        assert isinstance(tok, Tokenizer)
        json.dumps(tok.config())


def test_get_tokenizer_unknown_language_suggests() -> None:
    with pytest.raises(UnknownNameError, match="unknown tokenizer language 'fr'; known: en, zh"):
        get_tokenizer("fr")
    with pytest.raises(UnknownNameError) as e:
        get_tokenizer("zh", "capretrival")
    assert e.value.suggestions == ["capretrieval"]


@pytest.mark.parametrize("tok", [JiebaTokenizer(), EnglishTokenizer()], ids=["jieba", "english"])
def test_tokenizers_refuse_a_bare_string_and_non_strings(tok: Tokenizer) -> None:
    with pytest.raises(FinegrainError, match="wrap a single text in a list"):
        tok.documents("some text")  # type: ignore[arg-type]
    with pytest.raises(FinegrainError, match="text 1 is a int"):
        tok.queries(["ok", 3])  # type: ignore[list-item]


def test_normalize_texts_switches_each_step_and_matches_normalize() -> None:
    texts = ["  A  Red\tCar ", "海边 的\n沙滩"]
    assert normalize_texts(texts) == [normalize(t) for t in texts] == ["a red car", "海边 的 沙滩"]
    assert normalize_texts(texts, lowercase=False) == ["A Red Car", "海边 的 沙滩"]
    assert normalize_texts(texts, normalize_space=False) == ["  a  red\tcar ", "海边 的\n沙滩"]
