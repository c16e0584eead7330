"""``--compat trec_eval``: each rule on a hand-made case whose numbers are worked out here, next to strict mode.

The expected values come from trec_eval's source, not from pytrec_eval (which
differs from the trec_eval binary on near-tied scores; see the last tests).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from tests.cli.test_evaluate_cli import run_cli as cli  # the evaluate verb through main, with its output
from tests.cli.test_evaluate_cli import write

from finegrain.errors import FinegrainError
from finegrain.evaluate import evaluate
from finegrain.evaluate.compat import Compat, CompatOptions
from finegrain.evaluate.files import evaluate_files
from finegrain.io.beir import qrels_path, read_beir
from finegrain.io.files import QrelsFormat, detect_qrels_format, read_qrels_file
from finegrain.metrics.spec import parse_metric
from finegrain.types import Qrels, Run


def one_error_line(err: str) -> None:
    assert "Traceback" not in err
    assert sum(line.startswith("error:") for line in err.splitlines()) == 1, err


# --------------------------------------------------------------------------- reading


F6_QRELS = "# a comment\nq1 0 d1 1\nq1 0 d2 0\nq3 0 d9 0\nq2 0 d3 2\n"
F6_RUN = "q1 Q0 d1 1 2.0 s extra fields\nq2 Q0 d3 1 1.0 s\nq3 Q0 d9 1 0.5 s\n"


def test_comments_and_trailing_fields_are_read_and_the_no_relevant_query_averages_as_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    q, r = write(tmp_path / "q", F6_QRELS), write(tmp_path / "r", F6_RUN)
    code, out, err = cli(capsys, q, r, "-m", "ndcg@10", "--compat", "trec_eval", "--json")
    assert code == 0, err
    # q1: d1 (grade 1) at rank 1 = the ideal -> 1; q2: d3 (grade 2) at rank 1 -> 1;
    # q3: only a grade-0 judgement -> DCG = IDCG = 0 -> trec_eval's 0, averaged: (1 + 1 + 0) / 3
    assert json.loads(out) == {"ndcg@10": pytest.approx(2 / 3)}


@pytest.mark.parametrize("which", ["qrels", "run"])
def test_strict_mode_refuses_what_compat_reads(tmp_path: Path, capsys: pytest.CaptureFixture[str], which: str) -> None:
    clean_q = "q1 0 d1 1\n"
    clean_r = "q1 Q0 d1 1 2.0 s\n"
    q = write(tmp_path / "q", F6_QRELS if which == "qrels" else clean_q)
    r = write(tmp_path / "r", F6_RUN if which == "run" else clean_r)
    code, _, err = cli(capsys, q, r, "-m", "ndcg@10")
    assert code == 2
    one_error_line(err)
    assert "--compat trec_eval" in err


def test_compat_still_refuses_a_trailing_qrels_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # get_qrels.c wants exactly 4 fields ("Malformed line"), comments or not
    q = write(tmp_path / "q", "q1 0 d1 1 extra\n")
    r = write(tmp_path / "r", "q1 Q0 d1 1 2.0 s\n")
    code, _, err = cli(capsys, q, r, "--compat", "trec_eval")
    assert code == 2
    one_error_line(err)


def test_hash_inside_a_docno_is_not_a_comment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # as in trec_eval's test/qrels.test.with-comments: "# comment in docno" then "301 0 CR#93E-1860 0"
    q = write(tmp_path / "q", "# comment here\n301 0 CR#93E-1860 1\n# and comment here\n301 0 CR93E-1952 0\n")
    r = write(tmp_path / "r", "# a run comment\n301 Q0 CR#93E-1860 1 3.5 run extra\n  # indented comment\n")
    code, out, err = cli(capsys, q, r, "-m", "P@1", "--compat", "trec_eval", "--json")
    assert code == 0, err
    assert json.loads(out) == {"precision@1": 1.0}  # CR#93E-1860 is judged relevant and ranked first


# --------------------------------------------------------------------------- which queries are averaged

# q1: relevant d1 at rank 1 (RR 1); q2, q5: only grade-0 judgements; q3: not in the run;
# q4: relevant d5 at rank 2 (RR 1/2); q9: in the run only.
AVG_QRELS = "q1 0 d1 1\nq2 0 d3 0\nq3 0 d4 1\nq4 0 d5 1\nq5 0 d6 0\n"
AVG_RUN = (
    "q1 Q0 d1 1 1.0 s\n"
    "q2 Q0 d3 1 1.0 s\n"
    "q4 Q0 x 1 2.0 s\nq4 Q0 d5 2 1.0 s\n"
    "q5 Q0 d6 1 1.0 s\n"
    "q9 Q0 d1 1 1.0 s\n"
)


def test_which_queries_enter_the_mean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q, r = write(tmp_path / "q", AVG_QRELS), write(tmp_path / "r", AVG_RUN)
    means = {}
    for mode in (["--compat", "strict"], ["--compat", "trec_eval"], ["--compat", "trec_eval", "--complete"]):
        code, out, err = cli(capsys, q, r, "-m", "mrr", *mode, "--json", "--per-query")
        assert code == 0, err
        means[" ".join(mode)] = json.loads(out)
    strict, te, te_c = means.values()
    # strict: qrels queries, no-relevant q2 and q5 excluded, q3 missing -> 0: (1 + 0 + 1/2) / 3
    assert strict["aggregate"]["mrr"] == pytest.approx(1.5 / 3)
    assert set(strict["per_query"]["mrr"]) == {"q1", "q3", "q4"}
    # trec_eval: queries in qrels and run: q1, q2, q4, q5, the no-relevant ones as 0: (1 + 0 + 1/2 + 0) / 4
    assert te["aggregate"]["mrr"] == pytest.approx(1.5 / 4)
    assert te["per_query"]["mrr"] == {"q1": 1.0, "q2": 0.0, "q4": 0.5, "q5": 0.0}
    assert te["denominators"]["mrr"] == {
        "n_universe": 5, "n_scored": 4, "n_excluded_no_relevant": 0, "n_missing_from_run": 0, "n_undefined": 0,
        "n_ignored_run_queries": 1, "n_excluded_not_in_run": 1, "n_no_relevant_as_zero": 2,
    }
    assert te["compat"] == {"mode": "trec_eval", "complete": False, "level_for_rel": None}
    # trec_eval -c: every qrels query, q3 (missing) as 0: (1 + 0 + 0 + 1/2 + 0) / 5
    assert te_c["aggregate"]["mrr"] == pytest.approx(1.5 / 5)
    assert te_c["denominators"]["mrr"]["n_missing_from_run"] == 1
    assert te_c["denominators"]["mrr"]["n_excluded_not_in_run"] == 0
    assert te_c["compat"]["complete"] is True


def test_table_output_names_the_mode_and_its_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q, r = write(tmp_path / "q", AVG_QRELS), write(tmp_path / "r", AVG_RUN)
    code, out, err = cli(capsys, q, r, "-m", "mrr", "--compat", "trec_eval")
    assert code == 0, err
    assert f"mrr{' ' * 19}\tall\t{1.5 / 4:.4f}" in out.splitlines()
    notes = "\n".join(line for line in out.splitlines() if line.startswith("#"))
    assert "compat trec_eval" in notes
    assert "excluded (not in the run) 1" in notes and "no relevant item, counted as 0: 2" in notes


def test_no_common_query_is_an_error_as_in_trec_eval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q = write(tmp_path / "q", "q1 0 d1 1\n")
    r = write(tmp_path / "r", "q2 Q0 d1 1 1.0 s\n")
    code, _, err = cli(capsys, q, r, "--compat", "trec_eval")
    assert code == 2
    one_error_line(err)
    assert "No queries with both results and relevance info" in err
    # with -c the qrels query is scored as missing: 0
    code, out, err = cli(capsys, q, r, "-m", "ndcg@10", "--compat", "trec_eval", "--complete", "--json")
    assert code == 0, err
    assert json.loads(out) == {"ndcg@10": 0.0}


# --------------------------------------------------------------------------- set_P of an empty prediction, 0/0


def test_set_metrics_of_an_empty_prediction_and_no_relevant_item() -> None:
    qrels = Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 0}})
    # q1 finds d1; q2 returns nothing (an empty prediction, possible through the API); q3 returns d3 (not relevant)
    run = Run.from_dict({"q1": {"d1": 1.0}, "q2": {}, "q3": {"d3": 1.0}})
    metrics = ["set_precision", "set_recall", "set_f1"]
    strict = evaluate(qrels, run, metrics)
    te = evaluate(qrels, run, metrics, compat="trec_eval")
    # set_P: q1 1/1, q2 0/0, q3 0/1. strict: q2 undefined -> (1 + 0) / 2; trec_eval (m_set_P.c): 0 -> (1 + 0 + 0) / 3
    assert strict["set_precision"].value == pytest.approx(1 / 2)
    assert strict["set_precision"].denominators.n_undefined == 1
    assert te["set_precision"].value == pytest.approx(1 / 3)
    assert te["set_precision"].per_query == {"q1": 1.0, "q2": 0.0, "q3": 0.0}
    assert te["set_precision"].denominators.n_undefined == 0
    # set_recall: q1 1/1, q2 0/1, q3 0/0. strict: q3 undefined -> 1/2; trec_eval (m_set_recall.c): 0 -> 1/3
    assert strict["set_recall"].value == pytest.approx(1 / 2)
    assert te["set_recall"].value == pytest.approx(1 / 3)
    # set_F: q1 1, q2 0 (only G non-empty), q3 0 (only P non-empty) in both modes: 1/3
    assert strict["set_f1"].value == pytest.approx(1 / 3) == te["set_f1"].value


def test_set_precision_of_a_query_missing_from_the_run_with_complete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    q, r = write(tmp_path / "q", AVG_QRELS), write(tmp_path / "r", AVG_RUN)
    # set_P per query: q1 1/1, q2 0/1, q3 nothing returned, q4 1/2, q5 0/1
    code, out, _ = cli(capsys, q, r, "-m", "set_P", "--json")
    assert json.loads(out) == {"set_precision": pytest.approx(1.5 / 4)}  # strict: q3 undefined
    code, out, _ = cli(capsys, q, r, "-m", "set_P", "--compat", "trec_eval", "--json")
    assert json.loads(out) == {"set_precision": pytest.approx(1.5 / 4)}  # q3 not in the run: not averaged
    code, out, _ = cli(capsys, q, r, "-m", "set_P", "--compat", "trec_eval", "--complete", "--json")
    assert json.loads(out) == {"set_precision": pytest.approx(1.5 / 5)}  # -c: q3 averaged as 0


# --------------------------------------------------------------------------- relevance levels (-l)

# q1: d1 grade 1 ranked 1st, d2 grade 2 ranked 2nd; q2: d3 grade 1 ranked 1st.
LVL_QRELS = "q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 1\n"
LVL_RUN = "q1 Q0 d1 1 2.0 s\nq1 Q0 d2 2 1.0 s\nq2 Q0 d3 1 1.0 s\n"


def test_level_for_rel_applies_to_every_metric_but_ndcg(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q, r = write(tmp_path / "q", LVL_QRELS), write(tmp_path / "r", LVL_RUN)
    code, out, err = cli(capsys, q, r, "-m", "P@1,map,ndcg@2", "--compat", "trec_eval", "--level-for-rel", "2", "--json")
    assert code == 0, err
    got = json.loads(out)
    # -l 2: only d2 is relevant. P@1: q1 d1 (grade 1) -> 0; q2 has nothing at level 2 -> 0: (0 + 0) / 2
    assert got["precision@1(rel=2)"] == 0.0
    # map: q1 d2 at rank 2 -> AP = (1/2) / 1; q2 -> 0: (0.5 + 0) / 2
    assert got["map(rel=2)"] == pytest.approx(0.25)
    # ndcg ignores -l (m_ndcg_cut.c: the gain is the grade). q1: DCG = 1/log2(2) + 2/log2(3),
    # IDCG = 2/log2(2) + 1/log2(3); q2: 1/1 = 1
    q1 = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    assert got["ndcg@2"] == pytest.approx((q1 + 1) / 2)
    # strict finegrain's ndcg@2(rel=2) is another measure (grades below 2 gain 0): q1 = (2/log2(3)) / 2; q2 excluded
    code, out, _ = cli(capsys, q, r, "-m", "ndcg@2(rel=2)", "--json")
    assert json.loads(out) == {"ndcg@2(rel=2)": pytest.approx((2 / math.log2(3)) / 2)}


def test_level_rules_refuse_ambiguous_requests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q, r = write(tmp_path / "q", LVL_QRELS), write(tmp_path / "r", LVL_RUN)
    for args, needle in [
        (["-m", "ndcg@2(rel=2)", "--compat", "trec_eval"], "ignores relevance levels"),
        (["-m", "P@1(rel=3)", "--compat", "trec_eval", "--level-for-rel", "2"], "--level-for-rel sets 2"),
        (["-m", "P@1", "--level-for-rel", "2"], "option of --compat trec_eval"),
        (["-m", "P@1", "--complete"], "option of --compat trec_eval"),
        (["-m", "P@1", "--compat", "trec_eval", "--level-for-rel", "0"], "not an integer >= 1"),
        (["-m", "median_rank", "--compat", "trec_eval"], "no trec_eval measure"),
        (["-m", "P@1", "--compat", "trec-eval"], "unknown compatibility mode"),
    ]:
        code, _, err = cli(capsys, q, r, *args)
        assert code == 2, args
        one_error_line(err)
        assert needle in err, (args, err)


def test_queries_option_is_refused_in_compat(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q, r = write(tmp_path / "q", LVL_QRELS), write(tmp_path / "r", LVL_RUN)
    ids = write(tmp_path / "ids", "q1\n")
    code, _, err = cli(capsys, q, r, "--queries", ids, "--compat", "trec_eval")
    assert code == 2
    one_error_line(err)
    assert "--complete" in err


# --------------------------------------------------------------------------- set_F.x


def test_set_f_x_is_read_with_x_equal_beta_squared(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # q1: relevant d1, d2, d3; the run returns d1 (relevant) and d4 (not): TP 1, |P| 2, |G| 3 -> P = 1/2, R = 1/3
    q = write(tmp_path / "q", "q1 0 d1 1\nq1 0 d2 1\nq1 0 d3 1\nq1 0 d4 0\n")
    r = write(tmp_path / "r", "q1 Q0 d1 1 2.0 s\nq1 Q0 d4 2 1.0 s\n")
    code, out, err = cli(capsys, q, r, "-m", "set_F.4", "-m", "set_F.0.25", "-m", "set_F.2", "-m", "set_F",
                         "--compat", "trec_eval", "--json")
    assert code == 0, err
    got = json.loads(out)
    P, R = 1 / 2, 1 / 3

    def trec_eval_set_f(x: float) -> float:  # m_set_F.c
        return (x + 1) * P * R / (x * P + R)

    assert trec_eval_set_f(4) == pytest.approx(5 / 14)  # = F_2: 5 TP / (5 TP + 4 FN + FP) = 5 / (5 + 8 + 1)
    assert got["set_f2"] == pytest.approx(5 / 14)
    assert trec_eval_set_f(0.25) == pytest.approx(5 / 11)  # = F_0.5: 1.25 / (1.25 + 0.25 * 2 + 1)
    assert got["set_fbeta(beta=0.5)"] == pytest.approx(5 / 11)
    assert got[parse_metric("set_F.2", trec_eval=True).key] == pytest.approx(trec_eval_set_f(2)) == pytest.approx(3 / 8)
    assert got["set_f1"] == pytest.approx(2 * 1 / (2 + 3))  # set_F = set_F.1 = F_1 = 2 TP / (|P| + |G|)
    # strict mode does not guess what the parameter means
    code, _, err = cli(capsys, q, r, "-m", "set_F.4")
    assert code == 2
    one_error_line(err)
    assert "set_f2" in err and "beta**2" in err


def test_set_f_x_spellings() -> None:
    assert parse_metric("set_F.1", trec_eval=True).key == "set_f1"
    assert parse_metric("set_F.4", trec_eval=True).key == "set_f2"
    assert parse_metric("set_F.0.25", trec_eval=True) == parse_metric("set_fbeta(beta=0.5)")
    with pytest.raises(FinegrainError, match="beta"):
        parse_metric("set_F.9")


# --------------------------------------------------------------------------- strict is unchanged where both score


def test_compat_changes_nothing_when_every_query_has_relevant_items_and_results() -> None:
    qrels = Qrels.from_dict({"q1": {"a": 2, "b": 1, "c": 0}, "q2": {"b": 1, "d": 3}})
    run = Run.from_dict({"q1": {"a": 0.5, "c": 0.9, "x": 0.7}, "q2": {"d": 0.1, "b": 0.2, "a": 0.2}})
    metrics = ["ndcg@2", "ndcg", "P@2", "recall@2", "map", "mrr", "r_precision", "hit_rate@1", "set_precision",
               "set_recall", "set_f2"]
    strict, te = evaluate(qrels, run, metrics), evaluate(qrels, run, metrics, compat=Compat.TREC_EVAL)
    assert strict.per_query() == te.per_query()
    assert strict.aggregate() == te.aggregate()
    assert "compat" not in strict.to_json_dict() and set(strict["ndcg@2"].denominators.to_dict()) == {
        "n_universe", "n_scored", "n_excluded_no_relevant", "n_missing_from_run", "n_undefined", "n_ignored_run_queries"
    }


def test_options_are_recorded_on_the_evaluation() -> None:
    qrels, run = Qrels.from_dict({"q1": {"a": 1}}), Run.from_dict({"q1": {"a": 1.0}})
    ev = evaluate(qrels, run, "P@1", compat="trec_eval", complete=True, level_for_rel=1)
    assert ev.compat == CompatOptions(Compat.TREC_EVAL, True, 1)
    assert ev.to_json_dict()["compat"] == {"mode": "trec_eval", "complete": True, "level_for_rel": 1}
    assert evaluate(qrels, run, "P@1").compat.mode is Compat.STRICT


# --------------------------------------------------------------------------- ties: the binary, not pytrec_eval

# d_b > d_a as strings, so an exact tie ranks d_b first (docno descending, form_res_rels.c comp_sim_docno).
TIE_QRELS = "q1 0 d_a 1\nq1 0 d_b 0\n"


@pytest.mark.parametrize("mode", [[], ["--compat", "trec_eval"]])
def test_near_tied_scores_are_compared_as_doubles(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: list[str]
) -> None:
    q = write(tmp_path / "q", TIE_QRELS)
    near = write(tmp_path / "near", "q1 Q0 d_a 1 1.000000001 s\nq1 Q0 d_b 2 1.0 s\n")
    tied = write(tmp_path / "tied", "q1 Q0 d_a 1 1.0 s\nq1 Q0 d_b 2 1.0 s\n")
    # trec_eval reads the score with atof into a double (get_trec_results.c): 1.000000001 > 1.0, so d_a is 1st
    code, out, err = cli(capsys, q, near, "-m", "P@1", *mode, "--json")
    assert code == 0, err
    assert json.loads(out) == {"precision@1": 1.0}
    # an exact tie goes to the larger docno, d_b (not relevant)
    code, out, err = cli(capsys, q, tied, "-m", "P@1", *mode, "--json")
    assert json.loads(out) == {"precision@1": 0.0}


def test_pytrec_eval_treats_near_ties_as_ties() -> None:
    """The metrics reference's note (docs/reference/metrics.md): pytrec_eval ranks scores in single precision, so 1.000000001 and 1.0 tie there."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    ev = pytrec_eval.RelevanceEvaluator({"q1": {"d_a": 1, "d_b": 0}}, {"P_1"})
    got = ev.evaluate({"q1": {"d_a": 1.000000001, "d_b": 1.0}})["q1"]["P_1"]
    assert got == 0.0  # d_b first: a tie broken by docno; the trec_eval binary (and finegrain) say 1.0


