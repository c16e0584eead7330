"""The saved-kind base: strict scalars, one error naming the file and the JSON path, round trip."""

from __future__ import annotations

import pytest

from finegrain.errors import DataFormatError
from finegrain.results.schema import Count, Number, Saved, Share, Text


class _Cell(Saved):
    n: Count
    share: Share | None = None


class _Kind(Saved):
    name: Text
    value: Number
    cells: dict[str, _Cell] = {}


@pytest.mark.parametrize(("body", "path", "found"), [
    ({"name": "a", "value": "0.1"}, "value", '"0.1"'),
    ({"name": "a", "value": float("nan")}, "value", "NaN"),
    ({"name": "a", "value": 1, "cells": {"x": {"n": "3"}}}, "cells.x.n", '"3"'),
    ({"name": "a", "value": 1, "cells": {"x": {"n": True}}}, "cells.x.n", "true"),
    ({"name": "a", "value": 1, "cells": {"x": {"n": 2.0}}}, "cells.x.n", "2.0"),
    ({"name": "a", "value": 1, "cells": {"x": {"n": -1}}}, "cells.x.n", "-1"),
    ({"name": "a", "value": 1, "cells": {"x": {"n": 1, "share": 83.6}}}, "cells.x.share", "83.6"),
    ({"value": 1}, "name", "nothing"),
])
def test_a_wrong_value_is_one_error_naming_file_and_path(body: dict, path: str, found: str) -> None:
    with pytest.raises(DataFormatError) as e:
        _Kind.read(body, "f.json", "sec")
    msg = str(e.value)
    assert msg.startswith(f"f.json: expected sec.{path} ")
    assert f"found {found!r}" in msg


def test_round_trip_keeps_unknown_keys_and_leaves_unset_fields_out() -> None:
    body = {"name": "a", "value": 1.5, "cells": {"x": {"n": 2}}, "future": [1, {"y": 2}]}
    kind = _Kind.read(body, "f.json")
    assert kind.cells["x"].n == 2
    assert kind.to_json() == body
    assert _Kind.read(kind.to_json(), "f.json") == kind


def test_objects_are_frozen() -> None:
    kind = _Kind.read({"name": "a", "value": 1}, "f.json")
    with pytest.raises(Exception, match="frozen"):
        kind.name = "b"  # type: ignore[misc]
