"""``finegrain`` entry point: the app from :func:`finegrain.cli.app.build_cli`, errors as one line and an exit code."""

from __future__ import annotations

import os
import sys
import warnings
from typing import TextIO

from finegrain.cli.app import build_cli
from finegrain.errors import FinegrainError

app = build_cli()


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: TextIO | None = None, line: str | None = None) -> None:
    """A warning raised in finegrain's own code as one ``warning:`` line (no source line: the user ran a
    command, not our file); other packages' warnings as Python shows them."""
    if f"{os.sep}finegrain{os.sep}" in filename:
        print(f"warning: {message}", file=file or sys.stderr)
    else:
        _PYTHON_SHOWWARNING(message, category, filename, lineno, file, line)


_PYTHON_SHOWWARNING = warnings.showwarning


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 1 out of memory, 2 bad input, 130 interrupted)."""
    warnings.showwarning = _show_warning
    try:
        app(args=argv, standalone_mode=True)
    except FinegrainError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except SystemExit as e:  # typer/click exit after --help or a usage error
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
