"""``finegrain.build.passages`` and ``finegrain passages``: passages of bounded length, cut between sentences.

Hand-made documents whose passages are known; properties over random text
(hypothesis): nothing longer than max_chars, every non-space character covered
in order, spans that are the document's own text; real DuReader passages.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finegrain.build.passages import (
    doc_of,
    is_soft,
    passage_id,
    sentence_spans,
    split_passages,
    split_text,
    write_passages,
)
from finegrain.cli.main import main
from finegrain.datasets import load_dataset
from finegrain.errors import FinegrainError
from finegrain.io.beir import read_corpus


def _texts(text: str, max_chars: int, stride: int = 0, lang: str = "zh") -> list[str]:
    spans, _ = split_text(text, max_chars, stride, lang)
    return [text[s:e] for s, e in spans]


# --------------------------------------------------------------------------- by hand


def test_zh_sentences_end_after_terminators_and_closing_quotes() -> None:
    text = "一年有11天。“你好吗？”他问；好……\n下一行 没有句号"
    got = [text[s:e] for s, e in sentence_spans(text, "zh")]
    assert got == ["一年有11天。", "“你好吗？”", "他问；", "好……", "下一行 没有句号"]


def test_zh_sentences_are_packed_greedily_up_to_max_chars() -> None:
    text = "甲乙丙。丁戊。己庚辛壬。癸。"  # sentences of 4, 3, 5, 2 characters
    assert _texts(text, 7) == ["甲乙丙。丁戊。", "己庚辛壬。癸。"]
    assert _texts(text, 6) == ["甲乙丙。", "丁戊。", "己庚辛壬。", "癸。"]
    assert _texts(text, 100) == [text]


def test_a_sentence_longer_than_max_chars_is_cut_hard() -> None:
    text = "甲乙丙丁戊己庚辛壬癸子丑"  # 12 characters, no terminator
    spans, cuts = split_text(text, 5, 0, "zh")
    assert [text[s:e] for s, e in spans] == ["甲乙丙丁戊", "己庚辛壬癸", "子丑"]
    assert cuts == 2
    # a clause mark in the second half of the window is preferred
    assert _texts("甲乙丙，丁戊己庚", 5) == ["甲乙丙，", "丁戊己庚"]


def test_a_hard_cut_does_not_split_a_latin_word_when_it_can_avoid_it() -> None:
    text = "下载app安装即可使用"  # max 4 would cut 'app' after 'a' or 'ap'
    assert _texts(text, 4) == ["下载", "app安", "装即可使", "用"]
    assert not is_soft("xapp", 2) and is_soft("下a", 1) and is_soft("下载", 1)
    # a word longer than the window has to be cut
    assert _texts("abcdefgh", 3, lang="en") == ["abc", "def", "gh"]


def test_en_uses_sentence_boundaries_not_every_period() -> None:
    text = "Dr. Smith went to Washington D.C. yesterday. He paid $3.50 for coffee! Did he like it?"
    got = [text[s:e] for s, e in sentence_spans(text, "en")]
    assert got == ["Dr. Smith went to Washington D.C. yesterday.", "He paid $3.50 for coffee!", "Did he like it?"]
    assert _texts(text, 70, lang="en") == ["Dr. Smith went to Washington D.C. yesterday. He paid $3.50 for coffee!",
                                           "Did he like it?"]


def test_en_long_sentences_are_cut_between_words() -> None:
    text = "the quick brown fox jumps over the lazy dog and keeps running far away"
    for piece in _texts(text, 20, lang="en"):
        assert len(piece) <= 20
        assert text.find(piece) == 0 or text[text.find(piece) - 1] == " "  # starts at a word
        end = text.find(piece) + len(piece)
        assert end == len(text) or text[end] == " "  # ends at a word


def test_stride_shares_up_to_stride_characters_from_a_sentence_start() -> None:
    text = "甲乙丙。丁戊。己庚辛壬。癸。"
    spans, _ = split_text(text, 9, 3, "zh")
    # passage 2 starts at the sentence 丁戊。, within 3 characters of passage 1's end; passage 3 finds no
    # sentence start within 3 characters of passage 2's end, so it starts 3 characters back, at 辛
    assert [text[s:e] for s, e in spans] == ["甲乙丙。丁戊。", "丁戊。己庚辛壬。", "辛壬。癸。"]
    for (s1, e1), (s2, e2) in zip(spans, spans[1:]):
        assert s1 < s2 and e1 < e2 and e1 - s2 <= 3


def test_ids_are_derived_and_map_back_to_their_document() -> None:
    ps = split_passages({"d#p1": "甲乙丙。丁戊。", "d": "己庚辛。"}, max_chars=4)
    assert [p.id for p in ps] == ["d#p1#p0", "d#p1#p1", "d#p0"]
    assert all(doc_of(p.id) == p.doc_id for p in ps)
    assert passage_id("x", 3) == "x#p3" and doc_of("plain") == "plain"
    again = split_passages({"d#p1": "甲乙丙。丁戊。", "d": "己庚辛。"}, max_chars=4)
    assert again == ps


def test_empty_documents_give_no_passage_and_are_counted() -> None:
    ps = split_passages({"a": "  \n ", "b": "甲。"}, max_chars=10)
    assert [p.id for p in ps] == ["b#p0"] and ps.n_empty_documents == 1 and ps.n_documents == 2


@pytest.mark.parametrize("max_chars,stride,match", [(0, 0, "max_chars 0"), (10, 10, "stride 10"),
                                                    (10, -1, "stride -1")])
def test_bad_lengths_are_refused(max_chars: int, stride: int, match: str) -> None:
    with pytest.raises(FinegrainError, match=match):
        split_passages({"a": "甲"}, max_chars=max_chars, stride=stride)


# --------------------------------------------------------------------------- properties

_ALPHABET = st.sampled_from(list("甲乙丙丁我们ab cd") + ["。", "！", "，", "\n", " ", ".", "?", "app", "Dr. "])
_TEXT = st.lists(_ALPHABET, max_size=80).map("".join)


def _non_space(text: str) -> str:
    return "".join(c for c in text if not c.isspace())


@settings(max_examples=150, deadline=None)
@given(_TEXT, st.integers(1, 30), st.sampled_from(["zh", "en"]))
def test_passages_cover_the_text_in_order_and_fit(text: str, max_chars: int, lang: str) -> None:
    spans, _ = split_text(text, max_chars, 0, lang)
    for s, e in spans:
        assert 0 <= s < e <= len(text) and e - s <= max_chars
        assert not text[s].isspace() and not text[e - 1].isspace()
    for (_, e1), (s2, _) in zip(spans, spans[1:]):
        assert e1 <= s2 and not text[e1:s2].strip()  # in order, only whitespace between
    assert "".join(_non_space(text[s:e]) for s, e in spans) == _non_space(text)


@settings(max_examples=150, deadline=None)
@given(_TEXT, st.integers(2, 30), st.data())
def test_strided_passages_overlap_by_at_most_the_stride_and_cover_everything(text, max_chars, data) -> None:
    stride = data.draw(st.integers(0, max_chars - 1))
    spans, _ = split_text(text, max_chars, stride, "zh")
    covered = [False] * len(text)
    for s, e in spans:
        assert e - s <= max_chars
        for k in range(s, e):
            covered[k] = True
    for (s1, e1), (s2, e2) in zip(spans, spans[1:]):
        assert s1 < s2 and e1 < e2 and e1 - s2 <= stride
    assert all(covered[k] for k, c in enumerate(text) if not c.isspace())


# --------------------------------------------------------------------------- real data and the verb


def test_dureader_passages_fit_and_short_documents_stay_whole(with_data_root: Path) -> None:
    ds = load_dataset("dureader/mini")
    ps = split_passages("dureader/mini", max_chars=256)
    assert ps.lang == "zh" and ps.n_documents == len(ds.corpus) and ps.longest <= 256
    by_doc: dict[str, list] = {}
    for p in ps:
        assert ds.corpus[p.doc_id].text[p.start:p.end] == p.text
        by_doc.setdefault(p.doc_id, []).append(p)
    for doc in ds.corpus.values():
        got = by_doc.get(doc.id, [])
        assert "".join(_non_space(p.text) for p in got) == _non_space(doc.text)
        if len(doc.text.strip()) <= 256:  # DuReader's rule 1: a short document is one passage
            assert [p.text for p in got] == [doc.text.strip()]
    assert any(len(v) > 1 for v in by_doc.values())


def test_cli_writes_a_beir_corpus_with_the_document_mapping(tmp_path: Path, with_data_root: Path, capsys) -> None:
    out = tmp_path / "passages" / "corpus.jsonl"
    code = main(["passages", "dureader/mini", "--max-chars", "200", "--stride", "20", "-o", str(out)])
    assert code == 0
    assert "passages from 133 documents" in capsys.readouterr().out
    corpus = read_corpus(out)
    assert all(len(d.text) <= 200 for d in corpus.values())
    assert all(doc_of(d.id) == d.meta["doc_id"] for d in corpus.values())
    first = json.loads(out.read_text(encoding="utf-8").split("\n")[0])
    assert set(first) == {"_id", "title", "text", "doc_id", "start", "end"}
    assert main(["passages", "dureader/mini", "--max-chars", "20", "--stride", "20", "-o", str(out)]) == 2
    assert "stride 20" in capsys.readouterr().err


def test_write_passages_into_a_folder(tmp_path: Path) -> None:
    ps = split_passages({"d": "甲乙。丙丁。"}, max_chars=3)
    path = write_passages(ps, tmp_path)
    assert path == tmp_path / "corpus.jsonl"
    assert [json.loads(line)["_id"] for line in path.read_text(encoding="utf-8").splitlines()] == ["d#p0", "d#p1"]
