"""``finegrain evaluate QRELS RUN ...`` in-process: JSON and table output, --queries, errors."""

from __future__ import annotations

import collections
import json
import random
import sys
import types
from pathlib import Path

import pytest
import pytrec_eval

from finegrain.cli.main import main
from finegrain.datasets import load_dataset
from finegrain.io.trec import write_qrels, write_run
from finegrain.types import Run


@pytest.fixture(autouse=True)
def _readers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Use the project's readers; stand in minimal ones (test-only) if they are not written yet."""
    try:
        import finegrain.io.idlist  # noqa: F401
        import finegrain.io.trec  # noqa: F401
    except ImportError:
        from finegrain.types import Qrels, Run

        trec = types.ModuleType("finegrain.io.trec")
        trec.read_qrels = lambda p: Qrels.from_records(  # type: ignore[attr-defined]
            (a[0], a[2], int(a[3])) for a in (ln.split() for ln in Path(p).read_text().splitlines()) if a
        )
        trec.read_run = lambda p, name=None: Run.from_records(  # type: ignore[attr-defined]
            (a[0], a[2], float(a[4])) for a in (ln.split() for ln in Path(p).read_text().splitlines()) if a
        )
        idlist = types.ModuleType("finegrain.io.idlist")
        idlist.read_ids = lambda p: [ln.strip() for ln in Path(p).read_text().splitlines() if ln.strip()]  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "finegrain.io.trec", trec)
        monkeypatch.setitem(sys.modules, "finegrain.io.idlist", idlist)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["evaluate", *args])
    out, err = capsys.readouterr()
    return code, out, err


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def random_files(tmp_path: Path, seed: int = 7, n: int = 80) -> tuple[str, str]:
    """Random graded qrels and a run with coarse scores (many ties), as the trec_eval check builds them."""
    rnd = random.Random(seed)
    q_lines, r_lines = [], []
    for qi in range(n):
        docs = [f"d{j:03d}" for j in rnd.sample(range(400), 80)]
        for doc in docs[:30]:
            q_lines.append(f"q{qi} 0 {doc} {rnd.choice([0, 0, 1, 2, 3])}")
        for rank, doc in enumerate(docs[10:70] if qi % 7 else docs[40:]):
            r_lines.append(f"q{qi} Q0 {doc} {rank} {round(rnd.random() * 5) / 5:.1f} sys")
    return write(tmp_path / "qrels", "\n".join(q_lines) + "\n"), write(tmp_path / "run", "\n".join(r_lines) + "\n")


