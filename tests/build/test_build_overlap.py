"""``finegrain.build.overlap`` and ``finegrain overlap``: near-duplicates between two sets, by hand and on DuReader rows.

Scores are checked against values computed by hand, ROUGE-L against
rouge-score itself, the pre-filter against scoring every pair, and the
DuReader count against a plain set intersection of the TSV's first column.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from finegrain.build.overlap import DEFAULT_THRESHOLDS, find_overlap, shingles, write_pairs
from finegrain.build.textset import TextSet, read_text_set, write_without
from finegrain.build.units import exact_key, shared_units, units
from finegrain.cli.main import main
from finegrain.datasets import load_dataset
from finegrain.errors import DataFormatError, FinegrainError, UnknownNameError
from finegrain.io.idlist import read_overlap_ids
from finegrain.results.saved import SavedResults

UPSTREAM = ("dureader_mini", "upstream")


def _upstream(data_root: Path, name: str) -> Path:
    path = data_root.joinpath(*UPSTREAM, name)
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return path


def _lines(path: Path) -> list[str]:
    """The file's lines as finegrain reads them: split on \n only (passages hold U+2028 and the like)."""
    return path.read_text(encoding="utf-8").removesuffix("\n").split("\n")


def _first_column(path: Path) -> set[str]:
    out = set()
    for line in _lines(path):
        cell = line.split("\t")[0].strip()
        if cell and cell != "-":
            out.add(cell)
    return out


# --------------------------------------------------------------------------- units


def test_units_are_chinese_characters_and_whole_latin_words() -> None:
    assert units("oracle 时间格式", "zh") == ["oracle", "时", "间", "格", "式"]
    assert units("微信分享链接打开ＡＰＰ！", "zh") == ["微", "信", "分", "享", "链", "接", "打", "开", "app"]
    assert units("It's 3.5 km, Paris!", "en") == ["it", "s", "3", "5", "km", "paris"]
    assert units(" ，。!? ", "zh") == []


def test_exact_key_folds_width_case_and_whitespace() -> None:
    assert exact_key("  Oracle\t 时间格式 ") == exact_key("ＯＲＡＣＬＥ 时间格式") == "oracle 时间格式"
    assert exact_key("oracle时间格式") != exact_key("oracle 时间格式")


def test_shared_units_counts_with_multiplicity() -> None:
    a = [["a", "a", "b"], ["c"]]
    b = [["a", "b", "b"], ["a", "a", "a"], ["d"]]
    got = {(i, j): v for i, j, v in shared_units(a, b)}
    assert got == {(0, 0): 2, (0, 1): 2}  # min(2,1)+min(1,2); min(2,3); row 1 shares nothing


# --------------------------------------------------------------------------- methods by hand


def test_exact_matches_normalised_texts_and_counts_each_a_item_once() -> None:
    a = {"a1": "Oracle  时间格式", "a2": "回扣怎么做账", "a3": "论文参考文献的格式", "a4": "   "}
    b = {"b1": "oracle 时间格式", "b2": "ORACLE 时间格式", "b3": "论文参考文献格式"}
    r = find_overlap(a, b, by="exact")
    assert r.overlapping == ("a1",)
    assert [(p.a_id, p.b_id, p.score) for p in r.pairs] == [("a1", "b1", 1.0), ("a1", "b2", 1.0)]
    assert r.n_a == 4 and r.n_b == 3 and r.threshold is None
    assert r.summary() == "1 of 4 items in A overlap B (exact)"


def test_rouge_l_is_lcs_f_measure_on_characters_and_strictly_above_the_threshold() -> None:
    # 板蓝根的功效 (6) vs 板蓝根有什么功效 (8): LCS 板蓝根功效 = 5, F = 2*5/(6+8)
    a, b = {"a": "板蓝根的功效"}, {"b": "板蓝根有什么功效"}
    r = find_overlap(a, b, by="rougeL", threshold=0.7)
    assert r.pairs[0].score == pytest.approx(10 / 14)
    assert find_overlap(a, b, by="rougeL", threshold=0.72).pairs == ()
    # 甲乙丙丁戊 vs 甲乙丙己庚: LCS 3, F = 6/10 = 0.6 exactly: CapRetrieval's rule is "> 0.6"
    a, b = {"a": "甲乙丙丁戊"}, {"b": "甲乙丙己庚"}
    assert find_overlap(a, b, by="rougeL", threshold=0.6).pairs == ()
    assert find_overlap(a, b, by="rougeL", threshold=0.59).pairs[0].score == pytest.approx(0.6)
    assert find_overlap(a, b, by="rougeL").rule == "rougeL > 0.6"


