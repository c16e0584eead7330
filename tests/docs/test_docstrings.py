"""The examples in the docstrings of the public names (``finegrain.__all__``) run and print what they show.

The Python reference page renders these docstrings, so an example that stopped working would be taught.
"""

from __future__ import annotations

import doctest
import inspect

import pytest

import finegrain

PUBLIC = [name for name in finegrain.__all__ if name != "__version__"]


def _tests(name: str) -> list[doctest.DocTest]:
    obj = getattr(finegrain, name)
    if inspect.ismodule(obj):  # finegrain.evaluate and finegrain.compare are callable packages
        obj = getattr(obj, name)
    found = doctest.DocTestFinder(recurse=True).find(obj, name, globs={})
    return [t for t in found if t.examples]


@pytest.mark.parametrize("name", PUBLIC)
def test_docstring_examples_run(name: str) -> None:
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in _tests(name):
        runner.run(test)
    assert runner.failures == 0, f"{runner.failures} docstring example(s) of finegrain.{name} failed (see above)"


def test_the_main_names_have_an_example() -> None:
    for name in ("evaluate", "compare", "fuse", "load_dataset", "pool", "Evaluation", "Qrels", "Run",
                 "SavedResults"):
        assert _tests(name), f"finegrain.{name}'s docstring has no example"