# --------------------------------------------------------------------------- BEIR qrels, empty files


def test_beir_qrels_are_detected_and_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = write(tmp_path / "r", "q1 Q0 d1 1 2.0 s\nq1 Q0 d2 2 1.0 s\nq2 Q0 d1 1 1.0 s\n")
    with_header = write(tmp_path / "h.tsv", "query-id\tcorpus-id\tscore\nq1\td2\t1\nq2\td1\t2\n")
    no_header = write(tmp_path / "n.tsv", "q1\td2\t1\nq2\td1\t2\n")
    spaces = write(tmp_path / "s.tsv", "q1 d2 1\nq2 d1 2\n")  # no tab: BEIR's reader splits on whitespace
    # q1: relevant d2 at rank 2 -> RR 1/2; q2: d1 at rank 1 -> 1: (1/2 + 1) / 2
    for path in (with_header, no_header, spaces):
        assert detect_qrels_format(path) is QrelsFormat.BEIR
        code, out, err = cli(capsys, path, r, "-m", "mrr", "--json")
        assert code == 0, err
        assert json.loads(out) == {"mrr": pytest.approx(0.75)}


def test_beir_ids_with_spaces_are_not_taken_for_trec(tmp_path: Path) -> None:
    path = write(tmp_path / "q.tsv", "query-id\tcorpus-id\tscore\nq 1\tdoc one\t1\n")  # 5 words, 3 tab fields
    qrels, fmt = read_qrels_file(path)
    assert fmt is QrelsFormat.BEIR and qrels["q 1"] == {"doc one": 1}


