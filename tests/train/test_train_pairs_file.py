"""The pairs file and its provenance sidecar: what ``finegrain train`` reads before it loads a model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finegrain.errors import DataFormatError
from finegrain.train.finetune_data import read_pairs


def _pairs(tmp_path: Path, *records: dict[str, object]) -> Path:
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize("bad", ["", " ", "\u3000", "p" * 1_001, True, 1.5, ["p1"]])
def test_a_passage_id_follows_the_one_id_rule(tmp_path: Path, bad: object) -> None:
    """A blank, over-long or non-id passage_id would group unrelated pairs as one passage in the
    held-out split (every blank id is the same key); it is refused naming the line."""
    path = _pairs(tmp_path, {"query": "a", "passage": "b", "passage_id": "p1"},
                  {"query": "c", "passage": "d", "passage_id": bad})
    with pytest.raises(DataFormatError, match=r"pairs\.jsonl:2: expected a \"passage_id\""):
        read_pairs(path)


def test_an_integer_passage_id_is_its_digits(tmp_path: Path) -> None:
    path = _pairs(tmp_path, {"query": "a", "passage": "b", "passage_id": 7}, {"query": "c", "passage": "d",
                                                                               "passage_id": "7"})
    assert [p.key for p in read_pairs(path).pairs] == ["id:7", "id:7"]


@pytest.mark.parametrize("sidecar", [b"NaN", b'{"n": Infinity}', b"[" * 5_000 + b"]" * 5_000, b'"\\ud83d"',
                                     b"\xff\xfe"])
def test_the_provenance_sidecar_is_read_as_strict_json(tmp_path: Path, sidecar: bytes) -> None:
    """The sidecar goes into the trained model's provenance: NaN, a nesting past the parser's depth (a
    RecursionError before), a lone surrogate or bytes that are not UTF-8 are one error naming it."""
    path = _pairs(tmp_path, {"query": "a", "passage": "b"})
    (tmp_path / "pairs.jsonl.provenance.json").write_bytes(sidecar)
    with pytest.raises(DataFormatError, match=r"pairs\.jsonl\.provenance\.json") as e:
        read_pairs(path)
    assert e.value.hint and "remove the provenance sidecar" in e.value.hint


def test_a_sidecar_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = _pairs(tmp_path, {"query": "a", "passage": "b"})
    (tmp_path / "pairs.jsonl.provenance.json").write_bytes(b'\xef\xbb\xbf{"transductive": false}')
    assert read_pairs(path).provenance == {"transductive": False}


# --------------------------------------------------------------------------- explicit negatives


def test_negatives_are_read_into_the_pair_and_its_texts(tmp_path: Path) -> None:
    """A record's "negatives" become the pair's hard-negative columns, and so count in the batch rule
    (no text twice in a batch, :meth:`Pair.texts`)."""
    path = _pairs(tmp_path, {"query": "a", "passage": "b", "negatives": ["x", "y"]},
                  {"query": "c", "passage": "d", "negatives": ["y", "z"]})
    first, second = read_pairs(path).pairs
    assert first.negatives == ("x", "y") and second.negatives == ("y", "z")
    assert first.texts() == ("a", "b", "x", "y")
    assert _pairs(tmp_path, {"query": "a", "passage": "b", "negatives": []}) and \
        read_pairs(tmp_path / "pairs.jsonl").pairs[0].negatives == ()


@pytest.mark.parametrize(("bad", "expected"), [
    ("x", r'"negatives" as a list of passage texts, found \'"x"\''),
    ({"t": "x"}, r'"negatives" as a list of passage texts'),
    (["x", ""], r'"negatives" items as non-empty strings, found \'""\''),
    (["x", " "], r'"negatives" items as non-empty strings'),
    (["x", 3], r'"negatives" items as non-empty strings, found \'3\''),
    (["x", None], r'"negatives" items as non-empty strings, found \'null\''),
    (["d", "x"], r'"negatives" other than the record\'s own passage'),
    (["x", "x"], r'"negatives" each given once, found \'"x" twice\''),
])
def test_a_bad_negatives_field_is_one_error_naming_the_line(tmp_path: Path, bad: object, expected: str) -> None:
    path = _pairs(tmp_path, {"query": "a", "passage": "b", "negatives": ["x", "y"]},
                  {"query": "c", "passage": "d", "negatives": bad})
    with pytest.raises(DataFormatError, match=r"pairs\.jsonl:2: expected " + expected):
        read_pairs(path)


@pytest.mark.parametrize("second", [{"negatives": ["x"]}, {"negatives": []}, {}, {"negatives": ["x", "y", "z"]}])
def test_every_record_holds_the_same_number_of_negatives(tmp_path: Path, second: dict[str, object]) -> None:
    """Each negative is a column of the batch: a record with another count is an error naming its line and
    the first line's count, never trimmed or padded."""
    path = _pairs(tmp_path, {"query": "a", "passage": "b", "negatives": ["x", "y"]},
                  {"query": "e", "passage": "f", "negatives": ["x", "z"]},
                  {"query": "c", "passage": "d", **second})
    with pytest.raises(DataFormatError, match=r'pairs\.jsonl:3: expected 2 "negatives" as on line 1') as e:
        read_pairs(path)
    assert e.value.hint and "--negatives N" in e.value.hint
