"""The dataset registry: the embedded set, names, paths, errors, and the real shared datasets."""

from __future__ import annotations

import dataclasses
import json
import os
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from finegrain.cli.main import app
from finegrain.datasets import DEFAULT_DATASET, Dataset, detect_format, list_datasets, load_dataset
from finegrain.datasets.registry import EMBEDDED_ROOT
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.io.photobench import read_album
from finegrain.settings import Settings

NO_ROOT = Settings(data_root=None)
_DATA = Path(os.environ.get("FINEGRAIN_DATA") or Path(__file__).resolve().parents[2].parent / "shared" / "data")
DATA = Settings(data_root=_DATA)
needs_data = pytest.mark.skipif(not (_DATA / "capretrieval").is_dir(), reason=f"shared data not found at {_DATA}")


# --------------------------------------------------------------------------- the embedded set


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_embedded_set_loads_without_a_data_root(lang: str) -> None:
    ds = load_dataset(f"embedded/captions-{lang}", NO_ROOT)
    assert isinstance(ds, Dataset) and ds.lang == lang
    assert len(ds.corpus) == 80 and len(ds.queries) == 37
    assert list(ds.qrels) == list(ds.queries)  # fully judged: every query is in the qrels
    assert ds.meta["fully_judged"] is True and "finegrain authors" in ds.meta["source"]
    grades = Counter(g for q in ds.qrels for g in ds.qrels[q].values())
    assert grades == {2: 50, 1: 8}
    assert set(ds.zero_answer_qids) == {"q13", "q21", "q36", "q37"}
    assert Counter(q.type for q in ds.queries.values()) == {"entity": 13, "event": 8, "conjunction": 6, "condition": 10}
    for q in ds.qrels:
        assert set(ds.qrels[q]) <= set(ds.corpus)


def test_embedded_types_name_existing_queries_and_languages_are_parallel() -> None:
    en = load_dataset("embedded/captions-en", NO_ROOT)
    zh = load_dataset("embedded/captions-zh", NO_ROOT)
    for lang, ds in (("en", en), ("zh", zh)):
        types = json.loads((EMBEDDED_ROOT / "captions" / lang / "types.json").read_text(encoding="utf-8"))
        listed = [qid for ids in types.values() for qid in ids]
        assert len(listed) == len(set(listed)) == len(ds.queries)
        assert set(listed) == set(ds.queries)
    assert list(en.corpus) == list(zh.corpus) and list(en.queries) == list(zh.queries)
    assert en.qrels == zh.qrels and en.queries.types() == zh.queries.types()
    assert all(any("\u4e00" <= c <= "\u9fff" for c in d.text) for d in zh.corpus.values())


def test_embedded_fine_grained_labels() -> None:
    ds = load_dataset("embedded/captions-en", NO_ROOT)
    by_text = {q.text: q.id for q in ds.queries.values()}
    purple = ds.qrels[by_text["purple flowers"]]
    assert "purple car" in ds.corpus["c07"].text and "c07" not in purple  # purple car with pink flowers
    assert "purple dress" in ds.corpus["c09"].text and "c09" not in purple  # yellow sunflowers
    assert purple["c06"] == 2 and purple["c71"] == 1
    assert "c03" not in ds.qrels[by_text["white cat"]]  # black cat with a white dog
    assert "c31" not in ds.qrels[by_text["red umbrella"]]  # red coat, black umbrella


def test_default_dataset_is_embedded() -> None:
    assert load_dataset(DEFAULT_DATASET, NO_ROOT).name == DEFAULT_DATASET


# --------------------------------------------------------------------------- names and errors


def test_list_datasets_names_everything() -> None:
    infos = {i.name: i for i in list_datasets(NO_ROOT)}
    assert set(infos) == {
        "embedded/captions-en",
        "embedded/captions-zh",
        "capretrieval/zh",
        "capretrieval/en",
        "dureader/mini",
        "photobench/album1",
        "photobench/album1/zh",
    }
    assert infos["embedded/captions-zh"].available and not infos["capretrieval/zh"].available


def test_a_dataset_that_is_not_ready_says_how_to_get_it(tmp_path: Path) -> None:
    """Where its files go (under the data root, or which variable to set) and where they come from."""
    ready = {i.name: i for i in list_datasets(NO_ROOT)}
    assert ready["embedded/captions-en"].how_to_get is None
    unset = ready["capretrieval/zh"].how_to_get or ""
    assert "FINEGRAIN_DATA is not set" in unset and "candidates.jsonl" in unset
    assert "github.com/lxucs/CapRetrieval" in unset
    infos = {i.name: i for i in list_datasets(Settings(data_root=tmp_path))}
    for name, folder in (("capretrieval/en", "capretrieval/en"), ("dureader/mini", "dureader_mini"),
                         ("photobench/album1/zh", "photobench/album1")):
        how = infos[name].how_to_get or ""
        assert not infos[name].available and str(tmp_path / folder) in how and "github.com/" in how, how
    with pytest.raises(FinegrainError) as e:  # loading it says the same
        load_dataset("dureader/mini", Settings(data_root=tmp_path))
    assert "github.com/PaddlePaddle/RocketQA" in str(e.value)


