"""Album query files (``finegrain album eval --queries FILE``): ids follow the one id rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finegrain.album.bench.query_file import read_query_file
from finegrain.errors import DataFormatError

OK = {"id": "z1", "text": "photos in Tokyo", "lang": "en", "ground_truth": ["IMG_0001.jpg"]}


def _write(path: Path, obj: object) -> Path:
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


@pytest.mark.parametrize("bad", ["", " ", "\u3000", "q" * 1_001])
def test_a_query_id_follows_the_one_id_rule(tmp_path: Path, bad: str) -> None:
    """A blank or over-long query id was taken as it was, into results.json and every table."""
    with pytest.raises(DataFormatError, match="the id of query 2"):
        read_query_file(_write(tmp_path / "q.json", [OK, {**OK, "id": bad}]))


@pytest.mark.parametrize("bad", ["", " ", "x" * 1_001, 7, None])
def test_a_ground_truth_photo_id_follows_the_one_id_rule(tmp_path: Path, bad: object) -> None:
    with pytest.raises(DataFormatError, match="ground_truth of query 'z1' to be a list of photo ids"):
        read_query_file(_write(tmp_path / "q.json", [{**OK, "ground_truth": ["IMG_0001.jpg", bad]}]))


def test_integer_ids_and_language_names_are_read(tmp_path: Path) -> None:
    qf = read_query_file(_write(tmp_path / "q.json", {"queries": [{**OK, "id": 3, "lang": "Chinese"}], "n": 1}))
    assert [(q.id, q.lang) for q in qf.queries] == [("3", "zh")] and dict(qf.extra) == {"n": 1}
