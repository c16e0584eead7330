"""``finegrain evaluate --format trec_eval``: trec_eval's -m syntax, measure names, lines, -q and -c.

The numbers are checked against pytrec_eval line by line on random graded files, with exact score ties
and with distinct scores (both agree with trec_eval); near ties (scores equal in single precision) are
left out, since pytrec_eval ranks those differently from the trec_eval binary
(tests/evaluate/test_compat_trec_eval.py).
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
import pytrec_eval
from tests.cli.test_evaluate_cli import run_cli as cli
from tests.cli.test_evaluate_cli import write

from finegrain.errors import FinegrainError
from finegrain.evaluate import evaluate
from finegrain.evaluate.trec_format import NOT_COMPUTED, read_measures, trec_eval_lines, trec_name
from finegrain.metrics.spec import parse_metric
from finegrain.types import Qrels, Run

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d4 1\nq2 0 d5 1\n"
RUN = "q1 Q0 d1 1 3.0 r\nq1 Q0 d3 2 2.5 r\nq1 Q0 d9 3 2.0 r\nq2 Q0 d4 1 1.5 r\nq2 Q0 d8 2 1.0 r\nq2 Q0 d5 3 0.5 r\n"


def files(tmp_path: Path, qrels: str = QRELS, run: str = RUN) -> tuple[str, str]:
    return write(tmp_path / "qrels.txt", qrels), write(tmp_path / "run.trec", run)


def test_the_lines_trec_eval_prints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, *files(tmp_path), "--format", "trec_eval", "-q", "-m", "P.5,10", "-m", "ndcg_cut.10")
    assert code == 0, err
    # q2: d4 (1) at rank 1, d5 (1) at rank 3: DCG = 1 + 1/log2(4) = 1.5, IDCG = 1 + 1/log2(3)
    ndcg_q2 = 1.5 / (1 + 1 / math.log2(3))
    assert out.splitlines() == [
        "P_5                   \tq1\t0.4000",
        "P_10                  \tq1\t0.2000",
        "ndcg_cut_10           \tq1\t1.0000",
        "P_5                   \tq2\t0.4000",
        "P_10                  \tq2\t0.2000",
        f"ndcg_cut_10           \tq2\t{ndcg_q2:6.4f}",
        "P_5                   \tall\t0.4000",
        "P_10                  \tall\t0.2000",
        f"ndcg_cut_10           \tall\t{(1 + ndcg_q2) / 2:6.4f}",
    ]
    assert err.startswith("# ") and all(line.startswith("# ") for line in err.splitlines())  # notes: stderr


def test_official_is_the_default_with_runid_num_q_and_the_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, *files(tmp_path), "--format", "trec_eval")
    assert code == 0, err
    names = [line.split("\t")[0].strip() for line in out.splitlines()]
    assert names[:10] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                          "recip_rank"]
    assert names[10:21] == [f"iprec_at_recall_{x / 10:.2f}" for x in range(11)]
    assert names[21:] == [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    lines = dict((line.split("\t")[0].strip(), line.split("\t")[2]) for line in out.splitlines())
    assert (lines["runid"], lines["num_q"], lines["num_ret"], lines["num_rel"], lines["num_rel_ret"]) == (
        "r", "2", "6", "4", "4")


def test_per_query_lines_have_no_runid_num_q_or_gm_map(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, *files(tmp_path), "--format", "trec_eval", "-q", "-m", "official")
    assert code == 0
    per_query = [line.split("\t") for line in out.splitlines() if line.split("\t")[1] != "all"]
    assert {p[1] for p in per_query} == {"q1", "q2"}
    assert not {p[0].strip() for p in per_query} & {"runid", "num_q", "gm_map"}
    assert ["num_ret               ", "q1", "3"] in per_query


def test_complete_averages_over_every_qrels_query(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q, r = files(tmp_path, QRELS + "q3 0 d7 1\n")  # q3: judged, not in the run
    code, out, _ = cli(capsys, q, r, "--format", "trec_eval", "-m", "num_q,P.5,num_rel")
    code_c, out_c, _ = cli(capsys, q, r, "--format", "trec_eval", "-c", "-q", "-m", "num_q,P.5,num_rel")
    assert code == code_c == 0
    assert "num_q                 \tall\t2" in out.splitlines() and "P_5                   \tall\t0.4000" in out
    lines = out_c.splitlines()
    assert "num_q                 \tall\t3" in lines and "P_5                   \tall\t0.2667" in lines
    assert "num_rel               \tall\t5" in lines and "P_5                   \tq3\t0.0000" in lines


@pytest.mark.parametrize(("value", "names"), [
    ("P", [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]),
    ("recall", [f"recall_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]),
    ("success", ["success_1", "success_5", "success_10"]),
    ("ndcg_cut.10,5", ["ndcg_cut_5", "ndcg_cut_10"]),
    ("iprec_at_recall.0,.5", ["iprec_at_recall_0.00", "iprec_at_recall_0.50"]),
    ("ndcg@10,recip_rank", ["recip_rank", "ndcg_cut_10"]),  # finegrain specs print as trec_eval names, in its order
    ("set", ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "set_P", "set_recall", "set_F"]),
    ("set_F.4", ["set_F_4"]),
])
def test_m_in_trec_eval_syntax(value: str, names: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, *files(tmp_path), "--format", "trec_eval", "-m", value)
    assert code == 0, err
    assert [line.split("\t")[0].strip() for line in out.splitlines()] == names


def test_all_trec_prints_what_finegrain_computes_and_names_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, *files(tmp_path), "--format", "trec_eval", "-m", "all_trec")
    assert code == 0, err
    names = {line.split("\t")[0].strip() for line in out.splitlines()}
    assert {"infAP", "ndcg", "ndcg_cut_10", "map_cut_100", "success_5", "set_F", "recall_5", "bpref"} <= names
    note = next(line for line in err.splitlines() if "not computed" in line)
    assert all(n in note for n in ("relstring", "gm_bpref", "Rndcg", "set_map")) and NOT_COMPUTED.isdisjoint(names)


@pytest.mark.parametrize(("args", "needle"), [
    (["-m", "mrr@10"], "recip_rank has no cutoff"),
    (["-m", "hits@10"], "no trec_eval measure"),
    (["-m", "relstring"], "not computed by finegrain"),
    (["--compat", "strict"], "implies --compat trec_eval"),
    (["--json"], "two outputs"),
    (["--queries", "x"], "trec_eval has none"),
])
def test_refusals_are_one_error_line(args: list[str], needle: str, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    if "--queries" in args:
        args = ["--queries", write(tmp_path / "ids", "q1\n")]
    code, out, err = cli(capsys, *files(tmp_path), "--format", "trec_eval", *args)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], err
    assert out == ""


def test_other_formats_keep_their_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, *files(tmp_path), "-m", "P.5,10", "--format", "json")
    assert code == 0 and out.strip() == '{"precision@5": 0.4, "precision@10": 0.2}'
    code, out, _ = cli(capsys, *files(tmp_path), "-m", "hits@2", "-q")
    assert code == 0 and "hits@2" in out and "q1\t2.0000" in out


# --------------------------------------------------------------------------- against pytrec_eval


def random_files(tmp_path: Path, seed: int, ties: bool) -> tuple[str, str, dict, dict]:
    rnd = random.Random(seed)
    q_lines, r_lines = [], []
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for qi in range(50):
        q = f"q{qi}"
        docs = [f"d{j}" for j in rnd.sample(range(300), 60)]
        if qi % 10 != 9:  # some queries only in the run
            qrels[q] = {d: rnd.choice([-1, 0, 0, 1, 1, 2, 3]) for d in docs[:30]}
            if qi % 8 == 0:
                qrels[q] = {d: 0 for d in docs[:5]}  # no relevant item
        if qi % 7 != 6:  # some only in the qrels
            n = rnd.randint(1, 50)
            run[q] = {d: (round(rnd.random() * 4) / 4 if ties else round(rnd.random(), 4) + i * 1e-3)
                      for i, d in enumerate(docs[10: 10 + n])}
    for q, ds in qrels.items():
        q_lines += [f"{q} 0 {d} {g}" for d, g in ds.items()]
    for q, ds in run.items():
        r_lines += [f"{q} Q0 {d} {i + 1} {s!r} sys" for i, (d, s) in enumerate(ds.items())]
    return (write(tmp_path / "qrels", "\n".join(q_lines) + "\n"), write(tmp_path / "run", "\n".join(r_lines) + "\n"),
            qrels, run)


MEASURES = {"num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall",
            "P", "recall", "infAP", "ndcg", "ndcg_cut", "map_cut", "success", "set_P", "set_recall", "set_F"}


@pytest.mark.parametrize("ties", [True, False])
@pytest.mark.parametrize("complete", [False, True])
def test_every_line_equals_pytrec_eval(ties: bool, complete: bool, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    qrels_p, run_p, qrels, run = random_files(tmp_path, 11 + ties, ties)
    args = ["--format", "trec_eval", "-q", "-m", "all_trec", *(["-c"] if complete else [])]
    code, out, err = cli(capsys, qrels_p, run_p, *args)
    assert code == 0, err
    got = {(p[0].strip(), p[1]): p[2] for p in (line.split("\t") for line in out.splitlines())}
    ref = pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(run)
    both = sorted(ref)
    for q in both:
        for m, v in ref[q].items():
            if m == "gm_map":
                assert (m, q) not in got  # trec_eval prints no per-query gm_map
                continue
            assert float(got[(m, q)]) == pytest.approx(v, abs=5e-5), (m, q)
    averaged = [q for q in qrels] if complete else both
    missing = [q for q in averaged if q not in ref]  # with -c: qrels queries missing from the run score 0
    assert bool(missing) == complete
    for m in ref[both[0]]:
        values = [ref[q][m] for q in both]
        if m in ("num_ret", "num_rel_ret"):
            want = sum(values)
        elif m == "num_rel":
            want = sum(values) + sum(sum(g >= 1 for g in qrels[q].values()) for q in missing)
        elif m == "gm_map":
            want = math.exp((sum(values) + len(missing) * math.log(1e-5)) / len(averaged))
        else:
            want = sum(values) / len(averaged)
        assert float(got[(m, "all")]) == pytest.approx(want, abs=5e-5), m
    assert got[("num_q", "all")] == str(len(averaged)) and got[("runid", "all")] == "sys"
    assert {q for (_, q) in got} == {*averaged, "all"}  # -q: every averaged query, and only those


# --------------------------------------------------------------------------- the module


def test_names_and_reading() -> None:
    assert [trec_name(parse_metric(k)) for k in ("ndcg@10", "ndcg", "map@100", "recall", "recall@5", "mrr",
                                                 "hit_rate@5", "set_f2", "r_precision", "infap", "mrr@10")] == [
        "ndcg_cut_10", "ndcg", "map_cut_100", "set_recall", "recall_5", "recip_rank", "success_5", "set_F_4", "Rprec",
        "infAP", None]
    asked = read_measures(["official", "P.5"])
    assert asked.lines == {"runid", "num_q"} and len(asked.specs) == 3 + 5 + 11 + 9 and not asked.notes  # P.5 is among P's defaults


def test_lines_need_an_evaluation_in_trec_eval_mode() -> None:
    ev = evaluate(Qrels.from_dict({"q": {"a": 1}}), Run.from_dict({"q": {"a": 1.0}}), ["ndcg@10"])
    with pytest.raises(FinegrainError, match="strict mode"):
        trec_eval_lines(ev)
