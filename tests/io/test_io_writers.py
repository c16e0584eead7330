"""Every text writer of finegrain.io (open_text_write) writes a file whole or not at all, plain or gzipped."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from finegrain.io._lines import open_text_write


@pytest.mark.parametrize("name", ["out.txt", "out.txt.gz"])
def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    with open_text_write(path) as f:
        f.write("old\n")
    before = path.read_bytes()
    with pytest.raises(RuntimeError), open_text_write(path) as f:
        f.write("half of the new content\n")
        raise RuntimeError("the writer fails midway")
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_gzip_output_is_reproducible_and_reads_back(tmp_path: Path) -> None:
    for name in ("a.txt.gz", "b.txt.gz"):
        with open_text_write(tmp_path / name) as f:
            f.write("q1 0 d1 1\n")
    assert (tmp_path / "a.txt.gz").read_bytes() == (tmp_path / "b.txt.gz").read_bytes()
    assert gzip.decompress((tmp_path / "a.txt.gz").read_bytes()) == b"q1 0 d1 1\n"


def test_parent_folders_are_created_and_line_ends_are_lf(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "out.txt"
    with open_text_write(path) as f:
        f.write("x\ny\n")
    assert path.read_bytes() == b"x\ny\n"
