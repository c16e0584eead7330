"""Object-set JSON, the Visual Genome and COCO loaders on the real shared files."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from finegrain.cli.main import main
from finegrain.diagnose.concepts.coco import SYNSET_OVERRIDES, coco_synset, load_coco_captions, load_coco_objects
from finegrain.diagnose.concepts.objects import (
    BOX_LIMIT,
    MIN_SIDE,
    ConceptObject,
    ObjectSet,
    read_object_set,
    write_object_set,
)
from finegrain.diagnose.concepts.visual_genome import load_vg_objects, load_vg_regions
from finegrain.errors import DataFormatError, FinegrainError
from finegrain.lexicons.wordnet import wordnet

# ---------------------------------------------------------------- ObjectSet JSON

def test_object_set_round_trips(tmp_path: Path) -> None:
    s = ObjectSet.of([("dog.n.01", (1, 2, 3, 4)), ("dog.n.01", (0, 0, 5, 5)), ("ball.n.01", (0, 0, 1, 1))])
    write_object_set(tmp_path / "o.json", s)
    back = read_object_set(tmp_path / "o.json")
    assert back == s
    assert back.counts == {"dog.n.01": 2, "ball.n.01": 1}
    assert back.synsets == {"dog.n.01", "ball.n.01"}
    assert back[0].area == 12.0 and len(back) == 3


@pytest.mark.parametrize(("body", "needle"), [
    ({"objects": [{"synset": "dgo.n.01", "bbox": [0, 0, 1, 1]}]}, "objects[0].synset"),
    ({"objects": [{"synset": "dog.n.01", "bbox": [0, 0, 1, 1]}, {"synset": "dog.n.09", "bbox": [0, 0, 1, 1]}]},
     "dog.n.09"),
    ({"objects": [{"synset": "dog", "bbox": [0, 0, 1, 1]}]}, "lemma.pos.NN"),
    ({"objects": [{"synset": "dog.n.01", "bbox": [0, 0, 1]}]}, "objects[0].bbox"),
    ({"objects": [{"synset": "dog.n.01", "bbox": [0, 0, -2, 1]}]}, "no area"),
    ({"objects": [{"synset": "dog.n.01", "bbox": [0, 0, "a", 1]}]}, "four finite numbers"),
    ({"objects": [{"name": "dog"}]}, "objects[0]"),
    ({"things": []}, '{"objects"'),
    ([1, 2], '{"objects"'),
])
def test_bad_object_files_name_the_file_and_entry(tmp_path: Path, body: object, needle: str) -> None:
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(DataFormatError) as e:
        read_object_set(p)
    assert str(p) in str(e.value) and needle in str(e.value)


@pytest.mark.parametrize("box", [[0, 0, 1e-200, 1], [0, 0, 1e200, 1], [1e200, 0, 1, 1], [0, -1e8, 1, 1],
                                 [0, 0, 1e-200, 1e-200], [0, 0, 1e200, 1e200]])
def test_boxes_outside_the_pixel_range_are_refused_naming_the_file_and_the_box(tmp_path: Path, box: list) -> None:
    p = tmp_path / "bad.json"
    p.write_text(json.dumps({"objects": [{"synset": "dog.n.01", "bbox": [0, 0, 10, 10]},
                                         {"synset": "dog.n.01", "bbox": box}]}), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"bad.json: expected objects\[1\] to be valid: bounding box .* is "
                                              r"outside the pixel range"):
        read_object_set(p)


def test_cli_concepts_refuses_an_extreme_box_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gt, rt = tmp_path / "g.json", tmp_path / "r.json"
    gt.write_text(json.dumps({"objects": [{"synset": "dog.n.01", "bbox": [0, 0, 10, 10]},
                                          {"synset": "dog.n.01", "bbox": [0, 0, 1e-200, 1]}]}), encoding="utf-8")
    rt.write_text(json.dumps({"objects": [{"synset": "dog.n.01", "bbox": [0, 0, 5, 5]},
                                          {"synset": "dog.n.01", "bbox": [1, 1, 1e-5, 1e-5]}]}), encoding="utf-8")
    code = main(["concepts", "-g", str(gt), "--retrieved", str(rt), "--json"])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"error: {gt}: expected objects[1]")


def test_boxes_at_the_limits_are_kept() -> None:
    assert ConceptObject("dog.n.01", (-BOX_LIMIT, BOX_LIMIT, MIN_SIDE, BOX_LIMIT)).area == MIN_SIDE * BOX_LIMIT


def test_unknown_synset_hint_lists_the_real_senses(tmp_path: Path) -> None:
    p = tmp_path / "bad.json"
    p.write_text(json.dumps({"objects": [{"synset": "dog.n.09", "bbox": [0, 0, 1, 1]}]}), encoding="utf-8")
    with pytest.raises(DataFormatError, match="dog.n.01"):
        read_object_set(p)


def test_invalid_json_and_missing_file(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text('{"objects": [\n', encoding="utf-8")
    with pytest.raises(DataFormatError, match="x.json:2"):
        read_object_set(p)
    with pytest.raises(FinegrainError, match="file not found"):
        read_object_set(tmp_path / "missing.json")


def test_concept_object_is_frozen() -> None:
    o = ConceptObject("dog.n.01", (0, 0, 2, 3))
    with pytest.raises(AttributeError):
        o.synset = "cat.n.01"  # type: ignore[misc]


# ---------------------------------------------------------------- Visual Genome

@pytest.fixture(scope="module")
def vg(data_root: Path) -> Path:
    path = data_root / "visual_genome_100"
    if not (path / "objects_first100.json").is_file():
        pytest.skip("visual_genome_100 not found")
    return path


def test_vg_objects_against_the_raw_file(vg: Path) -> None:
    objects = load_vg_objects(vg)
    raw = json.loads((vg / "objects_first100.json").read_text(encoding="utf-8"))
    assert sorted(objects) == list(range(1, 101))
    for im in raw:
        want = Counter(s for ob in im["objects"] for s in ob["synsets"] if ob["w"] > 0 and ob["h"] > 0)
        assert Counter(objects[im["image_id"]].counts) == want
    # image 1, first object: "trees", tree.n.01, x=0 y=0 w=799 h=557
    first = objects[1][0]
    assert first.synset == "tree.n.01" and first.bbox == (0.0, 0.0, 799.0, 557.0)
    assert sum(len(v) for v in objects.values()) == 2302  # 2484 objects - 225 without synset + 43 with two


def test_vg_two_synset_objects_give_two_concepts_with_one_box(vg: Path) -> None:
    raw = json.loads((vg / "objects_first100.json").read_text(encoding="utf-8"))
    im, ob = next((im, ob) for im in raw for ob in im["objects"] if len(ob["synsets"]) == 2)
    got = [o for o in load_vg_objects(vg)[im["image_id"]] if o.bbox == (ob["x"], ob["y"], ob["w"], ob["h"])]
    assert set(ob["synsets"]) <= {o.synset for o in got}


def test_vg_regions_against_the_raw_file(vg: Path) -> None:
    regions = load_vg_regions(vg)
    raw = json.loads((vg / "region_descriptions_first100.json").read_text(encoding="utf-8"))
    assert len(regions) == 100
    for entry in raw:
        assert regions[entry["id"]] == tuple(r["phrase"].strip() for r in entry["regions"] if r["phrase"].strip())
    assert regions[1][0] == "the clock is green in colour"


def test_vg_loader_errors(tmp_path: Path) -> None:
    with pytest.raises(FinegrainError, match="objects_first100.json"):
        load_vg_objects(tmp_path)
    bad = tmp_path / "objects.json"
    bad.write_text(json.dumps([{"image_id": 1, "objects": [{"synsets": ["dog.n.01"], "x": 0}]}]), encoding="utf-8")
    with pytest.raises(DataFormatError, match="image 1 object 0"):
        load_vg_objects(tmp_path)
    (tmp_path / "region_descriptions.json").write_text(json.dumps({"id": 1}), encoding="utf-8")
    with pytest.raises(DataFormatError, match="JSON list"):
        load_vg_regions(tmp_path)


# ---------------------------------------------------------------- COCO

@pytest.fixture(scope="module")
def coco(data_root: Path) -> Path:
    path = data_root / "coco_mini" / "annotations"
    if not (path / "instances_val2017.json").is_file():
        pytest.skip("coco_mini not found")
    return path


def test_coco_categories_map_to_physical_synsets(coco: Path) -> None:
    wn = wordnet()
    cats = [c["name"] for c in json.loads((coco / "instances_val2017.json").read_text())["categories"]]
    assert len(cats) == 80
    assert set(SYNSET_OVERRIDES) <= set(cats)
    physical = {"noun.artifact", "noun.animal", "noun.food", "noun.plant", "noun.Tops", "noun.communication"}
    for name in cats:
        s = wn.synset(coco_synset(name))  # exists
        assert s.lexname() in physical, (name, s.name(), s.lexname())
        if s.lexname() != "noun.communication":  # WordNet files signs and traffic lights under signals
            assert "physical_entity.n.01" in {h.name() for h in s.closure(lambda x: x.hypernyms())}, name

    def hypernyms(name: str) -> set[str]:
        return {h.name() for h in wn.synset(coco_synset(name)).closure(lambda x: x.hypernyms())}

    assert "plaything.n.01" in hypernyms("kite")
    assert "device.n.01" in hypernyms("mouse")
    assert "home_appliance.n.01" in hypernyms("toaster")
    assert "edible_fruit.n.01" in hypernyms("banana")
    assert coco_synset("dog") == "dog.n.01" and coco_synset("sports ball") == "ball.n.01"


def test_coco_objects_against_the_raw_files(coco: Path) -> None:
    objects = load_coco_objects(coco)
    want: dict[int, Counter] = {}
    n_images = 0
    for split in ("train2017", "val2017"):
        raw = json.loads((coco / f"instances_{split}.json").read_text(encoding="utf-8"))
        names = {c["id"]: c["name"] for c in raw["categories"]}
        n_images += len(raw["images"])
        for a in raw["annotations"]:
            if not a["iscrowd"]:
                want.setdefault(a["image_id"], Counter())[coco_synset(names[a["category_id"]])] += 1
    assert len(objects) == n_images == 159
    assert {k: Counter(v.counts) for k, v in objects.items() if len(v)} == want
    one = load_coco_objects(coco / "instances_val2017.json")
    assert len(one) == 79 and set(one) <= set(objects)
    crowd = load_coco_objects(coco, include_crowd=True)
    assert sum(map(len, crowd.values())) > sum(map(len, objects.values()))


def test_coco_captions(coco: Path) -> None:
    caps = load_coco_captions(coco)
    assert len(caps) == 159 and all(len(c) == 5 for c in caps.values())
    raw = json.loads((coco / "captions_val2017.json").read_text(encoding="utf-8"))
    a = raw["annotations"][0]
    assert a["caption"].strip() in caps[a["image_id"]]


def test_coco_unknown_category_is_an_error() -> None:
    with pytest.raises(FinegrainError, match="SYNSET_OVERRIDES"):
        coco_synset("flux capacitor")


@pytest.mark.parametrize(("name", "own"), [
    ("dog.n.00", "andiron.n.01"),  # nltk reads sense 0 as index -1: the last sense of dog
    ("domestic_dog.n.01", "dog.n.01"),  # another lemma of the synset
    ("Dog.n.01", "dog.n.01"),  # nltk lower-cases
    ("dog.n.001", "dog.n.01"),  # the sense number read by int()
])
def test_a_synset_is_written_by_its_own_name(tmp_path: Path, name: str, own: str) -> None:
    """nltk reaches one synset by several names; two names of one synset would count as two concepts
    (CA, CE compare names), and dog.n.00 is not a dog at all. Refused, naming the synset's own name."""
    p = tmp_path / "o.json"
    p.write_text(json.dumps({"objects": [{"synset": "dog.n.01", "bbox": [0, 0, 1, 1]},
                                         {"synset": name, "bbox": [0, 0, 1, 1]}]}), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"objects\[1\]\.synset to be the name of a WordNet") as e:
        read_object_set(p)
    assert repr(own) in str(e.value.hint)


def test_a_synset_name_with_a_line_break_is_refused_without_wordnet() -> None:
    with pytest.raises(FinegrainError, match="bad synset name"):
        ConceptObject("dog.n.01\n", (0, 0, 1, 1))


@pytest.mark.parametrize("big", [10**400, -(10**400)])
def test_a_box_number_too_big_for_a_float_is_an_error_not_an_overflow(big: int) -> None:
    """math.isfinite(10**400) raises OverflowError; a huge integer is refused by the range check."""
    with pytest.raises(FinegrainError, match="outside the pixel range"):
        ConceptObject("dog.n.01", (big, 0, 1, 1))
