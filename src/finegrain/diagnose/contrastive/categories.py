"""CCD's two-level category taxonomy (Wang et al., Table 5), its aliases, and SugarCrepe's types mapped onto it."""

from __future__ import annotations

from collections.abc import Mapping

from finegrain.errors import FinegrainError

#: CCD Table 5: the nine second-level categories, in the paper's column order, with their group.
CCD_CATEGORIES: tuple[str, ...] = (
    "entity type",
    "entity attribute",
    "entity relation",
    "entity emotion",
    "scene type",
    "scene attribute",
    "event type",
    "event attribute",
    "style & presentation",
)
CCD_GROUPS: Mapping[str, str] = {
    "entity type": "entity",
    "entity attribute": "entity",
    "entity relation": "entity",
    "entity emotion": "entity",
    "scene type": "scene",
    "scene attribute": "scene",
    "event type": "event",
    "event attribute": "event",
    "style & presentation": "style & presentation",
}
GROUP_ORDER: tuple[str, ...] = ("entity", "scene", "event", "style & presentation")

_ALIASES: Mapping[str, str] = {
    "entity attr": "entity attribute",
    "entity rel": "entity relation",
    "entity relationship": "entity relation",
    "emotion": "entity emotion",
    "entity emo": "entity emotion",
    "emotion and mood": "entity emotion",
    "scene attr": "scene attribute",
    "event action type": "event type",
    "action type": "event type",
    "event action attribute": "event attribute",
    "action attribute": "event attribute",
    "event attr": "event attribute",
    "style and presentation": "style & presentation",
    "style presentation": "style & presentation",
    "s&p": "style & presentation",
    "sp": "style & presentation",
    "style": "style & presentation",
}

#: SugarCrepe's seven hard-negative types mapped onto the CCD taxonomy (nearest CCD category).
SUGARCREPE_TO_CCD: Mapping[str, str] = {
    "add_obj": "entity type",
    "replace_obj": "entity type",
    "add_att": "entity attribute",
    "replace_att": "entity attribute",
    "swap_att": "entity attribute",
    "replace_rel": "entity relation",
    "swap_obj": "event attribute",
}
#: Why each SugarCrepe category maps where it does (written into results.json).
SUGARCREPE_MAPPING_NOTES: Mapping[str, str] = {
    "add_obj": "the negative adds an entity the image lacks: which entities are present (entity type)",
    "replace_obj": "one entity replaced by another of a different kind (entity type)",
    "add_att": "the negative adds an attribute (colour, material, ...) to an entity (entity attribute)",
    "replace_att": "an entity's attribute replaced by another (entity attribute)",
    "swap_att": "attributes exchanged between two entities, i.e. attribute binding (entity attribute)",
    "replace_rel": "the relation between entities replaced: spatial ('on' -> 'behind') or interactive "
                   "('holding' -> 'riding'), CCD's entity relation examples; some are actions (event type)",
    "swap_obj": "subject and object exchanged ('a woman prepares a pizza while a man watches' -> the reverse): "
                "CCD's event/action attribute, 'participants ... such as subject and object'",
}


def canonical_ccd(name: str) -> str | None:
    """The CCD category ``name`` denotes (case, ``_``/``-``/``/`` and aliases tolerated), or None."""
    key = " ".join(name.lower().replace("_", " ").replace("-", " ").replace("/", " ").split())
    if key in CCD_GROUPS:
        return key
    return _ALIASES.get(key)


def ccd_group(category: str) -> str:
    """The top-level CCD group (entity, scene, event, style & presentation) of a CCD category."""
    try:
        return CCD_GROUPS[category]
    except KeyError:
        raise FinegrainError(f"{category!r} is not a CCD category", f"use one of {', '.join(CCD_CATEGORIES)}") from None