def test_beir_folder_written_by_finegrain_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\n{"_id": "d2", "text": "y"}\n')
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n')
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    _, _, expected = read_beir(folder)
    qrels, fmt = read_qrels_file(qrels_path(folder))
    assert fmt is QrelsFormat.BEIR and qrels == expected


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "an empty file"),
        ("\n\n", "an empty file"),
        ("# only a comment\n", "comment line(s) only"),
        ("q1 d1\n", "2 field(s)"),
        ("q1 0 d1 x\t1\n", "5 field(s)"),  # 2 tab-separated fields, 5 words
        ("q1 0 d1 1 x y\n", "6 field(s)"),
        ("query-id\tcorpus-id\tscore\n", "judgement"),
    ],
)
def test_qrels_that_fit_neither_format_are_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, needle: str
) -> None:
    q = write(tmp_path / "q", text)
    r = write(tmp_path / "r", "q1 Q0 d1 1 1.0 s\n")
    code, _, err = cli(capsys, q, r, "-m", "ndcg@10")
    assert code == 2
    one_error_line(err)
    assert needle in err, err


def test_qrels_format_can_be_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q = write(tmp_path / "q", "q1\td1\t1\n")
    r = write(tmp_path / "r", "q1 Q0 d1 1 1.0 s\n")
    code, _, err = cli(capsys, q, r, "--qrels-format", "trec")
    assert code == 2  # read as TREC, the 3-field line is refused
    one_error_line(err)
    code, out, err = cli(capsys, q, r, "--qrels-format", "beir", "-m", "P@1", "--json")
    assert code == 0 and json.loads(out) == {"precision@1": 1.0}
    code, _, err = cli(capsys, q, r, "--qrels-format", "csv")
    assert code == 2 and "auto, trec or beir" in err


