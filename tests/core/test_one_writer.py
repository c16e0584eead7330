"""Every file finegrain writes goes through finegrain.atomic: no module writes a file in place.

A file written in place and killed halfway is a half file that a later reader
may take as whole. This test reads the source of every module (ast, so
imports inside functions and methods count) and fails on a direct write: a
``write_text`` / ``write_bytes`` call, ``open`` or ``Path.open`` with a
writing mode, ``os.replace`` / ``os.rename`` / ``tempfile.mkstemp`` (a
hand-made atomic write), and numpy's ``np.save*`` to a path. The few places
that may write directly say why below.
"""

from __future__ import annotations

import ast
from pathlib import Path

import finegrain

SRC = Path(finegrain.__file__).parent

# module (relative to src/finegrain) -> why it may write directly
ALLOWED = {
    "atomic.py": "the one atomic writer",
    "retrieve/bm25/stream.py": "spills sorted runs into a private scratch folder it deletes; the index files "
                               "are moved into place by rename, its bm25.json written last",
    "retrieve/bm25/files.py": "place() renames a finished index file into place (an open map keeps the old one)",
    "retrieve/dense/encoders/cache.py": "moves a corrupt shard aside (rename), never writes one in place",
    "lexicons/wordnet.py": "copies WordNet into a private folder that is renamed into place whole",
    "testing/fuzz.py": "writes fuzzed inputs into its own temporary folder",
    "train/convert.py": "sentencepiece reads its rules from files in a TemporaryDirectory",
}

WRITE_MODES = ("w", "a", "x", "+")


def _mode(call: ast.Call, position: int) -> str | None:
    for kw in call.keywords:
        if kw.arg == "mode" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
            return kw.value.value
    if len(call.args) > position and isinstance(call.args[position], ast.Constant):
        value = call.args[position].value
        return value if isinstance(value, str) else None
    return None


def direct_writes(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, what)`` of each direct file write in a module's syntax tree."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
        if name in ("write_text", "write_bytes") and isinstance(f, ast.Attribute) and owner != "atomic":
            found.append((node.lineno, f".{name}()"))
        elif name == "open" and isinstance(f, ast.Name):
            mode = _mode(node, 1)
            if mode and any(c in mode for c in WRITE_MODES):
                found.append((node.lineno, f"open(..., {mode!r})"))
        elif name == "open" and isinstance(f, ast.Attribute) and owner not in ("gzip", "os", "io", "tarfile",
                                                                                "zipfile", "Image"):
            mode = _mode(node, 0)
            if mode and any(c in mode for c in WRITE_MODES):
                found.append((node.lineno, f".open({mode!r})"))
        elif (owner, name) in (("os", "replace"), ("os", "rename"), ("tempfile", "mkstemp"), ("np", "save"),
                               ("np", "savez"), ("np", "savez_compressed")):
            found.append((node.lineno, f"{owner}.{name}()"))
    return sorted(found)


def test_every_module_writes_files_through_the_atomic_writer() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in ALLOWED:
            continue
        for line, what in direct_writes(ast.parse(path.read_text(encoding="utf-8"))):
            offenders.append(f"{rel}:{line}: {what}")
    assert not offenders, ("write these through finegrain.atomic (atomic_write, atomic_path, write_text, "
                           "write_bytes):\n" + "\n".join(offenders))


def test_the_scan_sees_writes_inside_functions_and_methods() -> None:
    code = (
        "import os, numpy as np\n"
        "from pathlib import Path\n"
        "def f(p):\n"
        "    Path(p).write_text('x')\n"
        "    with open(p, 'w') as fh: fh.write('y')\n"
        "class C:\n"
        "    def g(self, p):\n"
        "        with p.open('a') as fh: pass\n"
        "        os.replace(p, p)\n"
        "        np.save(p, 1)\n"
        "        with open(p) as fh: pass\n"
    )
    assert [w for _, w in direct_writes(ast.parse(code))] == [
        ".write_text()", "open(..., 'w')", ".open('a')", "os.replace()", "np.save()"]


def test_the_allowed_modules_exist() -> None:
    assert all((SRC / rel).is_file() for rel in ALLOWED), [rel for rel in ALLOWED if not (SRC / rel).is_file()]
