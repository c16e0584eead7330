"""The saved probe kinds: a real file round-trips, and a one-value edit is one error naming the file and path.

The files are written by the real commands (:mod:`probe_folders`): ``finegrain perturb`` on the embedded
captions and on the caption-corpus protocol, ``finegrain contrast --pool`` on a small pairs file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from finegrain.errors import DataFormatError
from finegrain.results.probes import ContrastResults, PerturbationRecord, PerturbResults
from finegrain.results.schema import Saved
from probe_folders import DELETE, EDITS, KINDS, dotted, edited, make_probe_folders, read_json

KIND: dict[str, type[Saved]] = {"perturb": PerturbResults, "caption": PerturbResults, "contrast": ContrastResults}

@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_probe_folders(tmp_path_factory.mktemp("probe_kinds"))


@pytest.mark.parametrize("kind", KINDS)
def test_a_written_file_round_trips(folders: dict[str, Path], kind: str) -> None:
    f = folders[kind] / "results.json"
    text = f.read_text(encoding="utf-8")
    saved = KIND[kind].read(json.loads(text), f)
    assert KIND[kind].read(saved.to_json(), f) == saved
    assert json.dumps(saved.to_json(), ensure_ascii=False, indent=1) + "\n" == text  # the writer wrote to_json()


def test_the_typed_objects_hold_the_saved_values(folders: dict[str, Path]) -> None:
    raw = read_json(folders["caption"] / "results.json")
    r = PerturbResults.read(raw, "f.json")
    assert r.schema_ == "finegrain.perturb/1" and r.metrics == raw["metrics"]
    cell = r.families["negation"].metrics["recall@1"]
    assert cell.delta == raw["families"]["negation"]["metrics"]["recall@1"]["delta"]
    assert r.protocol is not None and r.protocol.plain_protocol.recall_1 == raw["protocol"]["plain_protocol"]["recall@1"]
    raw = read_json(folders["contrast"] / "results.json")
    c = ContrastResults.read(raw, "f.json")
    assert c.pool is not None
    setting = c.pool.directions[0].with_negatives
    assert set(setting.recall) == {"recall@1", "recall@5"}
    assert setting.recall["recall@1"].value == raw["pool"]["directions"][0]["with_negatives"]["recall@1"]["value"]


def test_sections_older_files_lack_are_optional(folders: dict[str, Path]) -> None:
    raw = read_json(folders["contrast"] / "results.json")
    for key in ("ablation", "pool", "records"):
        del raw[key]
    c = ContrastResults.read(raw, "f.json")
    assert c.ablation == [] and c.pool is None and c.records is None
    assert c.to_json() == raw  # what was not there is not written


@pytest.mark.parametrize(("kind", "path", "value", "named", "found"), EDITS, ids=[
    f"{k}:{dotted(p)}={'DELETE' if v is DELETE else json.dumps(v)}" for k, p, v, _, _ in EDITS])
def test_a_one_value_edit_is_one_error_naming_the_file_and_the_path(
        folders: dict[str, Path], kind: str, path: tuple[str | int, ...], value: Any, named: str, found: str) -> None:
    f = folders[kind] / "results.json"
    data = edited(read_json(f), path, value)
    with pytest.raises(DataFormatError) as e:
        KIND[kind].read(data, f)
    msg = str(e.value)
    assert msg.startswith(f"{f}: expected {named or dotted(path)} "), msg
    assert f"found '{found}" in msg, msg
    assert "\n" not in msg


def test_a_perturbation_record_names_the_field() -> None:
    rec = {"qid": "q", "family": "typo", "original": "a cat", "perturbed": "a cta", "word": "cat",
           "replacement": "cta", "start": 2, "end": 5}
    assert PerturbationRecord.read(rec, "p.jsonl").to_json() == rec
    for field, value, found in (("start", "2", '"2"'), ("end", 9, "9"), ("original", None, "null"),
                                ("family", 3, "3")):
        with pytest.raises(DataFormatError, match=rf"^p\.jsonl: expected {field} .*found '{found}'"):
            PerturbationRecord.read({**rec, field: value}, "p.jsonl")
