"""Judging a pool: a local page where annotators grade one (query, passage) at a time, the
SQLite store every click goes to, the qrels made from the clicks and the annotators' agreement.

* :mod:`.store` -- :class:`JudgmentStore` (WAL, one transaction per click, history kept),
  :class:`Judgment`, :class:`Progress`, :func:`pool_fingerprint`;
* :mod:`.scale` -- :class:`Scale`: the grades and their labels;
* :mod:`.highlight` -- the query's words marked in the passage (jieba for zh, words for en);
* :mod:`.app` -- :func:`create_app`, the FastAPI page (needs the ``judge`` extra);
* :mod:`.export` -- :func:`export_qrels` by majority vote or adjudication, :func:`write_export`;
* :mod:`.agreement` -- :func:`store_agreement`: Cohen's, Fleiss' κ and Krippendorff's α.

``finegrain judge`` is the command line (:mod:`finegrain.cli.judge_cmd`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from finegrain._lazy import lazy_exports

if TYPE_CHECKING:
    from finegrain.build.judge.agreement import Agreement, PairAgreement, agreement, store_agreement
    from finegrain.build.judge.app import create_app
    from finegrain.build.judge.export import METHODS, Export, Tie, export_qrels, write_export
    from finegrain.build.judge.scale import Scale
    from finegrain.build.judge.store import Judgment, JudgmentStore, Progress, pool_fingerprint

__all__ = [
    "METHODS", "Agreement", "Export", "Judgment", "JudgmentStore", "PairAgreement", "Progress", "Scale", "Tie",
    "agreement", "create_app", "export_qrels", "pool_fingerprint", "store_agreement", "write_export",
]

__getattr__, __dir__ = lazy_exports(__name__, {
    ".agreement": "Agreement PairAgreement agreement store_agreement",
    ".app": "create_app",
    ".export": "METHODS Export Tie export_qrels write_export",
    ".scale": "Scale",
    ".store": "Judgment JudgmentStore Progress pool_fingerprint",
})