def test_json_prints_one_object_of_means_equal_to_trec_eval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels_p, run_p = random_files(tmp_path)
    code, out, err = run_cli(
        capsys, qrels_p, run_p, "-m", "ndcg@10", "-m", "ndcg@100,recall@50", "-m", "P@5", "-m", "hit_rate@1",
        "-m", "map@100", "-m", "MRR@10", "--json",
    )
    assert code == 0, err
    got = json.loads(out)
    assert list(got) == ["ndcg@10", "ndcg@100", "recall@50", "precision@5", "hit_rate@1", "map@100", "mrr@10"]

    qrels: dict = collections.defaultdict(dict)
    run: dict = collections.defaultdict(dict)
    for line in open(qrels_p):
        a = line.split()
        qrels[a[0]][a[2]] = int(a[3])
    for line in open(run_p):
        a = line.split()
        run[a[0]][a[2]] = float(a[4])
    res = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10,100", "recall.50", "P.5", "success.1", "map_cut.100"}).evaluate(run)
    top10 = {q: dict(sorted(ds.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[:10]) for q, ds in run.items()}
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(top10)
    qs = [q for q in qrels if any(v > 0 for v in qrels[q].values())]

    def mean(m: str, r: dict = res) -> float:
        return sum(r.get(q, {}).get(m, 0.0) for q in qs) / len(qs)

    want = {"ndcg@10": mean("ndcg_cut_10"), "ndcg@100": mean("ndcg_cut_100"), "recall@50": mean("recall_50"),
            "precision@5": mean("P_5"), "hit_rate@1": mean("success_1"), "map@100": mean("map_cut_100"),
            "mrr@10": mean("recip_rank", rr)}
    for k, v in want.items():
        assert got[k] == pytest.approx(v, abs=1e-6), k


PB_QRELS = "q1 0 x 0\nq2 0 y 0\nq3 0 a 1\nq4 0 b 1\nq5 0 c 2\n"
PB_RUN = "q1 Q0 x 1 0.9 s\nq4 Q0 b 1 0.9 s\nq5 Q0 z 1 0.8 s\n"


def test_photobench_reject_hand_case(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # q1, q2 have no answer; nothing is returned for q2 and q3 -> A=1 (q2), B=1 (q3), C=1 (q1)
    qrels_p, run_p = write(tmp_path / "rq", PB_QRELS), write(tmp_path / "rr", PB_RUN)
    queries_p = write(tmp_path / "queries", "q1\nq2\nq3\nq4\nq5\n")
    code, out, err = run_cli(
        capsys, qrels_p, run_p, "--queries", queries_p, "-m", "reject_precision", "-m", "reject_recall", "-m", "reject_f1", "--json"
    )
    assert code == 0, err
    assert json.loads(out) == {"reject_precision": 0.5, "reject_recall": 0.5, "reject_f1": 0.5}


def test_queries_file_defines_the_universe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels_p, run_p = write(tmp_path / "rq", PB_QRELS), write(tmp_path / "rr", PB_RUN)
    # q6 is in neither file: a zero-answer query with an empty prediction (a correct rejection);
    # q5 is left out of the universe; jsonl with "id" works too
    queries_p = write(tmp_path / "queries.jsonl", "".join(json.dumps({"id": q}) + "\n" for q in ["q1", "q2", "q3", "q4", "q6"]))
    code, out, err = run_cli(capsys, qrels_p, run_p, "--queries", queries_p, "-m", "reject_f1,ndcg@10", "--json", "--per-query")
    assert code == 0, err
    body = json.loads(out)
    assert set(body) == {"aggregate", "per_query", "denominators"}
    assert body["aggregate"]["reject_f1"] == pytest.approx(4 / 6)  # A=2 (q2, q6), B=1 (q3), C=1 (q1)
    assert body["per_query"]["ndcg@10"] == {"q3": 0.0, "q4": 1.0}
    assert body["per_query"]["reject_f1"]["q6"] == 1.0 and body["per_query"]["reject_f1"]["q4"] is None
    d = body["denominators"]["ndcg@10"]
    assert d == {"n_universe": 5, "n_scored": 2, "n_excluded_no_relevant": 3, "n_missing_from_run": 1,
                 "n_undefined": 0, "n_ignored_run_queries": 1}


def test_table_output_with_per_query_rows_and_undefined(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels_p, run_p = write(tmp_path / "rq", PB_QRELS), write(tmp_path / "rr", PB_RUN)
    code, out, err = run_cli(capsys, qrels_p, run_p, "-m", "ndcg@10", "-m", "set_precision", "--per-query")
    assert code == 0, err
    rows = [line.split("\t") for line in out.splitlines() if not line.startswith("#")]
    table = {(r[0].strip(), r[1]): r[2] for r in rows}
    assert table[("ndcg@10", "all")] == f"{1 / 3:.4f}"
    assert table[("ndcg@10", "q4")] == "1.0000"
    assert table[("set_precision", "q2")] == "undefined"  # nothing returned
    assert table[("set_precision", "all")] == f"{(1 / 3 + 0):.4f}"  # mean of q1 (0), q4 (1), q5 (0)
    notes = [line for line in out.splitlines() if line.startswith("#")]
    assert any("excluded (no relevant item) 2" in n and n.startswith("# ndcg@10") for n in notes)
    assert any("missing from run (empty ranking) 1" in n for n in notes)


def test_undefined_aggregate_is_null_in_json_and_undefined_in_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels_p = write(tmp_path / "rq", "q1 0 a 1\n")
    run_p = write(tmp_path / "rr", "q1 Q0 a 1 1.0 s\n")
    code, out, _ = run_cli(capsys, qrels_p, run_p, "-m", "reject_precision", "--json")
    assert code == 0 and json.loads(out) == {"reject_precision": None}
    code, out, _ = run_cli(capsys, qrels_p, run_p, "-m", "reject_precision")
    assert code == 0 and "reject_precision" in out and "\tall\tundefined" in out


def test_unknown_metric_fails_with_one_did_you_mean_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels_p, run_p = write(tmp_path / "rq", PB_QRELS), write(tmp_path / "rr", PB_RUN)
    code, out, err = run_cli(capsys, qrels_p, run_p, "-m", "ndgc@10", "--json")
    assert code != 0
    assert out == ""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "did you mean" in lines[0] and "'ndcg'" in lines[0]


def test_bad_cutoff_fails_before_reading_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, str(tmp_path / "nope"), str(tmp_path / "nope2"), "-m", "ndcg@0")
    assert code != 0 and "'0'" in err and "ndcg@10" in err


def test_default_metrics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels_p, run_p = random_files(tmp_path, n=10)
    code, out, err = run_cli(capsys, qrels_p, run_p, "--json")
    assert code == 0, err
    assert list(json.loads(out)) == ["ndcg@10", "map@100", "recall@100", "precision@10", "mrr@10"]


# --------------------------------------------------------------------------- a dataset name where qrels are expected


def test_a_dataset_name_is_read_as_its_qrels(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    ds = load_dataset("embedded/captions-en")
    qids = list(ds.queries)
    run = Run.from_dict({q: {d: float(i % 7) for i, d in enumerate(list(ds.corpus)[j:j + 12])}
                         for j, q in enumerate(qids)}, name="r")
    write_run(run, tmp_path / "run.trec")
    write_qrels(ds.qrels, tmp_path / "qrels.txt")
    code, by_name, err = run_cli(capsys, "embedded/captions-en", str(tmp_path / "run.trec"), "--json", "-m", "ndcg@10,recall@5")
    assert code == 0, err
    code, by_file, err = run_cli(capsys, str(tmp_path / "qrels.txt"), str(tmp_path / "run.trec"), "--json",
                                 "-m", "ndcg@10,recall@5")
    assert code == 0 and json.loads(by_name) == json.loads(by_file)
    code, table, _ = run_cli(capsys, "embedded/captions-en", str(tmp_path / "run.trec"))
    assert code == 0 and "# qrels dataset embedded/captions-en" in table
    # a path that exists is read first, even when it spells a dataset name
    monkeypatch.chdir(tmp_path)
    (tmp_path / "embedded").mkdir()
    write(tmp_path / "embedded" / "captions-en", f"{qids[0]} 0 nothing 1\n")
    code, out, _ = run_cli(capsys, "embedded/captions-en", str(tmp_path / "run.trec"), "--json", "-m", "ndcg@10")
    assert code == 0 and json.loads(out) == {"ndcg@10": 0.0}


def test_neither_a_file_nor_a_dataset_name_is_one_line_naming_both(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    run = write(tmp_path / "run.trec", "q1 Q0 d1 1 1.0 r\n")
    code, out, err = run_cli(capsys, "embeded/captions-en", run)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code != 0 and len(lines) == 1 and "neither a qrels file" in lines[0] and "dataset name" in lines[0]
    assert "did you mean 'embedded/captions-en'" in lines[0]
