"""The README's Python example runs as written, and prints what its comments say.

The block is taken from README.md by its marker, so editing the example in a
way the library does not support fails here.
"""

from __future__ import annotations

import ast
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
MARKER = "<!-- readme-python-example"


def _example() -> str:
    text = README.read_text(encoding="utf-8")
    assert MARKER in text, "the README lost its Python example marker"
    after = text[text.index(MARKER):].split("\n", 1)[1]
    m = re.match(r"```python\n(.*?)```", after, re.DOTALL)
    assert m is not None, "the line after the marker must open the ```python block"
    return m.group(1)


def test_the_readme_opens_with_the_python_example() -> None:
    text = README.read_text(encoding="utf-8")
    assert text.index(MARKER) < text.index("## Two commands")  # before everything else but the intro
    code = _example()
    assert code.startswith("from finegrain import evaluate, compare, fuse, load_dataset")
    assert len(code.strip().splitlines()) <= 16  # about 15 lines


def test_the_readme_python_example_runs(tmp_path: Path) -> None:
    pytest.importorskip("pandas")  # the example calls to_dataframe()
    script = tmp_path / "readme_example.py"
    script.write_text(_example(), encoding="utf-8")
    out = subprocess.run([sys.executable, str(script)], check=False, capture_output=True, text=True, cwd=tmp_path,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert len(lines) == 4, out.stdout
    # bm25: q1 relevant first (1), q2 at rank 2 (1/log2(3) = 0.63093), q3 first (1) -> ndcg@10 mean 0.87698
    agg = ast.literal_eval(lines[0])
    assert agg["ndcg@10"] == pytest.approx((2 + 1 / math.log2(3)) / 3) and agg["recall@10"] == 1.0
    assert float(lines[1]) == pytest.approx(1 / math.log2(3))
    assert lines[2] == "(4, 3)"  # q4 has a row, NaN: it has no relevant item
    # rrf: q2's d2 gets 1/62 (bm25 rank 2) + 1/61 (dense rank 1) > d4's 1/61: every relevant document first
    assert float(lines[3]) == 1.0
    # the first evaluate says, once, that strict mode left q4 out (trec_eval would average it as 0)
    assert out.stderr.count("ExcludedQueriesWarning") == 1, out.stderr
    assert "1 of 4 queries (q4) has no relevant item" in out.stderr
