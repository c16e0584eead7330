"""Write a benchmark's report into its own section of a page under ``docs/results/``.

A results page holds one section per script, between ``<!-- begin: SCRIPT -->`` and
``<!-- end: SCRIPT -->``. A run replaces its own section and leaves the rest of the page as it
is, so several scripts share one page (``docs/results/album.md`` holds four). A section starts
with the command that ran, the date, the machine and its load average before and after (the
machines these run on are shared, so a timing means little without the load); then comes the
report: the script's own markdown, or what it printed, as a text block.

In a script::

    ap = argparse.ArgumentParser(...)
    add_markdown_option(ap, "album.md")            # --markdown PATH, default docs/results/album.md
    args = ap.parse_args(argv)
    with Recorder(__file__, args.markdown) as rec:  # prints the command; tees stdout
        ...                                         # print the report
        rec.status = 1                              # when the run failed: nothing is written

``--markdown -`` writes nothing. A script that keeps its outputs in a folder and skips what is already
there sets ``rec.outputs`` to that folder: when a call reuses files earlier calls wrote, its run line says
so and when they were written, since the seconds it shows are this call's alone.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import shlex
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TextIO

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "docs" / "results"


def add_markdown_option(ap: argparse.ArgumentParser, page: str, *aliases: str) -> None:
    """``--markdown PATH``: the results page this run writes its section into (default ``docs/results/PAGE``)."""
    ap.add_argument("--markdown", *aliases, dest="markdown", default=str(RESULTS / page), metavar="PATH",
                    help=f"results page to write this script's section into (default docs/results/{page}; "
                         "'-' writes nothing)")


def command_line(script: str, argv: list[str] | None = None) -> str:
    """The command as one shell line: FINEGRAIN_* variables set, ``python benchmarks/SCRIPT ARGS``."""
    args = sys.argv[1:] if argv is None else argv
    env = [f"{k}={shlex.quote(v)}" for k, v in sorted(os.environ.items()) if k.startswith("FINEGRAIN_")]
    return " ".join([*env, "python", shlex.join([f"benchmarks/{Path(script).name}", *args])])


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def _machine() -> str:
    try:
        from finegrain.machine import describe_machine

        m = describe_machine()
        return f"{m.cpu_model or m.architecture}, {m.logical_cpus} logical CPUs"
    except Exception:  # noqa: BLE001  (the page names the machine when it can; the run never fails on it)
        return f"{os.cpu_count()} logical CPUs"


def _title(script: str) -> str:
    """The first line of the script's docstring."""
    text = Path(script).read_text(encoding="utf-8")
    m = re.search(r'^"""(.*)$', text, flags=re.MULTILINE)
    return m.group(1).strip().rstrip('"').strip() if m else Path(script).name


def reused_outputs(folder: Path, since: datetime) -> str | None:
    """What a call that started at ``since`` took from earlier calls in ``folder``: the number of files
    last written before it and when, or None when there are none."""
    stamps = [f.stat().st_mtime for f in Path(folder).rglob("*") if f.is_file()] if Path(folder).is_dir() else []
    earlier = sorted(t for t in stamps if t < since.timestamp())
    if not earlier:
        return None
    first, last = (datetime.fromtimestamp(t, UTC) for t in (earlier[0], earlier[-1]))
    return (f"reused {len(earlier)} file(s) under {folder} that earlier calls wrote, "
            f"{first:%Y-%m-%d %H:%M} to {last:%Y-%m-%d %H:%M} UTC")


def write_section(page: Path, script: str, body: list[str], *, command: str, run_line: str,
                  section: str | None = None) -> None:
    """Replace (or append) the section of ``page`` named ``section`` (default: the script's file name):
    heading, command, run line, then ``body``."""
    name = section or Path(script).name
    begin, end = f"<!-- begin: {name} -->", f"<!-- end: {name} -->"
    text_section = "\n".join([begin, f"## `{name}`: {_title(script)}", "", f"Command: `{command}`", "", run_line,
                              "", *body, end])
    page = Path(page)
    if page.exists():
        text = page.read_text(encoding="utf-8")
    else:
        text = (f"# Results: {page.stem}\n\nEach section is written by the benchmark script it names "
                "(`--markdown` chooses the page); re-run the command to refresh it.\n")
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), flags=re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: text_section, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + text_section + "\n"
    page.parent.mkdir(parents=True, exist_ok=True)
    tmp = page.with_name(page.name + ".tmp")  # renamed into place: an interrupted run leaves the page whole
    tmp.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    tmp.replace(page)


class _Tee(io.TextIOBase):
    def __init__(self, out: TextIO) -> None:
        self.out, self.buf = out, io.StringIO()

    def write(self, s: str) -> int:
        self.out.write(s)
        return self.buf.write(s)

    def flush(self) -> None:
        self.out.flush()


class Recorder:
    """Prints the command, records what the script prints, and writes it as the script's section on a clean exit.

    ``markdown`` is the page (``-`` or None: nothing is written); ``section`` names the section when one script
    keeps several on a page (default: the script's file name). Give :attr:`body` markdown lines to write
    them instead of the printed text; set :attr:`status` to non-zero when the run failed (nothing is written);
    set :attr:`outputs` to the folder a script resumes from, so the run line says what this call reused.
    """

    def __init__(self, script: str, markdown: str | os.PathLike[str] | None, argv: list[str] | None = None,
                 section: str | None = None) -> None:
        self.script = script
        self.section = section
        self.page = None if markdown in (None, "", "-") else Path(markdown)
        self.command = command_line(script, argv)
        self.body: list[str] | None = None
        self.status = 0
        self.outputs: Path | None = None

    def __enter__(self) -> Recorder:
        print(f"command: {self.command}", flush=True)
        self.started = datetime.now(UTC)
        self.t0 = time.perf_counter()
        self.load_before = _load()
        self.tee = _Tee(sys.stdout)
        self.saved = sys.stdout
        sys.stdout = self.tee  # type: ignore[assignment]
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        sys.stdout = self.saved
        if kind is not None or self.status != 0 or self.page is None:
            if self.page is not None:
                print(f"{self.page} not written (the run failed)")
            return
        reused = None if self.outputs is None else reused_outputs(self.outputs, self.started)
        took = f"{time.perf_counter() - self.t0:.0f} s" + ("" if reused is None else f" (this call; it {reused})")
        run_line = (f"Run: {self.started:%Y-%m-%d %H:%M} UTC, {took}; "
                    f"{_machine()}; load average (1/5/15 min) before {self.load_before}, after {_load()}.")
        body = self.body if self.body is not None else ["```text", *self.tee.buf.getvalue().rstrip("\n").splitlines(),
                                                        "```"]
        write_section(self.page, self.script, body, command=self.command, run_line=run_line, section=self.section)
        print(f"wrote its section of {self.page}")
