"""The console terminal tables print to."""

from __future__ import annotations

import os

from rich.console import Console


def table_console() -> Console:
    """The console tables print to: the terminal's width (rich wraps cells to fit, 80 columns included).

    Files and pipes get 200 columns so that no cell is folded, unless
    ``COLUMNS`` is set, which is always honoured (``COLUMNS=80 finegrain ... > out.txt``).
    """
    console = Console()
    if not console.is_terminal and not os.environ.get("COLUMNS"):
        console = Console(width=max(console.width, 200))
    return console
