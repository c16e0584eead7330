"""Files are written whole or not at all, and text UTF-8 cannot hold is a clear error, not a half-written file."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from finegrain.errors import FinegrainError
from finegrain.io._lines import open_text_write

# --------------------------------------------------------------------------- writing whole or not at all


@pytest.mark.parametrize("name", ["out.txt", "out.txt.gz"])
def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path, name: str) -> None:
    p = tmp_path / name
    with open_text_write(p) as f:
        f.write("old\n")
    old = p.read_bytes()
    with pytest.raises(RuntimeError), open_text_write(p) as f:
        f.write("new\n" * 1000)
        raise RuntimeError("killed half-way")
    assert p.read_bytes() == old and sorted(tmp_path.iterdir()) == [p]
    with pytest.raises(FinegrainError, match=r"cannot write .*lone surrogate \\udc80"), open_text_write(p) as f:
        f.write("fine\n")
        f.write("cut \udc80\n")
    assert p.read_bytes() == old and sorted(tmp_path.iterdir()) == [p]


def test_gzip_output_is_the_same_bytes_every_time(tmp_path: Path) -> None:
    outs = []
    for i in range(2):
        with open_text_write(tmp_path / f"{i}.gz") as f:
            f.write("q1 0 d1 1\n文档\n")
        outs.append((tmp_path / f"{i}.gz").read_bytes())
    assert outs[0] == outs[1] and gzip.decompress(outs[0]).decode() == "q1 0 d1 1\n文档\n"
