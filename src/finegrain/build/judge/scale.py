"""The grading scale of a judging session: the grades a judge may give and the label of each.

``Scale.parse("0,1,2")`` gives CapRetrieval's scale with its labels (0 irrelevant,
1 partial, 2 relevant); labels may be written out (``"0=no,1=yes"``). Scales of
two, three and four grades starting at 0 have default labels (the TREC words);
any other scale labels its lowest grade "irrelevant", its highest "relevant"
and those between by their number. Grades 0-9 are typed with the digit keys on
the judging page; others have buttons only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from finegrain.build.pool_file import DEFAULT_GRADES
from finegrain.errors import FinegrainError
from finegrain.numbers import NumberError, parse_grade

_DEFAULT_LABELS: Mapping[tuple[int, ...], tuple[str, ...]] = MappingProxyType({
    (0, 1): ("irrelevant", "relevant"),
    (0, 1, 2): ("irrelevant", "partial", "relevant"),
    (0, 1, 2, 3): ("irrelevant", "related", "relevant", "highly relevant"),
})
_HINT = "write the grades as integers separated by commas, e.g. --grades 0,1,2 or --grades 0=no,1=partly,2=yes"
MAX_LABEL = 40


@dataclass(frozen=True)
class Scale:
    """Grades in increasing order, each with a label (``labels[i]`` names ``grades[i]``)."""

    grades: tuple[int, ...] = DEFAULT_GRADES
    labels: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        grades = tuple(self.grades)
        if not grades:
            raise FinegrainError("the grading scale is empty", _HINT)
        if any(isinstance(g, bool) or not isinstance(g, int) for g in grades):
            raise FinegrainError(f"grades {list(grades)!r} are not all integers", _HINT)
        if len(set(grades)) != len(grades):
            raise FinegrainError(f"grades {list(grades)!r} name a grade twice", "list each grade once")
        if len(grades) < 2:
            raise FinegrainError(f"a scale of one grade ({grades[0]}) cannot tell items apart", "give two grades or more")
        order = sorted(range(len(grades)), key=grades.__getitem__)
        labels = tuple(self.labels) or default_labels(grades)
        if len(labels) != len(grades):
            raise FinegrainError(f"{len(labels)} labels for {len(grades)} grades", "give one label per grade")
        object.__setattr__(self, "grades", tuple(grades[i] for i in order))
        object.__setattr__(self, "labels", tuple(labels[i] for i in order))

    @classmethod
    def parse(cls, text: str) -> Scale:
        """``"0,1,2"`` or ``"0=irrelevant,1=partial,2=relevant"`` (labels optional, per grade)."""
        grades: list[int] = []
        named: dict[int, str] = {}
        for part in (p.strip() for p in text.split(",")):
            if not part:
                continue
            raw, sep, label = part.partition("=")
            try:
                g = parse_grade(raw.strip())  # the one number grammar: ASCII digits, int64
            except NumberError as e:
                raise FinegrainError(f"grade {raw.strip()!r} in --grades {text!r} is not an integer ({e.reason})",
                                     _HINT) from None
            grades.append(g)
            if sep:
                label = label.strip()
                if not label or len(label) > MAX_LABEL:
                    raise FinegrainError(f"label {label!r} of grade {g} in --grades {text!r} is empty or over "
                                         f"{MAX_LABEL} characters", "write a short label, e.g. 2=relevant")
                named[g] = label
        if not grades:
            raise FinegrainError(f"--grades {text!r} names no grade", _HINT)
        if len(set(grades)) != len(grades):
            raise FinegrainError(f"--grades {text!r} names a grade twice", "list each grade once")
        defaults = dict(zip(sorted(grades), default_labels(sorted(grades)), strict=True)) if len(grades) > 1 else {}
        return cls(tuple(grades), tuple(named.get(g, defaults.get(g, str(g))) for g in grades))

    @classmethod
    def from_json(cls, text: str) -> Scale:
        obj = json.loads(text)
        return cls(tuple(obj["grades"]), tuple(obj["labels"]))

    def to_json(self) -> str:
        return json.dumps({"grades": list(self.grades), "labels": list(self.labels)}, ensure_ascii=False)

    def __contains__(self, grade: object) -> bool:
        return isinstance(grade, int) and not isinstance(grade, bool) and grade in self.grades

    def label(self, grade: int) -> str:
        return self.labels[self.grades.index(grade)]

    def spelled(self) -> str:
        """``0 irrelevant / 1 partial / 2 relevant``."""
        return " / ".join(f"{g} {lab}" for g, lab in zip(self.grades, self.labels, strict=True))

    def same_grades(self, other: Scale) -> bool:
        return self.grades == other.grades


def default_labels(grades: Iterable[int]) -> tuple[str, ...]:
    """The default label of each of ``grades`` (sorted): see the module doc."""
    gs = tuple(sorted(grades))
    if gs in _DEFAULT_LABELS:
        return _DEFAULT_LABELS[gs]
    return tuple("irrelevant" if i == 0 else "relevant" if i == len(gs) - 1 else f"grade {g}" for i, g in enumerate(gs))
