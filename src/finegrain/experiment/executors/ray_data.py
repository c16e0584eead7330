"""Ray Data's console output: finegrain shows the shards done itself."""

from __future__ import annotations

import logging
import warnings


def quiet_ray_data() -> None:
    """Ray Data's own progress bars and INFO lines off the console (its log file keeps them):
    finegrain shows shards done itself."""
    try:
        from ray.data import DataContext  # importing Ray Data configures its loggers: quiet them after
    except ImportError:  # pragma: no cover - Ray without Ray Data
        return
    for handler in logging.getLogger("ray.data").handlers:
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
            handler.setLevel(logging.WARNING)  # the console; its file handler keeps INFO
    with warnings.catch_warnings():  # Ray's own context sets its deprecated fields at creation
        warnings.simplefilter("ignore", DeprecationWarning)
        ctx = DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.verbose_progress = False
