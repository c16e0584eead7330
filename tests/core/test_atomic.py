"""The one atomic writer: a file is replaced whole or not at all."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from finegrain.atomic import (
    atomic_folder,
    atomic_path,
    atomic_write,
    is_temporary,
    remove_stale,
    write_bytes,
    write_text,
)
from finegrain.errors import FinegrainError


def test_write_replaces_whole_file(tmp_path: Path) -> None:
    p = tmp_path / "sub" / "a.txt"
    write_text(p, "old\n")
    write_text(p, "new\n")
    assert p.read_text() == "new\n"
    assert [x.name for x in p.parent.iterdir()] == ["a.txt"]


def test_exception_in_block_keeps_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    p = tmp_path / "a.bin"
    write_bytes(p, b"old")
    with pytest.raises(RuntimeError), atomic_write(p, "wb") as f:
        f.write(b"half")
        raise RuntimeError("stop")
    assert p.read_bytes() == b"old"
    assert [x.name for x in tmp_path.iterdir()] == ["a.bin"]


def test_written_file_has_the_umask_mode(tmp_path: Path) -> None:
    p = write_text(tmp_path / "m.txt", "x")
    mask = os.umask(0)
    os.umask(mask)
    assert p.stat().st_mode & 0o777 == 0o666 & ~mask


def test_unwritable_folder_is_one_finegrain_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(FinegrainError, match="cannot write"):
        write_text(blocker / "x.txt", "y")


def test_sigkill_mid_write_leaves_old_file_and_a_recognisable_temporary(tmp_path: Path) -> None:
    p = tmp_path / "run.trec"
    write_text(p, "old\n")
    code = textwrap.dedent(f"""
        import os, signal, sys
        from finegrain.atomic import atomic_write
        with atomic_write({str(p)!r}) as f:
            f.write("partial\\n" * 1000)
            f.flush()
            os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", code], check=False)
    assert proc.returncode == -signal.SIGKILL
    assert p.read_text() == "old\n"
    leftovers = [x for x in tmp_path.iterdir() if x != p]
    assert leftovers and all(is_temporary(x) for x in leftovers)
    assert remove_stale(tmp_path) == leftovers
    assert [x.name for x in tmp_path.iterdir()] == ["run.trec"]


def test_atomic_path_renames_what_a_path_writer_wrote_and_removes_it_on_error(tmp_path: Path) -> None:
    target = tmp_path / "x.bin"
    with atomic_path(target) as tmp:
        assert tmp.parent == tmp_path and is_temporary(tmp)
        tmp.write_bytes(b"new")
    assert target.read_bytes() == b"new"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("stop")
    assert target.read_bytes() == b"new" and [p.name for p in tmp_path.iterdir()] == ["x.bin"]


def test_atomic_folder_appears_whole_or_not_at_all(tmp_path: Path) -> None:
    target = tmp_path / "model"
    with pytest.raises(RuntimeError), atomic_folder(target) as tmp:
        (tmp / "config.json").write_text("{}")
        raise RuntimeError("killed half way")
    assert list(tmp_path.iterdir()) == []  # neither the folder nor its temporary
    with atomic_folder(target) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".model.") and not target.exists()
        (tmp / "config.json").write_text("{}")
    assert [p.name for p in target.iterdir()] == ["config.json"]
    with pytest.raises(FinegrainError, match="not an empty folder"), atomic_folder(target):
        pass
    assert [p.name for p in target.iterdir()] == ["config.json"]
    (tmp_path / "empty").mkdir()
    with atomic_folder(tmp_path / "empty") as tmp:
        (tmp / "a").write_text("a")
    assert [p.name for p in (tmp_path / "empty").iterdir()] == ["a"]
