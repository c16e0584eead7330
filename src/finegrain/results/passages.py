"""The ``"passages"`` section of ``results.json``: the text of every passage the report's drill-down lists.

The drill-down shows each query's top ``k`` (``judged.k``) and the relevant passages the error
analysis names as missed; ``finegrain eval`` saves the text of those passages, and of no other,
each cut to :data:`PASSAGE_CHARS` characters (:func:`shorten`), so a report can show what was
retrieved without the dataset and ``results.json`` stays small. A document without text (a
PhotoBench photo) is left out. Files written before the section existed have none, and the
drill-down shows document ids only.
"""

from __future__ import annotations

from finegrain.results.schema import Count, Saved, Text

PASSAGE_CHARS = 240
"""The most characters of a passage saved for the drill-down (whitespace runs count as one)."""
ELLIPSIS = "…"


class PassagesSection(Saved):
    """``results["passages"]``: ``text[doc_id]``, each at most ``chars`` characters."""

    chars: Count
    text: dict[Text, Text]


def shorten(text: str, chars: int = PASSAGE_CHARS) -> str:
    """``text`` with whitespace runs as one space, cut to ``chars`` characters (the last an ellipsis when cut)."""
    flat = " ".join(text.split())
    if len(flat) <= chars:
        return flat
    return flat[: max(chars - 1, 0)].rstrip() + ELLIPSIS


__all__ = ["ELLIPSIS", "PASSAGE_CHARS", "PassagesSection", "shorten"]
