"""The command-input fuzz targets: each reads its seeds, refuses an empty input, and its reference
reading tells a wrong answer from a right one (so the fuzz test can fail)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finegrain.testing.fuzz import Invalid, Target, classify
from finegrain.testing.fuzz_concepts import concepts_reference
from finegrain.testing.fuzz_inputs import distant_target, input_targets
from finegrain.testing.fuzz_judge import judge_target


@pytest.mark.parametrize("target", input_targets(), ids=lambda t: t.name)
def test_seeds_are_read_and_an_emptied_input_is_refused(target: Target, tmp_path: Path) -> None:
    for seed in target.seeds:
        assert classify(target, seed, tmp_path) == ("ok", "")
        name = sorted(target.mutable or seed)[0]
        assert classify(target, {**seed, name: b""}, tmp_path)[0] == "error"


def _objects(*rows: tuple[str, list[float]]) -> bytes:
    return json.dumps({"objects": [{"synset": s, "bbox": b} for s, b in rows]}).encode()


def test_the_concepts_reference_takes_any_optimal_size_matching_and_nothing_else() -> None:
    """Areas 1, 4, 1 against 2, 2: every full matching pairs two objects; the optimal ones leave out the 4
    (DA 1 and 1: both >= TD 1), so SD = 1 and SD binary = 1.0; a matching keeping the 4 is not optimal."""
    want = concepts_reference({
        "gt.json": _objects(("dog.n.01", [0, 0, 1, 1]), ("dog.n.01", [0, 0, 4, 1]), ("dog.n.01", [0, 0, 1, 1])),
        "retrieved.json": _objects(("dog.n.01", [0, 0, 2, 1]), ("dog.n.01", [0, 0, 2, 1]))})
    exact = (1, ("dog.n.01",), (), ())
    assert want == (exact, (1.0, None, 1.0), 1.0)
    assert want != (exact, (1.0, None, 1.0), 0.5)  # a binary share no optimal matching gives
    assert want != (exact, (1.0, None, 1.0 + 1e-6), 1.0)
    assert want != ((0, *exact[1:]), (1.0, None, 1.0), 1.0)


def test_a_synset_reached_by_another_name_is_not_a_concept_of_the_reference() -> None:
    with pytest.raises(Invalid):
        concepts_reference({"gt.json": _objects(("dog.n.00", [0, 0, 1, 1])), "retrieved.json": _objects()})


def test_a_distant_label_qrels_without_judgement_is_a_misparse(tmp_path: Path) -> None:
    """The qrels file of a labelling that found nothing held only its header, which the qrels reader
    refuses: a loader that writes it is told apart from one that refuses the input."""
    target = distant_target()
    seed = {**target.seeds[1], "answers.jsonl": b'{"query_id": "q", "answers": ["zzz"]}\n'}
    assert classify(target, seed, tmp_path)[0] == "error"
    header_only = Target("header-only", target.seeds, lambda p: ("the qrels written cannot be read back", ""),
                         target.oracle)
    assert classify(header_only, seed, tmp_path)[0] == "misparse"


def test_the_judge_reference_expects_an_export_for_ids_with_spaces(tmp_path: Path) -> None:
    """A pool whose ids hold spaces is exported as BEIR qrels (TREC refuses them): the reference says
    the TREC export is refused (None) and the TSV one holds every grade."""
    target = judge_target()
    header = {"schema": "finegrain.pool/1", "systems": [], "grades": [0, 1]}
    items = [{"qid": "q 1", "doc_id": d, "order": i, "n_systems": 0, "best_rank": 1, "grade": g}
             for i, (d, g) in enumerate([("IMG 1.jpg", None), ("d2", 1)])]
    files = {"pool.jsonl": "".join(json.dumps(o) + "\n" for o in [header, *items]).encode()}
    assert target.oracle is not None
    scale, _, trec, tsv = target.oracle(files)
    assert scale == (0, 1) and trec is None and tsv == {"q 1": {"IMG 1.jpg": 0, "d2": 1}}
    assert classify(target, files, tmp_path) == ("ok", "")
