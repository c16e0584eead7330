"""Roll-ups of query types into coarser groups, such as CapRetrieval's Table 3.

CapRetrieval (Xu et al., 2025, Appendix B.1) types its queries in eight
types; Table 3 reports five groups, the four singleton types of entities
(object, person, place, concept) merged into **Singleton Entity**:

    Singleton Entity   singleton_object, singleton_person, singleton_place, singleton_concept
    Singleton Event    singleton_event
    Conjunction        conjunction
    Simple Cond.       simple_condition
    Complex Cond.      complex_condition

:func:`rollup_of` recognises a dataset's types by name: the roll-up applies
when every type (besides ``"untyped"``) is one of the eight and at least one
is a singleton entity type; a query without a type stays ``"untyped"``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from finegrain.evaluate.groups import UNTYPED


@dataclass(frozen=True)
class Rollup:
    """A named map from query types to groups, with the groups' display order."""

    name: str
    source: str
    groups: Mapping[str, str]  # query type -> group
    order: tuple[str, ...]

    def group(self, query_type: str) -> str:
        return self.groups.get(query_type, query_type)

    def ordered(self, groups: Iterable[str]) -> list[str]:
        """The groups present, in the roll-up's order, other names after them (``"untyped"`` last)."""
        present = set(groups)
        rest = sorted(g for g in present if g not in self.order and g != UNTYPED)
        return [g for g in self.order if g in present] + rest + ([UNTYPED] if UNTYPED in present else [])


_ENTITY = ("singleton_object", "singleton_person", "singleton_place", "singleton_concept")
CAPRETRIEVAL_TABLE3 = Rollup(
    name="capretrieval_table3",
    source="CapRetrieval (Xu et al., 2025), Table 3: query types rolled up, Singleton Entity = object, person, "
           "place and concept",
    groups=MappingProxyType({**{t: "Singleton Entity" for t in _ENTITY}, "singleton_event": "Singleton Event",
                             "conjunction": "Conjunction", "simple_condition": "Simple Cond.",
                             "complex_condition": "Complex Cond."}),
    order=("Singleton Entity", "Singleton Event", "Conjunction", "Simple Cond.", "Complex Cond."),
)
ROLLUPS = (CAPRETRIEVAL_TABLE3,)


def rollup_of(types: Iterable[str]) -> Rollup | None:
    """The roll-up whose types these are (see the module docstring), or None."""
    present = {t for t in types if t != UNTYPED}
    for r in ROLLUPS:
        if present and present <= set(r.groups) and present & set(_ENTITY):
            return r
    return None
