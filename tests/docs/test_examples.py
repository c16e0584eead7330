"""Every example in README.md and docs/**/*.md runs as written, and prints what the page shows.

The rules a page follows (read by Sybil, https://sybil.readthedocs.io, with the parsers below):

- A page runs in a fresh temporary working directory, with ``FINEGRAIN_DATA`` set to the shared data
  (``$FINEGRAIN_DATA`` when set, else ``../shared/data`` beside the repository), ``COLUMNS=100`` so that
  tables keep one width, and no colour.
- ````python```` blocks of one page run in order in one shared namespace. A block written as a doctest
  session (``>>>`` lines) has its output checked.
- ````console```` blocks hold commands, each a line starting with ``$ `` (a line ending in ``\\`` continues
  on the next), run with bash in that same directory with the repository's ``.venv/bin`` (and the bin
  folder of the Python running the tests) first on ``PATH``. The lines after a command, up to the next
  ``$ ``, are its expected output (stdout and stderr together, as a terminal shows them), checked where
  shown: a line ``...`` stands for any number of lines, and ``...`` inside a line for any text. A command
  must exit 0, unless its shown output has an ``error:`` line (a page showing an error message).
- Other blocks (````text````, ````json````, ````yaml````, ...) are not run. A block directly preceded by
  ``<!-- skip: REASON -->`` is not run either: only for what cannot run here (a Ray cluster's address, a
  model the reader supplies).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

sybil = pytest.importorskip("sybil")
from sybil import Document, Example, Region  # noqa: E402
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser  # noqa: E402
from sybil.typing import Parser  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted([REPO / "README.md", *(REPO / "docs").rglob("*.md")])
COMMAND_TIMEOUT = 600  # seconds for one console command

# ``<!-- skip: REASON -->`` and the fenced block right after it (blank lines between them allowed)
_SKIPPED_BLOCK = re.compile(r"<!--\s*skip:\s*(?P<reason>.+?)\s*-->\s*\n(?P<fence>[ \t]*(`{3,}|~{3,})[^\n]*\n.*?\n[ \t]*\3)",
                            re.DOTALL)


def skipped_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of the fenced blocks a ``<!-- skip: REASON -->`` comment turns off."""
    return [(m.start("fence"), m.end("fence")) for m in _SKIPPED_BLOCK.finditer(text)]


class Skipping:
    """A parser that drops the regions of ``inner`` lying in a skipped block."""

    def __init__(self, inner: Parser) -> None:
        self.inner = inner

    def __call__(self, document: Document) -> Iterable[Region]:
        spans = skipped_spans(document.text)
        for region in self.inner(document):
            if not any(start <= region.start < end for start, end in spans):
                yield region


def console_commands(source: str) -> list[tuple[str, list[str]]]:
    """``[(command, expected output lines)]`` of a console block: ``$ `` lines, ``\\`` continuations, output."""
    commands: list[tuple[str, list[str]]] = []
    continuing = False
    for line in source.splitlines():
        if continuing:
            cmd, out = commands[-1]
            commands[-1] = (cmd + "\n" + line, out)
            continuing = line.endswith("\\")
        elif line.startswith("$ "):
            commands.append((line[2:], []))
            continuing = line.endswith("\\")
        elif commands:
            commands[-1][1].append(line)
        elif line.strip():
            raise ValueError(f"a console block must start with a '$ ' command line, found: {line!r}")
    return commands


def output_pattern(expected: list[str]) -> re.Pattern[str]:
    """A regex for the expected lines: a line ``...`` matches any lines, ``...`` in a line any text."""
    parts = []
    for line in expected:
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(piece) for piece in line.rstrip().split("...")) + r"\n")
    return re.compile("".join(parts), re.DOTALL)


def output_matches(expected: list[str], actual: str) -> bool:
    """Whether ``actual`` is what ``expected`` shows (trailing spaces and blank lines at either end ignored)."""
    while expected and not expected[-1].strip():
        expected = expected[:-1]
    while expected and not expected[0].strip():
        expected = expected[1:]
    text = "".join(line.rstrip() + "\n" for line in actual.strip("\n").splitlines())
    return output_pattern(expected).fullmatch(text) is not None