def test_list_datasets_shows_how_to_get_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FINEGRAIN_DATA", str(tmp_path))
    out = CliRunner().invoke(app, ["list", "datasets", "--json"])
    assert out.exit_code == 0, out.output
    rows = {r["name"]: r for r in json.loads(out.output)}
    assert "how_to_get" not in rows["embedded/captions-zh"]
    assert str(tmp_path / "photobench" / "album1") in rows["photobench/album1"]["how_to_get"]


def test_unknown_name_suggests_near_names() -> None:
    with pytest.raises(UnknownNameError) as e:
        load_dataset("capretrieval/zhh", NO_ROOT)
    assert "capretrieval/zh" in e.value.suggestions and "did you mean" in str(e.value)
    with pytest.raises(UnknownNameError) as e:
        load_dataset("photobench/album1/cn", NO_ROOT)
    assert "photobench/album1/zh" in e.value.suggestions


def test_lang_of_a_registered_name_must_match() -> None:
    assert load_dataset("embedded/captions-zh", NO_ROOT, lang="cn").lang == "zh"
    with pytest.raises(FinegrainError) as e:
        load_dataset("embedded/captions-zh", NO_ROOT, lang="en")
    assert "use 'embedded/captions-en'" in str(e.value)
    with pytest.raises(FinegrainError, match="use 'photobench/album1'"):
        load_dataset("photobench/album1/zh", NO_ROOT, lang="en")


def test_missing_data_root_is_one_clear_error() -> None:
    with pytest.raises(FinegrainError) as e:
        load_dataset("capretrieval/zh", NO_ROOT)
    assert "FINEGRAIN_DATA" in str(e.value) and "\n" not in str(e.value)


def test_missing_dataset_folder_names_path_and_fix(tmp_path: Path) -> None:
    with pytest.raises(FinegrainError) as e:
        load_dataset("dureader/mini", Settings(data_root=tmp_path))
    msg = str(e.value)
    assert str(tmp_path / "dureader_mini") in msg and "FINEGRAIN_DATA" in msg


def test_bad_paths(tmp_path: Path) -> None:
    with pytest.raises(FinegrainError, match="no dataset folder"):
        load_dataset(str(tmp_path / "missing"), NO_ROOT)
    (tmp_path / "stuff").mkdir()
    (tmp_path / "stuff" / "notes.txt").write_text("x")
    with pytest.raises(FinegrainError, match="not a dataset folder in a known format"):
        load_dataset(tmp_path / "stuff", NO_ROOT)
    with pytest.raises(FinegrainError, match="is a file"):
        load_dataset(str(tmp_path / "stuff" / "notes.txt"), NO_ROOT)


def test_dataset_is_frozen() -> None:
    ds = load_dataset("embedded/captions-en", NO_ROOT)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ds.name = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ds.meta["format"] = "x"  # type: ignore[index]


# --------------------------------------------------------------------------- folders by path


def test_folders_by_path_detect_their_format(tmp_path: Path) -> None:
    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / "candidates.jsonl").write_text('{"id": "c1", "text": "一只猫"}\n', encoding="utf-8")
    (cap / "queries.jsonl").write_text('{"id": "q1", "query": "猫", "positives": [{"id": "c1", "score": 2}]}\n', encoding="utf-8")
    assert detect_format(cap) == "capretrieval"
    ds = load_dataset(str(cap), NO_ROOT)
    assert ds.lang == "zh" and ds.meta["format"] == "capretrieval" and ds.name == str(cap)
    assert load_dataset(str(cap), NO_ROOT, lang="en").lang == "en"

    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text('{"_id": "d1", "text": "a cat"}\n')
    (beir / "queries.jsonl").write_text('{"_id": "q1", "text": "cat"}\n')
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    assert detect_format(beir) == "beir"
    ds = load_dataset(beir, NO_ROOT)
    assert ds.lang == "en" and ds.meta["fully_judged"] is False and ds.qrels.to_dict() == {"q1": {"d1": 1}}

    assert detect_format(tmp_path) is None


def test_capretrieval_folder_without_types_stays_untyped_unless_types_from_is_given(tmp_path: Path) -> None:
    # A folder without types.json never borrows a sibling's types.json silently.
    import shutil

    for lang in ("zh", "en"):
        shutil.copytree(EMBEDDED_ROOT / "captions" / lang, tmp_path / "captions" / lang)
    (tmp_path / "captions" / "en" / "types.json").unlink()
    en = tmp_path / "captions" / "en"
    ds = load_dataset(str(en), NO_ROOT)
    assert ds.lang == "en" and ds.summary()["typed_queries"] == 0
    assert "types_from" not in ds.meta
    typed = load_dataset(str(en), NO_ROOT, types_from=tmp_path / "captions" / "zh")
    assert typed.summary()["typed_queries"] == 37 and typed.meta["types_from"].endswith("zh/types.json")
    with pytest.raises(FinegrainError, match="types_from"):
        load_dataset(str(en), NO_ROOT, types_from=tmp_path)


