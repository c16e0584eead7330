"""``finegrain.build.distant`` and ``finegrain distant-label``: DuReader's Algorithm 1, span F1 against answers.

Span F1 values computed by hand; the vectorised best span against a brute
force over every substring (hypothesis); the threshold's >= at its boundary;
candidates from doc_ids; real DuReader passages with answers cut from them.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finegrain.build.distant import (
    Answers,
    best_span,
    distant_label,
    read_answers,
    span_f1,
    write_qrels,
)
from finegrain.build.passages import split_passages
from finegrain.build.units import units
from finegrain.cli.main import main
from finegrain.datasets import load_dataset
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.io.beir import iter_qrels_tsv, read_qrels_tsv


def _brute(p: list[str], a: list[str]) -> float:
    """max over every substring s of p of 2|s ∩ a| / (|s| + |a|) (bags)."""
    bag, best = Counter(a), 0.0
    for i in range(len(p)):
        for j in range(i + 1, len(p) + 1):
            c = sum((Counter(p[i:j]) & bag).values())
            best = max(best, 2 * c / (j - i + len(a)))
    return best


# --------------------------------------------------------------------------- by hand


def test_span_f1_of_a_chinese_passage_by_hand() -> None:
    # answer 天气好 (3 units); span 天气很好: 4 units, 3 shared -> 2*3/(4+3) = 6/7
    m = span_f1("今天天气很好，我们去公园。", "天气好", "zh")
    assert m.f1 == pytest.approx(6 / 7)
    assert "今天天气很好，我们去公园。"[m.start:m.end] == "天气很好"


def test_span_f1_of_an_english_passage_by_hand() -> None:
    # answer: paris is the capital (4); span "The capital of France is Paris": 6 words, 4 shared -> 8/10
    text = "The capital of France is Paris, a big city."
    m = span_f1(text, "Paris is the capital", "en")
    assert m.f1 == pytest.approx(0.8)
    assert text[m.start:m.end] == "The capital of France is Paris"


def test_span_f1_counts_repeated_units_once_per_answer_occurrence() -> None:
    # answer 好好 (2); passage 好好好: span 好好 -> 2*2/(2+2) = 1
    assert span_f1("好好好", "好好", "zh").f1 == 1.0
    # answer 好 (1); passage 好好: best span 好 -> 1
    assert span_f1("好好", "好", "zh").f1 == 1.0
    assert span_f1("甲乙", "丙丁", "zh").f1 == 0.0


def test_a_latin_word_is_one_unit_in_zh() -> None:
    assert units("用app打开", "zh") == ["用", "app", "打", "开"]
    # answer 'app打开' = 3 units: the span 'app打开' matches it exactly
    assert span_f1("微信里用app打开链接", "app打开", "zh").f1 == 1.0


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from("abcde"), max_size=14), st.lists(st.sampled_from("abcdf"), max_size=6),
       st.sampled_from([0.0, 0.3, 0.5, 0.8]))
def test_best_span_equals_the_brute_force_maximum(p, a, floor) -> None:
    f1, i, j = best_span(p, a, floor=floor)
    expected = _brute(p, a)
    if floor == 0.0 or expected >= floor:
        assert f1 == pytest.approx(expected)
    if f1 > 0:  # the span it names has that F1
        c = sum((Counter(p[i:j]) & Counter(a)).values())
        assert f1 == pytest.approx(2 * c / (j - i + len(a)))


# --------------------------------------------------------------------------- labelling


def test_the_threshold_is_inclusive_as_in_algorithm_1() -> None:
    # answer 甲乙丙 (3); passage 甲丁戊: best span 甲 -> 2*1/(1+3) = 0.5 exactly
    passages = {"p1": "甲丁戊", "p2": "己庚辛"}
    got = distant_label(passages, {"q": ["甲乙丙"]}, threshold=0.5, lang="zh")
    assert [(lb.query_id, lb.passage_id, lb.span) for lb in got.labels] == [("q", "p1", "甲")]
    assert got.labels[0].f1 == pytest.approx(0.5)
    assert distant_label(passages, {"q": ["甲乙丙"]}, threshold=0.51, lang="zh").labels == ()


def test_the_best_answer_of_several_is_kept_and_counts_are_reported() -> None:
    passages = {"p1": "板蓝根具有清热解毒的功效。", "p2": "今天天气很好。"}
    answers = {"q1": ["没有关系的话", "清热解毒"], "q2": ["。，"], "q3": ["火星上的大气层"]}
    got = distant_label(passages, answers, threshold=0.5, lang="zh")
    assert [(lb.query_id, lb.passage_id, lb.answer, lb.span, lb.f1) for lb in got.labels] == [
        ("q1", "p1", "清热解毒", "清热解毒", 1.0)]
    assert got.no_answer == ("q2",)  # punctuation only: no unit
    assert got.no_positive == ("q3",)  # best span 气 or 的: 2*1/(1+7) = 0.25
    assert span_f1(passages["p2"], "火星上的大气层", "zh").f1 == pytest.approx(0.25)
    assert got.summary().startswith("1 relevant passages for 1 of 3 queries (span F1 >= 0.5, zh)")


def test_doc_ids_restrict_candidates_and_write_negatives(tmp_path: Path) -> None:
    passages = {"d1#p0": "清热解毒。", "d1#p1": "别的内容。", "d2#p0": "清热解毒。"}
    ans = Answers({"q": ("清热解毒",)}, {"q": ("d1", "d9")})
    got = distant_label(passages, ans, threshold=0.5, lang="zh")
    assert [lb.passage_id for lb in got.labels] == ["d1#p0"]  # d2 is not a candidate
    assert got.negatives == (("q", "d1#p1"),)
    assert got.unknown_doc_ids == ("d9",)
    path = write_qrels(got, tmp_path / "qrels.tsv")
    assert path.read_text(encoding="utf-8") == "query-id\tcorpus-id\tscore\nq\td1#p0\t1\nq\td1#p1\t0\n"


def test_answers_file_errors_name_the_line(tmp_path: Path) -> None:
    def write(text: str) -> Path:
        path = tmp_path / "answers.jsonl"
        path.write_text(text, encoding="utf-8")
        return path

    ok = read_answers(write('{"question_id": 7, "answers": ["a"], "doc_ids": ["d1", 2]}\n'))
    assert ok.answers == {"7": ("a",)} and ok.doc_ids == {"7": ("d1", "2")}
    with pytest.raises(DataFormatError, match=r"answers.jsonl:1: expected field 'answers' to be a list"):
        read_answers(write('{"query_id": "q", "answers": "a"}\n'))
    with pytest.raises(DataFormatError, match=r"answers.jsonl:2: expected answers as a list of strings"):
        read_answers(write('{"query_id": "q", "answers": ["a"]}\n{"query_id": "r", "answers": [1]}\n'))
    with pytest.raises(DataFormatError, match=r"answers.jsonl:2: .*first at line 1"):
        read_answers(write('{"query_id": "q", "answers": ["a"]}\n{"query_id": "q", "answers": ["b"]}\n'))
    with pytest.raises(DataFormatError, match="no record"):
        read_answers(write("\n"))
    with pytest.raises(FinegrainError, match="outside"):
        distant_label({"p": "a"}, {"q": ["a"]}, threshold=0)


@pytest.mark.parametrize("bad", ["[null]", '["cat", null]', "[3]", '[["x"]]', '[{"a": 1}]', "[true]"])
def test_every_answer_must_be_a_string(bad: str, tmp_path: Path, capsys) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text(f'{{"query_id": "q0", "answers": ["mat"]}}\n{{"query_id": "q1", "answers": {bad}}}\n',
                       encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"answers.jsonl:2: expected answers as a list of strings"):
        read_answers(answers)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "d1", "text": "the cat sat on the mat"}\n', encoding="utf-8")
    out = tmp_path / "qrels.tsv"
    code = main(["distant-label", str(corpus), "--answers", str(answers), "-o", str(out), "-l", "en"])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("error: ") and "answers.jsonl:2" in lines[0]
    assert not out.exists()


# --------------------------------------------------------------------------- real data


def test_answers_cut_from_real_passages_label_them(with_data_root: Path) -> None:
    ds = load_dataset("dureader/mini")
    ps = split_passages("dureader/mini", max_chars=256)
    corpus = {p.id: p.text for p in ps}
    positives = {q: sorted(ds.qrels.relevant(q)) for q in ds.queries}
    # each query's answer: 20 characters from the middle of the first passage of its first positive document
    answers, source = {}, {}
    for q, docs in positives.items():
        pid = f"{docs[0]}#p0"
        text = corpus[pid]
        mid = len(text) // 2
        answers[q] = [text[mid:mid + 20]]
        source[q] = pid
    got = distant_label(ps.to_corpus(), answers, threshold=0.5)
    assert got.lang == "zh"
    labelled = {(lb.query_id, lb.passage_id): lb for lb in got.labels}
    for q, pid in source.items():
        lb = labelled[(q, pid)]
        assert lb.f1 == 1.0 and lb.span.strip() in answers[q][0]
    # every label's F1 is what a brute force over the passage's substrings finds (checked on short passages)
    short = [lb for lb in got.labels if len(units(corpus[lb.passage_id], "zh")) <= 60][:5]
    for lb in short:
        assert lb.f1 == pytest.approx(_brute(units(corpus[lb.passage_id], "zh"), units(lb.answer, "zh")))


def test_cli_labels_passages_written_by_finegrain_passages(tmp_path: Path, with_data_root: Path, capsys) -> None:
    corpus = tmp_path / "corpus.jsonl"
    assert main(["passages", "dureader/mini", "--max-chars", "256", "-o", str(corpus)]) == 0
    first = json.loads(corpus.read_text(encoding="utf-8").split("\n")[0])
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"query_id": "q0", "answers": [first["text"][:30]],
                                   "doc_ids": [first["doc_id"], "p1"]}, ensure_ascii=False) + "\n", encoding="utf-8")
    qrels, details = tmp_path / "qrels.tsv", tmp_path / "details.jsonl"
    code = main(["distant-label", str(corpus), "--answers", str(answers), "--threshold", "0.5",
                 "-o", str(qrels), "--details", str(details)])
    assert code == 0
    assert "for 1 of 1 queries (span F1 >= 0.5, zh)" in capsys.readouterr().out
    rows = {(q, d): g for _, q, d, g in iter_qrels_tsv(qrels)}
    assert rows[("q0", first["_id"])] == 1
    assert all(d.startswith((first["doc_id"] + "#", "p1#")) for _, d in rows)  # only the named documents
    detail = json.loads(details.read_text(encoding="utf-8").split("\n")[0])
    assert detail["f1"] == 1.0 and detail["span"] == first["text"][:30].strip()
    assert main(["distant-label", str(corpus), "--answers", str(answers), "--threshold", "1.5",
                 "-o", str(qrels)]) == 2


@pytest.mark.parametrize("bad_id", ["p\t1", "p1\nq9\tp7\t2", "p\x00", "p" * 1_001])
def test_cli_refuses_ids_a_qrels_line_cannot_hold_and_writes_nothing(tmp_path: Path, capsys, bad_id: str) -> None:
    """A passage id with a tab, a line break (which would inject a judgement for another query) or a
    NUL, or an over-long one, is one error line naming the id; no qrels file is left behind."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"_id": bad_id, "text": "the cat sat on the mat"}) + "\n"
                      + json.dumps({"_id": "ok", "text": "dogs bark"}) + "\n", encoding="utf-8")
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"query_id": "q1", "answers": ["the cat sat on the mat"]}) + "\n", encoding="utf-8")
    qrels = tmp_path / "qrels.tsv"
    code = main(["distant-label", str(corpus), "--answers", str(answers), "--threshold", "0.5", "--lang", "en",
                 "-o", str(qrels)])
    err = capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and repr(bad_id)[:40] in lines[0]
    assert not qrels.exists() and sorted(tmp_path.iterdir()) == sorted([corpus, answers])


def test_ids_with_spaces_are_fine_in_beir_qrels(tmp_path: Path) -> None:
    got = distant_label({"IMG 1.jpg": "the cat sat"}, {"q 1": ["the cat sat"]}, threshold=0.5, lang="en")
    assert read_qrels_tsv(write_qrels(got, tmp_path / "qrels.tsv")).to_dict() == {"q 1": {"IMG 1.jpg": 1}}


def test_a_labelling_without_any_judgement_is_refused_and_nothing_is_written(tmp_path: Path, capsys) -> None:
    """No relevant passage and no candidate: the qrels file would hold only its header, which every
    qrels reader refuses ("no judgement"); it is one error line, and no file."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"_id": "p1", "text": "the cat sat on the mat"}) + "\n", encoding="utf-8")
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"query_id": "q1", "answers": ["quantum chromodynamics"]}) + "\n", encoding="utf-8")
    qrels = tmp_path / "qrels.tsv"
    code = main(["distant-label", str(corpus), "--answers", str(answers), "--lang", "en", "-o", str(qrels)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: ") and "no judgement to write" in err[0]
    assert not qrels.exists()
