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
