"""SugarCrepe x COCO-mini join (the 83 pairs), the JSONL pairs loader, and the CLI's input errors."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from finegrain.cli.main import main
from finegrain.diagnose.contrastive.sugarcrepe import (
    SUGARCREPE_CATEGORIES,
    read_contrast_jsonl,
    read_local_subset,
    read_sugarcrepe,
    sugarcrepe_pairs,
)
from finegrain.errors import DataFormatError, FinegrainError


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def test_sugarcrepe_join_gives_83_pairs_with_other_captions_of_the_same_image(data_root: Path):
    pairs = sugarcrepe_pairs(data_root)
    assert len(pairs) == 83
    # counts stated in sugarcrepe/PROVENANCE.md
    assert Counter(p.category for p in pairs) == {
        "add_att": 4, "add_obj": 19, "replace_att": 9, "replace_obj": 14,
        "replace_rel": 19, "swap_att": 13, "swap_obj": 5,
    }
    # independent source: the official COCO caption annotations of coco_mini (not the joined file)
    ann = json.loads((data_root / "coco_mini/annotations/captions_val2017.json").read_text())
    caps_of: dict[int, list[str]] = {}
    for a in ann["annotations"]:
        caps_of.setdefault(a["image_id"], []).append(a["caption"])
    subset = {f"{r.category}/{r.id}": r for r in read_local_subset(data_root / "sugarcrepe/subset_with_local_images.jsonl")}
    for p in pairs:
        image_id = int(Path(p.target_image).stem)
        sp = subset[p.pair_id]
        assert int(Path(sp.filename).stem) == image_id and Path(p.target_image).is_file()
        coco = caps_of[image_id]
        assert _norm(p.target_text) in {_norm(c) for c in coco}  # the positive is a COCO caption of that image
        assert len(p.queries) == len(coco) - 1 == 4
        for q in p.queries:
            assert _norm(q) in {_norm(c) for c in coco}  # another caption of the same image
            assert _norm(q) != _norm(p.target_text)  # never the positive caption itself
        assert p.contrastive_text == sp.negative_caption
        assert p.ccd_category is not None
    assert sum(len(p.queries) for p in pairs) == 332


def test_local_subset_matches_upstream_json_filtered_by_local_images(data_root: Path):
    local = {f.name for f in (data_root / "coco_mini/images/val2017").glob("*.jpg")}
    upstream = [p for p in read_sugarcrepe(data_root / "sugarcrepe") if p.filename in local]
    subset = read_local_subset(data_root / "sugarcrepe/subset_with_local_images.jsonl")
    assert sorted(upstream, key=lambda p: (p.category, p.id)) == sorted(subset, key=lambda p: (p.category, p.id))


def test_read_sugarcrepe_counts(data_root: Path):
    allp = read_sugarcrepe(data_root / "sugarcrepe")
    assert len(allp) == 7511
    assert Counter(p.category for p in allp)["swap_obj"] == 245
    with pytest.raises(FinegrainError, match="unknown SugarCrepe category"):
        read_sugarcrepe(data_root / "sugarcrepe", ["swap_rel"])


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_jsonl_loader_reads_pairs_and_resolves_images(tmp_path: Path):
    (tmp_path / "img").mkdir()
    (tmp_path / "img/a.jpg").write_bytes(b"x")
    (tmp_path / "img/b.jpg").write_bytes(b"x")
    f = _write(tmp_path / "pairs.jsonl", [
        json.dumps({"id": "p1", "category": "Entity_Attribute", "target": "a red car", "contrastive": "a blue car",
                    "queries": ["a red sedan", "red car parked"]}),
        "",
        json.dumps({"category": "my own", "query": "a dog", "target_image": "img/a.jpg",
                    "contrastive_image": "img/b.jpg"}),
        json.dumps({"id": 7, "category": "x", "target": "t", "contrastive": "c", "target_image": "img/a.jpg",
                    "ccd_category": "scene type"}),
    ])
    pairs = read_contrast_jsonl(f)
    assert [p.pair_id for p in pairs] == ["p1", "line3", "7"]
    assert pairs[0].ccd_category == "entity attribute" and pairs[0].queries == ("a red sedan", "red car parked")
    assert pairs[0].directions() == ("text->text",)
    assert pairs[1].ccd_category is None and pairs[1].directions() == ("text->image",)
    assert pairs[1].target_image == str((tmp_path / "img/a.jpg").resolve())
    assert pairs[2].ccd_category == "scene type" and pairs[2].directions() == ("image->text",)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"category": "x", "target": "t"', "a JSON object"),
        ('{"target": "t", "contrastive": "c", "query": "q"}', "a field 'category'"),
        ('{"category": "x", "target": "t", "contrastive": "c", "queries": "q"}', "to be a list"),
        ('{"category": "x", "target": "t", "contrastive": "c"}', "at least one direction"),
        ('{"category": "x", "query": "q", "target_image": "nope.jpg", "contrastive_image": "n2.jpg"}',
         "existing image file"),
        ('{"category": "x", "target": "t", "contrastive": "c", "query": "q", "ccd_category": "vibes"}',
         "CCD category"),
    ],
)
def test_jsonl_loader_errors_name_file_and_line(tmp_path: Path, line: str, expected: str):
    good = json.dumps({"id": "ok", "category": "x", "target": "t", "contrastive": "c", "query": "q"})
    f = _write(tmp_path / "bad.jsonl", [good, line])
    with pytest.raises(DataFormatError) as e:
        read_contrast_jsonl(f)
    assert f"{f}:2" in str(e.value) and expected in str(e.value)


def test_jsonl_loader_duplicate_id(tmp_path: Path):
    row = json.dumps({"id": "p", "category": "x", "target": "t", "contrastive": "c", "query": "q"})
    f = _write(tmp_path / "dup.jsonl", [row, row])
    with pytest.raises(DataFormatError, match=r"dup.jsonl:2.*first at line 1"):
        read_contrast_jsonl(f)


def test_cli_malformed_line_names_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    good = json.dumps({"id": "ok", "category": "x", "target": "t", "contrastive": "c", "query": "q"})
    f = _write(tmp_path / "pairs.jsonl", [good, good.replace('"ok"', '"ok2"'), "{not json"])
    code = main(["contrast", "--pairs", str(f), "--encoder", "minilm", "--out", str(tmp_path / "out"), "-q"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{f}:3" in err and err.startswith("error: ") and "Traceback" not in err


def test_cli_unknown_pairs_and_missing_clip_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["contrast", "--pairs", str(tmp_path / "none.jsonl"), "--encoder", "e5", "--out", str(tmp_path)]) == 2
    assert "neither 'sugarcrepe' nor an existing file" in capsys.readouterr().err
    good = _write(tmp_path / "p.jsonl", [json.dumps({"category": "x", "target": "t", "contrastive": "c", "query": "q"})])
    code = main(["contrast", "--pairs", str(good), "--encoder", f"clip:{tmp_path / 'no-model'}", "--out", str(tmp_path)])
    assert code == 2
    assert "CLIP model folder" in capsys.readouterr().err


def test_categories_constant_is_the_seven():
    assert SUGARCREPE_CATEGORIES == (
        "add_att", "add_obj", "replace_att", "replace_obj", "replace_rel", "swap_att", "swap_obj",
    )
