"""The two bipartite matchings behind NCS and SD.

* :func:`max_weight_matching` -- NCS pairs the non-common concepts of the two images so that the
  summed path similarity is largest. As in the paper (its footnote names it), networkx's
  ``max_weight_matching`` (Galil's blossom algorithm, O(|V|^3)) solves it, with
  ``maxcardinality=True`` so that every concept of the smaller side is paired even when an
  edge weight is 0. On a complete bipartite graph with positive weights the two coincide.
* :func:`min_weight_full_matching` -- SD pairs same-synset objects so that the summed area
  difference is smallest, pairing every object of the smaller side (a *full* matching). This
  calls ``scipy.optimize.linear_sum_assignment`` directly: networkx's
  ``bipartite.minimum_weight_full_matching`` is itself a wrapper that builds a graph and then
  calls the same scipy routine, so the direct call gives the same optimum without the graph
  building and without needing unique node labels for repeated objects.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def max_weight_matching(weights: np.ndarray) -> list[tuple[int, int]]:
    """Maximum-weight matching of maximum cardinality on the complete bipartite graph ``weights[i, j]``.

    Returns ``(row, column)`` pairs sorted by row; ``min(rows, columns)`` of them.
    """
    import networkx as nx

    w = np.asarray(weights, dtype=float)
    n, m = w.shape
    g = nx.Graph()
    g.add_nodes_from((0, i) for i in range(n))
    g.add_nodes_from((1, j) for j in range(m))
    g.add_weighted_edges_from(((0, i), (1, j), float(w[i, j])) for i in range(n) for j in range(m))
    pairs = []
    for u, v in nx.max_weight_matching(g, maxcardinality=True):
        (su, iu), (_, iv) = u, v
        pairs.append((iu, iv) if su == 0 else (iv, iu))
    return sorted(pairs)


def min_weight_full_matching(costs: np.ndarray) -> list[tuple[int, int]]:
    """Minimum-cost matching pairing every node of the smaller side (``linear_sum_assignment``).

    Costs are made finite first (NaN and +inf become the largest cost, -inf the smallest, all within
    ``±`` :func:`_cost_limit`): the assignment calls an infinite matrix "infeasible", and sums of
    huge costs overflow.
    """
    from scipy.optimize import linear_sum_assignment

    c = np.asarray(costs, dtype=float)
    if c.size == 0:
        return []
    limit = _cost_limit(c.shape)
    c = np.clip(np.nan_to_num(c, nan=limit, posinf=limit, neginf=-limit), -limit, limit)
    rows, cols = linear_sum_assignment(c)
    return sorted(zip(rows.tolist(), cols.tolist()))


def _cost_limit(shape: tuple[int, ...]) -> float:
    """The largest cost magnitude whose sums along any assignment stay finite (with room to spare)."""
    return float(np.finfo(np.float64).max) / (4.0 * (sum(shape) + 1))


def matched_weight(weights: np.ndarray, pairs: Sequence[tuple[int, int]]) -> float:
    """Sum of ``weights`` over ``pairs``."""
    return float(sum(weights[i, j] for i, j in pairs))