def tool_path() -> str:
    """``PATH`` with the repository's ``.venv/bin`` and the test Python's bin folder first."""
    first = [str(REPO / ".venv" / "bin"), str(Path(sys.executable).parent)]
    return os.pathsep.join([*first, os.environ.get("PATH", "")])


class ConsoleParser(CodeBlockParser):
    """````console```` blocks: each ``$ `` command runs with bash in the page's directory, its output checked."""

    language = "console"

    def __init__(self) -> None:
        super().__init__("console")

    def evaluate(self, example: Example) -> str | None:
        env = {**os.environ, "PATH": tool_path(), "PYTHONUNBUFFERED": "1"}  # stdout and stderr in the order written
        for command, expected in console_commands(example.parsed):
            done = subprocess.run(["bash", "-c", command], cwd=os.getcwd(), env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=COMMAND_TIMEOUT, check=False)
            output = done.stdout
            shows_error = any(line.startswith("error:") for line in expected)
            if done.returncode != 0 and not shows_error:
                return f"$ {command}\nexited {done.returncode}:\n{output[-3000:]}"
            if any(line.strip() for line in expected) and not output_matches(expected, output):
                return f"$ {command}\nexpected:\n" + "\n".join(expected) + f"\nfound:\n{output[-3000:]}"
        return None


def data_root() -> str:
    return os.environ.get("FINEGRAIN_DATA") or str(REPO.parent / "shared" / "data")


def examples(page: Path) -> Iterator[Example]:
    parsers = [Skipping(PythonCodeBlockParser()), Skipping(ConsoleParser())]
    document = Document.parse(str(page), *parsers)
    yield from document


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_page_examples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FINEGRAIN_DATA", data_root())
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("TERM", "dumb")
    for example in examples(page):
        example.evaluate()


# The rules themselves: each check below fails if the rule it names is broken.

def test_a_command_s_output_lines_follow_it_up_to_the_next_command() -> None:
    source = "$ echo a \\\n  b\na b\n$ true\n"
    assert console_commands(source) == [("echo a \\\n  b", ["a b"]), ("true", [])]


@pytest.mark.parametrize(("expected", "actual", "ok"), [
    (["a", "b"], "a\nb\n", True),
    (["a", "b"], "a\nc\n", False),
    (["a", "...", "d"], "a\nb\nc\nd", True),
    (["a", "...", "d"], "a\nd", True),
    (["x = ..."], "x = 0.8770", True),
    (["x = ...7"], "x = 0.8770", False),
    (["a"], "a\nb", False),  # output the page does not show fails
])
def test_the_ellipsis_stands_for_lines_or_text(expected: list[str], actual: str, ok: bool) -> None:
    assert output_matches(expected, actual) is ok


def test_a_skip_comment_turns_off_only_the_block_right_after_it() -> None:
    text = "<!-- skip: needs a Ray cluster -->\n```console\n$ false\n```\n\n```console\n$ true\n```\n"
    spans = skipped_spans(text)
    assert len(spans) == 1 and "false" in text[slice(*spans[0])] and "true" not in text[slice(*spans[0])]


def test_pages_are_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page whose output differs from what it shows, or whose command fails, fails."""
    page = tmp_path / "page.md"
    page.write_text("```python\nx = 2\n```\n\n```python\n>>> x + 1\n4\n\n```\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(AssertionError):
        for example in examples(page):
            example.evaluate()
    page.write_text("```console\n$ echo hello\nhullo\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError):
        for example in examples(page):
            example.evaluate()
    page.write_text("```console\n$ exit 3\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError):
        for example in examples(page):
            example.evaluate()
    page.write_text("<!-- skip: not here -->\n```console\n$ exit 3\n```\n\n```text\n$ exit 3\n```\n", encoding="utf-8")
    for example in examples(page):
        example.evaluate()
