"""``finegrain`` entry point: the app from :func:`finegrain.cli.app.build_cli`, errors as one line and an exit code."""

from __future__ import annotations

import sys

from finegrain.cli.app import build_cli
from finegrain.errors import FinegrainError

app = build_cli()


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 2 bad input, 130 interrupted)."""
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