def test_rouge_l_english_is_on_words() -> None:
    # the cat sat on the mat (6) vs the cat lay on the mat (6): LCS 5 -> 10/12
    r = find_overlap({"a": "The cat sat on the mat."}, {"b": "the cat lay on the mat"}, by="rougeL", lang="en")
    assert r.pairs[0].score == pytest.approx(10 / 12)


_WORDS = st.lists(st.sampled_from(["red", "car", "blue", "sky", "a", "the", "dog", "runs"]), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(st.lists(_WORDS, min_size=1, max_size=6), st.lists(_WORDS, min_size=1, max_size=6),
       st.sampled_from([0.3, 0.5, 0.6, 0.8]))
@example([["red"] * 5], [["red"] * 4 + ["car"]], 0.8)  # F is 0.8 exactly by the bound, 0.8000000000000002 in floats
def test_rouge_l_equals_rouge_score_and_the_prefilter_loses_no_pair(a_words, b_words, thr) -> None:
    from rouge_score import rouge_scorer

    a = [" ".join(w) for w in a_words]
    b = [" ".join(w) for w in b_words]
    reference = rouge_scorer.RougeScorer(["rougeL"])  # its own tokenizer: lower-cased ASCII words
    expected = {(str(i), str(j)): reference.score(tb, ta)["rougeL"].fmeasure
                for i, ta in enumerate(a) for j, tb in enumerate(b)}
    expected = {k: v for k, v in expected.items() if v > thr}
    got = {(p.a_id, p.b_id): p.score for p in find_overlap(a, b, by="rougeL", threshold=thr, lang="en").pairs}
    assert got.keys() == expected.keys()
    for k, v in got.items():
        assert v == pytest.approx(expected[k])


def test_minhash_scores_exact_jaccard_of_character_bigrams() -> None:
    # 甲乙丙丁戊己庚辛 vs 甲乙丙丁戊己庚壬: 7 bigrams each, 6 shared, union 8
    a = {"a1": "甲乙丙丁戊己庚辛", "a2": "完全不同的一句话"}
    b = {"b1": "甲乙丙丁戊己庚壬", "b2": "板蓝根颗粒的功效"}
    assert len(shingles(a["a1"], "zh", 2)) == 7
    r = find_overlap(a, b, by="minhash", threshold=0.5)
    assert [(p.a_id, p.b_id) for p in r.pairs] == [("a1", "b1")]
    assert r.pairs[0].score == pytest.approx(6 / 8)
    assert r.rule == "minhash Jaccard >= 0.5"
    assert find_overlap(a, b, by="minhash", threshold=0.8).pairs == ()
    assert find_overlap(a, b, by="minhash", threshold=0.5) == r  # deterministic (seeded permutations)


def test_minhash_english_uses_word_shingles() -> None:
    a = ["what is the capital of france", "how tall is the eiffel tower"]
    b = ["what is the capital city of france", "what is the population of germany"]
    r = find_overlap(a, b, by="minhash", threshold=0.4, lang="en")
    # bigrams: 5 vs 6, shared {what is, is the, the capital, of france} = 4, union 7
    assert [(p.a_id, p.b_id, round(p.score, 4)) for p in r.pairs] == [("0", "0", round(4 / 7, 4))]


def test_embedding_is_cosine_through_the_dense_index() -> None:
    from dense_fakes import BagOfWordsEncoder

    enc = BagOfWordsEncoder()
    a = {"a": "Red car"}
    b = {"b1": "red car fast", "b2": "blue sky"}
    # bag of words: (1,1)/sqrt2 . (1,1,1)/sqrt3 = 2/sqrt6
    r = find_overlap(a, b, by="embedding", threshold=0.8, encoder=enc, cache=False)
    assert [(p.a_id, p.b_id) for p in r.pairs] == [("a", "b1")]
    assert r.pairs[0].score == pytest.approx(2 / 6 ** 0.5, abs=1e-6)
    assert find_overlap(a, b, by="embedding", threshold=0.85, encoder=enc, cache=False).pairs == ()
    assert {kind for kind, _ in enc.calls} == {"query"}  # queries are encoded as queries
    assert r.params["model_id"] == enc.model_id


@pytest.mark.parametrize("by,threshold,match", [
    ("jaccard", None, "unknown overlap method 'jaccard'"),
    ("exact", 0.5, "takes no threshold"),
    ("rougeL", 0.0, "outside"),
    ("minhash", 1.5, "outside"),
])
def test_bad_method_or_threshold_is_refused(by, threshold, match) -> None:
    with pytest.raises(FinegrainError, match=match):
        find_overlap(["a"], ["a"], by=by, threshold=threshold)


def test_method_names_are_forgiving_about_case() -> None:
    assert find_overlap(["甲乙丙丁"], ["甲乙丙丁"], by="rouge-l").method == "rougeL"
    with pytest.raises(UnknownNameError):
        find_overlap(["a"], ["a"], by="bm25")
    assert DEFAULT_THRESHOLDS["rougeL"] == 0.6


# --------------------------------------------------------------------------- inputs


def test_dureader_train_files_share_the_queries_a_set_intersection_finds(data_root: Path) -> None:
    dual, cross = _upstream(data_root, "dual.train.tsv"), _upstream(data_root, "cross.train.tsv")
    shared = _first_column(dual) & _first_column(cross)
    r = find_overlap(dual, cross, by="exact")
    assert r.n_a == len(_first_column(dual))
    assert r.n_overlapping == len(shared) == 7  # PROVENANCE.md: "8 queries (7 shared with cross ...)"
    assert {p.a_text for p in r.pairs} == shared
    assert r.summary() == f"{len(shared)} of {r.n_a} queries in A overlap B (exact)"
    for method in ("rougeL", "minhash"):  # identical texts pass every similarity
        assert find_overlap(dual, cross, by=method).n_overlapping == len(shared)


def test_tsv_items_are_distinct_texts_named_by_their_first_line(data_root: Path) -> None:
    dual = read_text_set(_upstream(data_root, "dual.train.tsv"))
    lines = dual_lines = _lines(_upstream(data_root, "dual.train.tsv"))
    for item in dual:
        n = int(item.id[1:])
        assert lines[n - 1].split("\t")[0] == item.text
        assert all(dual_lines[k - 1].split("\t")[0] == item.text for k in dual.lines[item.id])
    assert sum(len(v) for v in dual.lines.values()) == len(lines)
    passages = read_text_set(_upstream(data_root, "dual.train.tsv"), "passages")
    assert {i.id.rsplit("c", 1)[1] for i in passages} == {"3", "5"}  # positive and negative passages
    para = read_text_set(_upstream(data_root, "dureader.para"), "passages")
    assert len(para) == len({line.split("\t")[1] for line in _lines(_upstream(data_root, "dureader.para"))})
    with pytest.raises(FinegrainError, match="has no queries"):
        read_text_set(_upstream(data_root, "dureader.para"))  # its first column is only '-'


def test_a_dataset_name_gives_its_queries_or_corpus(with_data_root: Path) -> None:
    cross = _upstream(with_data_root, "cross.train.tsv")
    r = find_overlap("dureader/mini", cross)
    assert r.lang == "zh" and r.n_a == 8
    assert set(r.overlapping) == {f"q{i}" for i in range(7)}  # q7 is the dual-only query
    corpus = read_text_set("dureader/mini", "passages")
    assert corpus.format == "dataset" and len(corpus) == 133


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_bad_tsv_shapes_name_the_line_and_the_fix(tmp_path: Path) -> None:
    three = _write(tmp_path / "three.tsv", "q1\tx\ty\nq2\tx\ty\n")
    with pytest.raises(DataFormatError, match=r"three.tsv:1: .*--column"):
        read_text_set(three, "passages")
    assert read_text_set(three, "passages", column=3).texts == ["y"]
    ragged = _write(tmp_path / "ragged.tsv", "q1\tp\nq2\tp\textra\n")
    with pytest.raises(DataFormatError, match=r"ragged.tsv:2: expected 2 tab-separated fields, as on line 1"):
        read_text_set(ragged)
    with pytest.raises(FinegrainError, match="has no queries"):
        read_text_set(_write(tmp_path / "empty.tsv", "\n\n"))
    with pytest.raises(FinegrainError, match="no file or folder"):
        read_text_set(tmp_path / "missing.tsv")
    with pytest.raises(DataFormatError, match=r"choose a column between 1 and 3"):
        read_text_set(three, column=4)


def test_jsonl_records_and_their_errors(tmp_path: Path) -> None:
    q = _write(tmp_path / "queries.jsonl", '{"_id": "q1", "text": "甲乙"}\n{"id": 2, "query": "丙丁"}\n')
    ts = read_text_set(q)
    assert ts.format == "jsonl" and ts.ids == ("q1", "2") and ts.texts == ["甲乙", "丙丁"]
    dup = _write(tmp_path / "dup.jsonl", '{"_id": "q1", "text": "a"}\n{"_id": "q1", "text": "b"}\n')
    with pytest.raises(DataFormatError, match=r"dup.jsonl:2: .*first at line 1"):
        read_text_set(dup)
    notext = _write(tmp_path / "notext.jsonl", '{"_id": "q1", "body": "a"}\n')
    with pytest.raises(DataFormatError, match=r"notext.jsonl:1: expected a field 'text' or 'query'"):
        read_text_set(notext)


# --------------------------------------------------------------------------- writing A without its overlap


def test_drop_copies_the_other_rows_byte_for_byte(tmp_path: Path, data_root: Path) -> None:
    dual, cross = _upstream(data_root, "dual.train.tsv"), _upstream(data_root, "cross.train.tsv")
    a = read_text_set(dual)
    r = find_overlap(a, read_text_set(cross))
    out = write_without(a, r.overlapping, tmp_path / "dual.clean.tsv")
    kept = [line for line in _lines(dual) if line.split("\t")[0] not in {p.a_text for p in r.pairs}]
    assert _lines(out) == kept
    assert find_overlap(out, cross).n_overlapping == 0
    assert read_text_set(out).texts == sorted(_first_column(dual) - _first_column(cross))


def test_drop_of_jsonl_and_of_a_dataset(tmp_path: Path, with_data_root: Path) -> None:
    q = _write(tmp_path / "q.jsonl", '{"_id": "a", "text": "微信分享链接打开app"}\n{"_id": "b", "text": "新的问题"}\n')
    out = write_without(read_text_set(q), ["a"], tmp_path / "q.clean.jsonl")
    assert out.read_text(encoding="utf-8") == '{"_id": "b", "text": "新的问题"}\n'
    ds_set = read_text_set("dureader/mini")
    folder = write_without(ds_set, ["q0", "q3"], tmp_path / "mini-clean")
    ds = load_dataset(folder)
    assert set(ds.queries) == {f"q{i}" for i in range(8)} - {"q0", "q3"}
    assert "q0" not in ds.qrels and len(ds.corpus) == 133
    with pytest.raises(FinegrainError, match="not an empty folder"):
        write_without(ds_set, ["q1"], folder)
    with pytest.raises(FinegrainError, match="no format to write back"):
        write_without(TextSet((), "mapping", "memory", "items"), [], tmp_path / "x")


# --------------------------------------------------------------------------- pairs file and eval --split-by


def test_pairs_file_round_trip_gives_each_a_id_once(tmp_path: Path) -> None:
    r = find_overlap({"a1": "甲乙", "a2": "丙丁"}, {"b1": "甲乙", "b2": " 甲乙\t", "b3": "丙丁"})
    path = write_pairs(r, tmp_path / "pairs.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [set(row) for row in rows] == [{"a_id", "b_id", "a_text", "b_text", "score", "method"}] * 3
    assert read_overlap_ids(path) == ("a1", "a2")
    plain = _write(tmp_path / "ids.txt", "q3\nq5\n")
    assert read_overlap_ids(plain) == ("q3", "q5")
    with pytest.raises(DataFormatError, match="no id"):
        read_overlap_ids(_write(tmp_path / "none.txt", "\n"))


def test_eval_split_by_overlap_reports_overlap_and_others(tmp_path: Path, with_data_root: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    write_pairs(find_overlap("dureader/mini", _upstream(with_data_root, "cross.train.tsv")), pairs)
    out = tmp_path / "ev"
    code = main(["eval", "-d", "dureader/mini", "-r", "bm25", "-m", "mrr@10,recall@1",
                 "--split-by", f"overlap={pairs}", "-o", str(out), "-q"])
    assert code == 0
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    inside = set(read_overlap_ids(pairs))
    assert set(res["by_type"]) == {"Overlap", "Others"}
    for key in ("mrr@10", "recall@1"):
        per_query = res["per_query"][key]
        for group, members in (("Overlap", inside), ("Others", set(per_query) - inside)):
            values = [v for q, v in per_query.items() if q in members]
            cell = res["by_type"][group][key]
            assert cell["n"] == len(values)
            assert cell["value"] == pytest.approx(sum(values) / len(values))
    assert {q: r["type"] for q, r in res["queries"].items()} == {
        q: "Overlap" if q in inside else "Others" for q in res["queries"]}
    assert res["provenance"]["query_groups"]["groups"] == {"Overlap": len(inside), "Others": 8 - len(inside)}
    saved = SavedResults.from_json(res)
    assert set(saved.query_groups().values()) == {"Overlap", "Others"}


@pytest.mark.parametrize("spec,match", [
    ("overlap", "is not KIND=FILE"),
    ("leak=x.jsonl", "unknown query split 'leak'"),
    ("overlap=/nonexistent/pairs.jsonl", "file not found"),
])
def test_eval_split_by_errors(spec: str, match: str, tmp_path: Path, capsys) -> None:
    code = main(["eval", "-d", "embedded/captions-en", "-r", "bm25", "--split-by", spec, "-o", str(tmp_path), "-q"])
    assert code == 2
    assert match in capsys.readouterr().err


def test_eval_split_by_a_file_of_other_ids_is_refused(tmp_path: Path, capsys) -> None:
    ids = _write(tmp_path / "ids.txt", "nope1\nnope2\n")
    code = main(["eval", "-d", "embedded/captions-en", "-r", "bm25", "--split-by", f"overlap={ids}",
                 "-o", str(tmp_path / "o"), "-q"])
    assert code == 2
    assert "none of the 2 query ids" in capsys.readouterr().err


# --------------------------------------------------------------------------- the verb


def test_cli_prints_a_table_within_80_columns_and_the_summary(tmp_path: Path, data_root: Path, capsys,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    dual, cross = _upstream(data_root, "dual.train.tsv"), _upstream(data_root, "cross.train.tsv")
    pairs, clean = tmp_path / "pairs.jsonl", tmp_path / "clean.tsv"
    code = main(["overlap", str(dual), str(cross), "--by", "exact", "-o", str(pairs), "--drop", str(clean)])
    out = capsys.readouterr().out
    assert code == 0
    n = len(_first_column(dual) & _first_column(cross))
    assert f"{n} of {len(_first_column(dual))} queries in A overlap B (exact)" in out
    assert max(cell_len(line) for line in out.splitlines() if "│" in line or "━" in line) <= 80
    assert len(pairs.read_text(encoding="utf-8").splitlines()) == n
    assert clean.is_file()


@pytest.mark.parametrize("args,match", [
    (["--by", "levenshtein"], "unknown overlap method"),
    (["--by", "rougeL", "--threshold", "2"], "outside (0, 1]"),
    (["--by", "exact", "--threshold", "0.5"], "takes no threshold"),
    (["--field", "docs"], "unknown field 'docs'"),
])
def test_cli_bad_options_are_one_line_errors(args, match, tmp_path: Path, capsys) -> None:
    a = _write(tmp_path / "a.txt", "甲\n")
    code = main(["overlap", str(a), str(a), *args])
    err = capsys.readouterr().err
    assert code == 2 and match in err and "Traceback" not in err
