"""``finegrain`` entry point: builds the app, turns FinegrainError into one line and an exit code."""

from __future__ import annotations

import sys

import typer

from finegrain.errors import FinegrainError

app = typer.Typer(
    name="finegrain",
    help="Retrieval evaluation, diagnosis and search that gets the details right.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register() -> None:
    # Each verb lives in its own module; importing it adds its command to ``app``.
    from finegrain.cli import (  # noqa: F401
        album_cmd,
        album_plan_cmd,
        album_search_cmd,
        album_serve_cmd,
        caption_corpus_cmd,
        compare_cmd,
        concepts_cmd,
        contrast_cmd,
        eval_cmd,
        evaluate_cmd,
        perturb_cmd,
        report_cmd,
    )


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 2 bad input, 130 interrupted)."""
    _register()
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