def test_empty_run_is_an_error_unless_allowed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q = write(tmp_path / "q", "q1 0 d1 1\nq2 0 d2 1\n")
    r = write(tmp_path / "r", "")
    code, out, err = cli(capsys, q, r, "-m", "ndcg@10")
    assert code == 2 and out == ""
    one_error_line(err)
    assert "--allow-empty-run" in err
    # allowed: both qrels queries are missing from the run -> ndcg 0 each; the mean is 0, not undefined
    code, out, err = cli(capsys, q, r, "-m", "ndcg@10", "--allow-empty-run", "--json", "--per-query")
    assert code == 0, err
    body = json.loads(out)
    assert body["aggregate"] == {"ndcg@10": 0.0}
    assert body["denominators"]["ndcg@10"]["n_missing_from_run"] == 2


def test_evaluate_files_api(tmp_path: Path) -> None:
    q, r = write(tmp_path / "q", F6_QRELS), write(tmp_path / "r", F6_RUN)
    ev = evaluate_files(q, r, "ndcg@10", compat="trec_eval")
    assert ev["ndcg@10"].value == pytest.approx(2 / 3)  # (1 + 1 + 0) / 3, as in the CLI test
    empty = write(tmp_path / "e", "")
    with pytest.raises(FinegrainError, match="allow-empty-run"):
        evaluate_files(q, empty, "ndcg@10", compat="trec_eval")
    ev = evaluate_files(q, empty, "ndcg@10", compat="trec_eval", complete=True, allow_empty_run=True)
    assert ev["ndcg@10"].value == 0.0  # -c: q1, q2, q3 all missing -> 0
    with pytest.raises(FinegrainError, match="strict"):
        evaluate_files(q, r, "ndcg@10", compat="bogus")