# --------------------------------------------------------------------------- the real shared data


@needs_data
def test_capretrieval_zh() -> None:
    ds = load_dataset("capretrieval/zh", DATA)
    assert (len(ds.corpus), len(ds.queries), len(ds.qrels)) == (3024, 404, 404)
    assert len(ds.zero_answer_qids) == 27
    assert all(not ds.qrels[q] for q in ds.zero_answer_qids)  # kept, with an empty mapping
    assert ds.qrels.n_entries == 4683
    assert Counter(g for q in ds.qrels for g in ds.qrels[q].values()) == {2: 4286, 1: 397}
    types = Counter(q.type for q in ds.queries.values())
    assert sum(n for t, n in types.items() if t is not None) == 403
    assert [q.text for q in ds.queries.values() if q.type is None] == ["演唱会门票 二维码"]
    assert types == {
        "singleton_object": 152, "simple_condition": 120, "singleton_place": 36, "complex_condition": 32,
        "conjunction": 21, "singleton_event": 20, "singleton_concept": 14, "singleton_person": 8, None: 1,
    }
    # "连衣裙+草地" in types.json is the query "连衣裙 草地"
    assert next(q for q in ds.queries.values() if q.text == "连衣裙 草地").type == "conjunction"
    assert sorted(ds.meta["types_unmatched"]) == sorted(
        ["singleton_object: 电脑", "singleton_object: 遥控器", "singleton_object: 充电桩", "simple_condition: 演唱会门票"]
    )
    assert ds.meta["fully_judged"] is True and "CapRetrieval" in ds.meta["source"]


@needs_data
def test_capretrieval_en_shares_ids_qrels_and_types() -> None:
    zh = load_dataset("capretrieval/zh", DATA)
    en = load_dataset("capretrieval/en", DATA)
    assert en.lang == "en" and set(en.corpus) == set(zh.corpus) and list(en.queries) == list(zh.queries)
    assert en.qrels == zh.qrels
    assert en.queries.types() == zh.queries.types()
    assert en.meta["types_from"].endswith("zh/types.json")


@needs_data
def test_dureader_mini() -> None:
    ds = load_dataset("dureader/mini", DATA)
    assert (len(ds.queries), len(ds.corpus), ds.qrels.n_entries) == (8, 133, 133)
    grades = Counter(g for q in ds.qrels for g in ds.qrels[q].values())
    assert grades == {1: 25, 0: 108}
    assert ds.lang == "zh" and ds.meta["fully_judged"] is False


@needs_data
def test_photobench_album1() -> None:
    album = read_album(_DATA / "photobench" / "album1")
    assert len(album.photos) == 1069 and len(album.people) == 10 and len(album.queries) == 483
    assert sum(not p.has_gps for p in album.photos.values()) == 22
    assert sum(p.time is None for p in album.photos.values()) == 13
    assert sum(bool(p.faces) for p in album.photos.values()) == 78
    assert sum(len(p.faces) for p in album.photos.values()) == 110
    assert album.people["1"].names_en == ("me", "myself")
    assert Counter(q.source for q in album.queries) == {
        "V": 193, "VM": 83, "M": 76, "F": 48, "VF": 44, "VMF": 27, "MF": 12,
    }
    assert len(album.judged_queries) == 20 and sum(q.is_zero_gt for q in album.queries) == 3

    en = load_dataset("photobench/album1", DATA)
    zh = load_dataset("photobench/album1/zh", DATA)
    assert (len(en.corpus), len(en.queries), en.qrels.n_entries) == (1069, 20, 75)
    assert len(en.zero_answer_qids) == 3 and all(not en.qrels[q] for q in en.zero_answer_qids)
    assert en.lang == "en" and zh.lang == "zh" and en.qrels == zh.qrels
    assert Counter(q.type for q in en.queries.values()) == {"V": 5, "VM": 4, "M": 4, "VF": 2, "MF": 2, "VMF": 2, "F": 1}
    q = next(q for q in zh.queries.values() if q.meta["text_en"] == "museum souvenirs")
    assert q.text == "记录下博物馆买的纪念品" and len(zh.qrels[q.id]) == 10
    assert en.meta["queries_total"] == 483 and "do not redistribute" in en.meta["license"]


@needs_data
def test_real_folders_load_by_path() -> None:
    assert load_dataset(str(_DATA / "dureader_mini"), NO_ROOT).meta["format"] == "beir"
    en = load_dataset(str(_DATA / "capretrieval" / "en"), NO_ROOT)
    assert en.summary()["typed_queries"] == 0  # no types.json in that folder: untyped, never borrowed
    en = load_dataset(str(_DATA / "capretrieval" / "en"), NO_ROOT, types_from=_DATA / "capretrieval" / "zh")
    assert en.summary()["typed_queries"] == 403
    assert load_dataset(str(_DATA / "photobench" / "album1"), NO_ROOT, lang="zh").lang == "zh"
