"""The seeded loader fuzzer: no crash and no misparse on any loader, and the fuzzer can see both."""

from __future__ import annotations

from pathlib import Path

import pytest

from finegrain.testing.fuzz import Report, Target, chunks, classify, mutate, run, run_chunks
from finegrain.testing.fuzz_targets import all_targets, trec_qrels_reference

N = 300  # inputs per target here; benchmarks/fuzz_loaders.py runs 100,000 per target


@pytest.mark.parametrize("target", all_targets(), ids=lambda t: t.name)
def test_no_crash_and_no_misparse(target: Target) -> None:
    report = run([target], N, seed=20261124)
    counts = report.counts[target.name]
    assert sum(counts.values()) == N
    details = "\n".join(f"{f.outcome}: {f.detail}" for f in report.findings[:5])
    assert counts["crash"] == 0 and counts["misparse"] == 0, details
    # the mutations reach both sides: some inputs are read, some refused
    assert counts["ok"] > 0 and counts["error"] > 0


def test_the_fuzzer_is_deterministic() -> None:
    target = next(t for t in all_targets() if t.name == "trec-run-strict")
    a, b = run([target], 200, seed=7), run([target], 200, seed=7)
    assert a.counts == b.counts


def _naive_qrels(folder: Path) -> dict[str, dict[str, int]]:
    """A reader with the old defects: Python's int (1_0, ٣, no bound) and '#' lines as queries."""
    out: dict[str, dict[str, int]] = {}
    for line in (folder / "qrels.txt").read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) == 4:
            out.setdefault(parts[0], {})[parts[2]] = int(parts[3])
    return out


def _crashing_qrels(folder: Path) -> object:
    data = (folder / "qrels.txt").read_bytes()
    if b"#" in data:
        raise KeyError("boom")
    return _naive_qrels(folder)


def test_the_fuzzer_finds_misparses_and_crashes_in_a_bad_reader() -> None:
    seeds = ({"qrels.txt": b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"},)
    oracle = lambda f: trec_qrels_reference(f["qrels.txt"], False)  # noqa: E731
    naive = run([Target("naive", seeds, _naive_qrels, oracle)], 400, seed=1)
    assert naive.counts["naive"]["misparse"] > 0
    crashing = run([Target("crashing", seeds, _crashing_qrels, oracle)], 400, seed=1)
    assert crashing.counts["crashing"]["crash"] > 0


def test_classify_names_each_outcome(tmp_path: Path) -> None:
    target = next(t for t in all_targets() if t.name == "trec-qrels-strict")
    assert classify(target, {"qrels.txt": b"q 0 d 1\n"}, tmp_path)[0] == "ok"
    assert classify(target, {"qrels.txt": b"q 0 d 1_0\n"}, tmp_path)[0] == "error"
    wrapping = Target("wrap", target.seeds, lambda p: {"q": {"d": -1}}, target.oracle)
    assert classify(wrapping, {"qrels.txt": b"q 0 d 18446744073709551615\n"}, tmp_path)[0] == "misparse"


def test_mutations_keep_gzip_streams_mostly_valid() -> None:
    import gzip
    import random

    rng = random.Random(0)
    files = {"r.gz": gzip.compress(b"q Q0 d 1 1.0 t\n", mtime=0)}
    readable = 0
    for _ in range(200):
        try:
            gzip.decompress(mutate(files, rng)["r.gz"])
            readable += 1
        except (OSError, EOFError, Exception):
            pass
    assert 100 < readable < 200  # most edits land inside the stream, some corrupt it


def test_chunked_runs_give_the_same_report_for_any_number_of_processes() -> None:
    assert chunks(2500, 1000) == [(0, 0, 1000), (1, 1000, 1000), (2, 2000, 500)]
    targets = [t for t in all_targets() if t.name in ("trec-qrels-strict", "trec-run-compat")]
    one, two = run_chunks(targets, 2100, seed=3, jobs=1), run_chunks(targets, 2100, seed=3, jobs=2)
    assert one.counts == two.counts and one.n_inputs == 2 * 2100
    assert [(f.target, f.outcome, f.detail) for f in one.findings] == [(f.target, f.outcome, f.detail) for f in two.findings]
    assert set(one.seconds) == {t.name for t in targets}


def test_merged_reports_add_counts_and_keep_the_first_findings() -> None:
    a, b = Report(keep=1), Report()
    a.add("t", "ok", "", {})
    b.add("t", "crash", "first", {})
    b.add("t", "crash", "second", {})
    b.add("u", "error", "x", {})
    a.merge(b)
    assert a.counts["t"] == {"ok": 1, "crash": 2} and a.counts["u"] == {"error": 1}
    assert [f.detail for f in a.findings] == ["first"]


def test_the_command_line_references_see_pythons_generous_numbers(tmp_path: Path) -> None:
    numbers = next(t for t in all_targets() if t.name == "cli-numbers")
    cv = {"option.txt": b"--cv", "value.txt": b"1_0"}
    assert classify(numbers, cv, tmp_path)[0] == "error"
    generous = Target("generous", numbers.seeds, lambda p: f"{int((p / 'value.txt').read_text())},seed=0",
                      numbers.oracle, numbers.mutable)  # eval --cv read its value with int(): 1_0 was 10 folds
    assert classify(generous, cv, tmp_path)[0] == "misparse"
    metric = next(t for t in all_targets() if t.name == "cli-metric")
    assert classify(metric, {"metric.txt": b"P.5,10"}, tmp_path) == ("ok", "")
    assert classify(metric, {"metric.txt": "ndcg@١٠".encode()}, tmp_path)[0] == "error"


def test_an_input_that_never_returns_is_a_hang_not_a_stall(tmp_path: Path) -> None:
    """A reader stuck in a loop is a defect the fuzzer reports (as a crash named 'hang'), and the run goes on."""
    import signal

    def spin(folder: Path) -> None:
        while True:
            pass

    def fine(folder: Path) -> str:
        return "ok"

    before = signal.getsignal(signal.SIGALRM)
    assert classify(Target("spins", ({"a": b""},), spin), {"a": b""}, tmp_path, hang_seconds=0.2) == (
        "crash", "hang: no answer in 0.2 s")
    assert classify(Target("fine", ({"a": b""},), fine), {"a": b""}, tmp_path, hang_seconds=0.2) == ("ok", "")
    assert signal.getsignal(signal.SIGALRM) is before  # the alarm handler is put back
