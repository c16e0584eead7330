"""The one fold maker of finegrain's cross-validation over queries.

Used by the threshold sweep (:mod:`finegrain.experiment.tuning.threshold`), ``eval --cv``
(:mod:`finegrain.experiment.tuning.cv`) and fusion weights by CV
(:mod:`finegrain.experiment.tuning.fusion_weights`): seeded, optionally stratified by query type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from finegrain.evaluate.groups import group_of, order_groups


def fold_of(queries: Sequence[str], folds: int, seed: int,
            strata: Mapping[str, str | None] | None = None) -> dict[str, int]:
    """Each query's fold: the queries in a seeded random order, dealt round-robin (fold sizes differ by <= 1).

    ``strata`` (``{qid: query type}``; a missing or None type is one stratum of its own) deals each
    stratum in turn (sorted by name, each shuffled by the same seeded generator), continuing the
    round-robin across strata: every fold gets each type's queries in proportion (within one query)
    and fold sizes still differ by at most one. Without ``strata`` the queries are dealt in one seeded order.
    """
    if strata is None:
        order = np.random.default_rng(seed).permutation(len(queries))
        return {queries[int(i)]: j % folds for j, i in enumerate(order)}

    rng = np.random.default_rng(seed)
    groups: dict[str, list[str]] = {}
    for q in queries:
        groups.setdefault(group_of(strata.get(q)), []).append(q)
    out: dict[str, int] = {}
    j = 0
    for g in order_groups(groups):
        members = groups[g]
        for i in rng.permutation(len(members)):
            out[members[int(i)]] = j % folds
            j += 1
    return out
