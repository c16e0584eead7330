"""The one way finegrain writes a file: whole or not at all.

:func:`atomic_write` opens a temporary file beside the target (same folder, so
the same file system), and only when the ``with`` block ends without an
exception flushes it to disk and renames it over the target
(:func:`os.replace`, atomic on POSIX). A crash, a kill or an exception at any
moment leaves either the old file or the new one, never a part; the temporary
file of a killed writer is named ``.NAME.*.tmp`` so :func:`remove_stale` and
readers can recognise it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Literal, cast, overload

from finegrain.errors import FinegrainError

TMP_SUFFIX = ".tmp"


def is_temporary(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is the temporary file of an unfinished :func:`atomic_write`."""
    name = Path(path).name
    return name.startswith(".") and name.endswith(TMP_SUFFIX)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@overload
def atomic_write(path: str | os.PathLike[str], mode: Literal["w"] = "w", *,
                 encoding: str = "utf-8", newline: str | None = None) -> contextlib.AbstractContextManager[IO[str]]: ...
@overload
def atomic_write(path: str | os.PathLike[str], mode: Literal["wb"], *,
                 encoding: str = "utf-8", newline: str | None = None) -> contextlib.AbstractContextManager[IO[bytes]]: ...
def atomic_write(path: str | os.PathLike[str], mode: str = "w", *, encoding: str = "utf-8",
                 newline: str | None = None) -> contextlib.AbstractContextManager[IO[str]] | contextlib.AbstractContextManager[IO[bytes]]:
    """A file object for ``path`` (``mode`` ``"w"`` text or ``"wb"`` bytes) that replaces ``path`` only
    when the block ends cleanly; the folder is created. Errors of the file system are a
    :class:`FinegrainError` naming the path."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write mode must be 'w' or 'wb', not {mode!r}")
    return cast("contextlib.AbstractContextManager[IO[str]]", _atomic(Path(path), mode, encoding, newline))


@contextlib.contextmanager
def _atomic(target: Path, mode: str, encoding: str, newline: str | None) -> Iterator[IO[str] | IO[bytes]]:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=TMP_SUFFIX)
    except OSError as e:
        raise _cannot_write(target, e) from None
    try:
        if mode == "wb":
            f: IO[str] | IO[bytes] = os.fdopen(fd, "wb")
        else:
            f = os.fdopen(fd, "w", encoding=encoding, newline=newline)
        with f:
            yield f
            try:
                f.flush()
                os.fsync(f.fileno())
            except OSError as e:
                raise _cannot_write(target, e) from None
        try:
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a written file gets the usual mode
            os.replace(tmp, target)
        except OSError as e:
            raise _cannot_write(target, e) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _cannot_write(target: Path, e: OSError) -> FinegrainError:
    return FinegrainError(f"cannot write {str(target)!r}: {e.strerror or e}",
                          "choose a writable folder with free space")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary path beside ``path`` for a writer that takes a path (a library's ``save(path)``);
    when the block ends cleanly the file is flushed to disk and renamed over ``path``, else removed."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=TMP_SUFFIX)
        os.close(fd)
    except OSError as e:
        raise _cannot_write(target, e) from None
    tmp = Path(name)
    try:
        yield tmp
        try:
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
            os.chmod(tmp, 0o666 & ~_umask())
            os.replace(tmp, target)
        except OSError as e:
            raise _cannot_write(target, e) from None
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def require_empty_folder(path: str | os.PathLike[str]) -> Path:
    """``path``, when it does not exist or is an empty folder; else a :class:`FinegrainError` (what
    :func:`atomic_folder` may replace, checked before any work that would be wasted)."""
    target = Path(path)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise FinegrainError(f"{str(target)!r} exists and is not an empty folder", "choose another path, or remove it")
    return target


@contextlib.contextmanager
def atomic_folder(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary folder beside ``path`` to fill (a model's files); when the block ends cleanly it is
    renamed to ``path``, else removed, so ``path`` holds the whole folder or nothing. ``path`` must not
    exist or be an empty folder (a :class:`FinegrainError` before anything is written)."""
    target = require_empty_folder(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=TMP_SUFFIX))
    except OSError as e:
        raise _cannot_write(target, e) from None
    try:
        yield tmp
        try:
            if target.is_dir():
                target.rmdir()  # empty, checked above
            os.replace(tmp, target)
        except OSError as e:
            raise _cannot_write(target, e) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically; returns the path."""
    with atomic_write(path, "w", encoding=encoding) as f:
        f.write(text)
    return Path(path)


def write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; returns the path."""
    with atomic_write(path, "wb") as f:
        f.write(data)
    return Path(path)


def remove_stale(folder: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary files killed writers left directly in ``folder``; returns what was removed."""
    removed: list[Path] = []
    root = Path(folder)
    if not root.is_dir():
        return removed
    for p in root.iterdir():
        if p.is_file() and is_temporary(p):
            with contextlib.suppress(OSError):
                p.unlink()
                removed.append(p)
    return removed


__all__ = ["TMP_SUFFIX", "atomic_folder", "atomic_path", "atomic_write", "is_temporary", "remove_stale", "require_empty_folder", "write_bytes", "write_text"]
