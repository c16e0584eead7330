"""Tests that run twice: with finegrain's compiled helpers (``finegrain._native``, where they are built) and
without them (what an install without a C compiler runs), so both paths stay checked against one oracle."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from finegrain.native import NATIVE


def both_paths(*modules: ModuleType, without: str = "numpy") -> Callable[..., Any]:
    """An autouse fixture with params ``"compiled"`` and ``without``: for ``without``, the compiled module is
    taken away from each of ``modules`` (their ``NATIVE``); ``"compiled"`` skips where it is not built."""

    @pytest.fixture(autouse=True, params=["compiled", without])
    def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
        if request.param == "compiled" and NATIVE is None:
            pytest.skip("finegrain._native is not built here")
        if request.param == without:
            for module in modules:
                monkeypatch.setattr(module, "NATIVE", None)
        return str(request.param)

    return path
