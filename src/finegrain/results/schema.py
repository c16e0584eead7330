"""The base of every saved kind's schema: a frozen model validated when it is read.

Each section of a saved file that is more than a table of numbers (the error
analysis, the taxonomy, cross-validation, a threshold sweep, perturbation and
contrast results) is a :class:`Saved` subclass: the class is the type the code
reads, the validator run on load, and the writer (:meth:`Saved.to_json`). The
scalar types below are strict -- ``"0.1"`` is not a number, ``3.0`` or
``true`` not a count, NaN and infinities are refused -- so a hand-edited or
damaged file fails on load with one :class:`~finegrain.errors.DataFormatError`
naming the file and the JSON path of the first wrong value, never later
inside a report. Unknown keys are kept (a newer writer's additions survive a
round trip).
"""

from __future__ import annotations

import json
from os import PathLike
from typing import Annotated, Any, Self

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError

from finegrain.errors import DataFormatError

Number = Annotated[float, Strict(), Field(allow_inf_nan=False)]
"""A finite JSON number (an integer is accepted)."""
Share = Annotated[float, Strict(), Field(ge=0.0, le=1.0, allow_inf_nan=False)]
"""A proportion in [0, 1]."""
Count = Annotated[int, Strict(), Field(ge=0)]
"""A non-negative integer (not a bool, not a float)."""
Int = Annotated[int, Strict()]
Text = Annotated[str, Strict()]
Flag = Annotated[bool, Strict()]

_HINT = "the file was edited or damaged; write it again with the finegrain command that made it"


class Saved(BaseModel):
    """A frozen, validated section of a saved file; see the module docstring."""

    model_config = ConfigDict(frozen=True, extra="allow", allow_inf_nan=False, populate_by_name=True,
                              hide_input_in_errors=False)

    @classmethod
    def read(cls, data: Any, where: str | PathLike[str], section: str | None = None, *,
             hint: str = _HINT) -> Self:
        """Validate ``data`` (parsed JSON) as this kind; errors name ``where`` and the path inside it."""
        try:
            return cls.model_validate(data)
        except ValidationError as e:
            raise schema_error(e, where, section, cls.__name__, hint) from None

    def to_json(self) -> dict[str, Any]:
        """The JSON form (plain dicts and lists), keys as saved; :meth:`read` reads it back."""
        out: dict[str, Any] = self.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return out


def schema_error(e: ValidationError, where: str | PathLike[str], section: str | None, kind: str,
                 hint: str = _HINT) -> DataFormatError:
    """The first error of a validation as one DataFormatError: the JSON path, what it should be, what it is."""
    first = e.errors()[0]
    path = ".".join(str(p) for p in ((section,) if section else ()) + tuple(first["loc"])) or "the file"
    if first["type"] == "missing":
        return DataFormatError(where, None, f"{path} (a {kind} requires it)", "nothing", hint)
    should = first["msg"].removeprefix("Input should be ").removeprefix("Value error, ")
    return DataFormatError(where, None, f"{path} to be {should}", _show(first.get("input")), hint)


def _show(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


__all__ = ["Count", "Flag", "Int", "Number", "Saved", "Share", "Text", "schema_error"]
