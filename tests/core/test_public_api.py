"""The lazy public API shows its functions to tools: inspect.signature and help() of finegrain.evaluate and
finegrain.compare are the functions', and import finegrain still loads none of their modules."""

from __future__ import annotations

import ast
import inspect
import pydoc
import subprocess
import sys

import finegrain


def test_signatures_are_the_functions() -> None:
    from finegrain.compare.comparison import compare
    from finegrain.evaluate.evaluate import evaluate

    assert inspect.signature(finegrain.evaluate) == inspect.signature(evaluate)
    assert "qrels" in str(inspect.signature(finegrain.evaluate))
    assert inspect.signature(finegrain.compare) == inspect.signature(compare)


def test_help_opens_with_the_signature_and_docstring() -> None:
    text = pydoc.render_doc(finegrain.evaluate, renderer=pydoc.plaintext)
    name_section = text.split("DESCRIPTION")[0]
    assert "finegrain.evaluate - evaluate(qrels" in name_section
    description = text.split("DESCRIPTION", 1)[1]
    assert description.lstrip().startswith("Evaluate ``run`` against ``qrels``")
    assert "Compare systems on the same queries" in pydoc.render_doc(finegrain.compare, renderer=pydoc.plaintext)


def test_the_package_is_still_the_package_and_calls_the_function() -> None:
    from finegrain.evaluate import result

    assert finegrain.evaluate.result is result and callable(finegrain.evaluate)
    assert finegrain.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, "recall@1").mean("recall@1") == 1.0


def test_import_finegrain_stays_light() -> None:
    code = ("import sys, finegrain; print(sorted(m for m in sys.modules if m.startswith('finegrain.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    loaded = ast.literal_eval(out.stdout)
    assert not [m for m in loaded if m.split(".")[1] in ("evaluate", "compare", "io", "results", "metrics")], loaded
