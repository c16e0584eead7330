"""A seeded mutational fuzzer for finegrain's loaders: crashes, misparses and clean errors.

Each :class:`Target` is a loader (a function of a folder of input files)
with seed inputs and, where one can be written, an *oracle*: an independent
reference reading of the same bytes that says what the loader must return,
or that the input is invalid. Inputs are made by mutating a seed with a
fixed-seed random generator (byte flips, inserts, deletions, splices,
truncation, tokens from a dictionary of hostile values, line edits, gzip
corruption). Every input gets one :class:`Outcome`:

- ``ok``       the loader returned what the oracle expects (or, without an oracle, returned);
- ``error``    the loader raised :class:`~finegrain.errors.FinegrainError` and the oracle
  agrees the input is invalid (without an oracle: any FinegrainError);
- ``refused``  a FinegrainError on input the oracle reads as valid (stricter than the oracle);
- ``crash``    any other exception (a traceback for the user);
- ``misparse`` the loader returned something the oracle rejects, or a different value.

``crash`` and ``misparse`` are the defects. The same fuzzer runs in the test
suite (a few hundred inputs per target) and in ``benchmarks/fuzz_loaders.py``
(100,000 inputs per target), which runs :func:`run_chunks`: each target's inputs
cut into fixed chunks, each chunk's generator seeded by ``(seed, target, chunk)``,
so the counts and findings are the same whether one process runs them or several.
"""

from __future__ import annotations

import gzip
import multiprocessing
import random
import signal
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from finegrain.errors import FinegrainError

OUTCOMES = ("ok", "error", "refused", "crash", "misparse")
DEFECTS = ("crash", "misparse")

Files = Mapping[str, bytes]  # relative path -> content (".gz" names hold gzipped bytes)


class Invalid(Exception):
    """Raised by an oracle: the input is not valid for this format (the loader must refuse it)."""


@dataclass(frozen=True)
class Target:
    """A loader under fuzzing.

    ``load(folder)`` reads the input files written into ``folder`` and returns
    a comparable value (plain dicts and tuples); ``oracle(files)`` returns the
    value the loader must return for these bytes or raises :class:`Invalid`;
    None when no reference reading exists (then only crashes are defects).
    ``mutable`` names the files mutations may touch (default: all).
    """

    name: str
    seeds: tuple[Files, ...]
    load: Callable[[Path], Any]
    oracle: Callable[[Files], Any] | None = None
    mutable: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Finding:
    target: str
    outcome: str
    detail: str
    files: Files


@dataclass
class Report:
    """Counts per target and outcome, and the first few findings of each defect kind."""

    counts: dict[str, Counter[str]] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    keep: int = 20
    seconds: dict[str, float] = field(default_factory=dict)  # time spent per target (summed over processes)

    def add(self, target: str, outcome: str, detail: str, files: Files) -> None:
        self.counts.setdefault(target, Counter())[outcome] += 1
        if outcome in DEFECTS and sum(1 for f in self.findings if f.outcome == outcome) < self.keep:
            self.findings.append(Finding(target, outcome, detail, dict(files)))

    def merge(self, other: Report) -> None:
        """Add ``other``'s counts, times and findings (in its order, up to ``keep`` of each defect kind)."""
        for target, counts in other.counts.items():
            self.counts.setdefault(target, Counter()).update(counts)
        for target, seconds in other.seconds.items():
            self.seconds[target] = self.seconds.get(target, 0.0) + seconds
        for f in other.findings:
            if sum(1 for g in self.findings if g.outcome == f.outcome) < self.keep:
                self.findings.append(f)

    def total(self, outcome: str) -> int:
        return sum(c[outcome] for c in self.counts.values())

    @property
    def n_inputs(self) -> int:
        return sum(sum(c.values()) for c in self.counts.values())

    def table(self) -> str:
        """One row per target: inputs, each outcome and, when timed, the seconds it took on one core."""
        width = max([len("target")] + [len(t) for t in self.counts])
        timed = bool(self.seconds)
        head = f"{'target':<{width}}  " + "  ".join(f"{o:>8}" for o in ("inputs", *OUTCOMES))
        head += f"  {'seconds':>9}" if timed else ""
        rows = [head, "-" * len(head)]
        for t, c in self.counts.items():
            rows.append(f"{t:<{width}}  {sum(c.values()):>8}  " + "  ".join(f"{c[o]:>8}" for o in OUTCOMES)
                        + (f"  {self.seconds.get(t, 0.0):>9.1f}" if timed else ""))
        rows.append(
            f"{'all':<{width}}  {self.n_inputs:>8}  " + "  ".join(f"{self.total(o):>8}" for o in OUTCOMES)
            + (f"  {sum(self.seconds.values()):>9.1f}" if timed else "")
        )
        return "\n".join(rows)


# --------------------------------------------------------------------------- mutations

# Values that broke (or could break) a reader: numbers Python reads but C does not,
# numbers past int64 / uint64 / double, ids with NUL, spaces or comment marks.
DICTIONARY: tuple[str, ...] = (
    "9223372036854775807", "9223372036854775808", "18446744073709551615", "18446744073709551616",
    "99999999999999999999", "-9223372036854775809", "1e20", "1e400", "-1e400", "4.9e-324",
    "٣", "２", "1_0", "2_129133", "0x10", "0x1p3", "1.5", "-0", "+1", "1e", ".", "",
    "nan", "NaN", "inf", "-inf", "Infinity", "null", "true", "{}", "[]", '"x"', "#", "#301",
    "q1\x00", "a b", "d\tx", "\u00a0", "\u3000", "\ufeff", "é", "文档", "\x1c", "\r",
    "[" * 3000 + "]" * 3000, "9" * 5000, "x" * 50_000,
)


def mutate(files: Files, rng: random.Random, mutable: Iterable[str] | None = None) -> dict[str, bytes]:
    """One mutated copy of ``files``: 1-3 edits to one file (gzip files mostly inside the stream)."""
    out = dict(files)
    names = sorted(mutable if mutable is not None else files)
    name = rng.choice(names)
    data = out[name]
    if name.endswith(".gz"):
        if rng.random() < 0.2:
            out[name] = _edit_bytes(data, rng)  # corrupt the compressed stream itself
            return out
        try:
            plain = gzip.decompress(data)
        except (OSError, EOFError):
            plain = data
        out[name] = gzip.compress(_edits(plain, rng), mtime=0)
        return out
    out[name] = _edits(data, rng)
    return out


def _edits(data: bytes, rng: random.Random) -> bytes:
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        r = rng.random()
        if r < 0.35:
            data = _edit_token(data, rng)
        elif r < 0.6:
            data = _edit_line(data, rng)
        else:
            data = _edit_bytes(data, rng)
    return data


def _edit_bytes(data: bytes, rng: random.Random) -> bytes:
    n = len(data)
    op = rng.randrange(6)
    i = rng.randrange(n + 1)
    if op == 0 and n:
        i = min(i, n - 1)
        return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1 :]
    if op == 1:
        return data[:i] + bytes([rng.choice(b"\x00\n\r\t #\"{}[]:,\\0123456789-.e\xff\xc3")]) + data[i:]
    if op == 2 and n:
        j = min(n, i + rng.randrange(1, 16))
        return data[:i] + data[j:]
    if op == 3 and n:
        j = min(n, i + rng.randrange(1, 64))
        k = rng.randrange(n + 1)
        return data[:k] + data[i:j] + data[k:]
    if op == 4:
        return data[: rng.randrange(n + 1)]
    return data[:i] + rng.choice((b"\xef\xbb\xbf", b"\x00", b"\r\n", b"\xff\xfe", b"\x1f\x8b")) + data[i:]


def _edit_token(data: bytes, rng: random.Random) -> bytes:
    """Replace one token (a run of non-space, non-punctuation bytes) with a dictionary value."""
    spans = _token_spans(data)
    value = rng.choice(DICTIONARY).encode("utf-8")
    if not spans:
        return data + value
    a, b = rng.choice(spans)
    return data[:a] + value + data[b:]


def _token_spans(data: bytes) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = None
    for i, c in enumerate(data[:20_000]):
        inside = c not in b' \t\n\r"{}[]:,'
        if inside and start is None:
            start = i
        elif not inside and start is not None:
            spans.append((start, i))
            start = None
    if start is not None:
        spans.append((start, min(len(data), 20_000)))
    return spans


def _edit_line(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    i = rng.randrange(len(lines))
    op = rng.randrange(7)
    if op == 0:
        lines.insert(i, lines[i])  # duplicate
    elif op == 1 and len(lines) > 1:
        del lines[i]
    elif op == 2:
        lines[i] = b"#" + lines[i]  # commented out
    elif op == 3:
        lines[i] = lines[i] + rng.choice((b" extra fields", b"\textra", b" x", b" 1 2 3"))
    elif op == 4:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif op == 5:
        lines[i] = b""
    else:
        return b""  # an empty file
    return b"\n".join(lines)


# --------------------------------------------------------------------------- running


#: Seconds one input may take before it counts as a hang (a crash: a reader that never answers is a defect).
HANG_SECONDS = 60.0


class _Hang(BaseException):
    """Raised by the alarm inside a target that ran past its time (a BaseException: ``except Exception`` in the
    code under test must not swallow it)."""


@contextmanager
def _deadline(seconds: float | None) -> Iterator[None]:
    """Raise :class:`_Hang` in this thread after ``seconds`` (POSIX main thread only; elsewhere no limit)."""
    if not seconds or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(signum: int, frame: Any) -> None:
        raise _Hang

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def classify(target: Target, files: Files, workdir: Path, hang_seconds: float | None = HANG_SECONDS) -> tuple[str, str]:
    """``(outcome, detail)`` of one input; one that runs past ``hang_seconds`` is a crash (a hang)."""
    try:
        with _deadline(hang_seconds):
            return _classify(target, files, workdir)
    except _Hang:
        return "crash", f"hang: no answer in {hang_seconds:g} s"


def _classify(target: Target, files: Files, workdir: Path) -> tuple[str, str]:
    for p in workdir.iterdir():
        p.unlink()
    for name, content in files.items():
        (workdir / name).write_bytes(content)
    try:
        got = target.load(workdir)
    except FinegrainError as e:
        if target.oracle is None:
            return "error", str(e)
        try:
            target.oracle(files)
        except Invalid:
            return "error", str(e)
        except Exception as oe:  # pragma: no cover - an oracle bug is reported, not hidden
            return "crash", f"oracle failed: {oe!r}"
        return "refused", str(e)
    except RecursionError as e:
        return "crash", f"RecursionError: {e}"
    except Exception as e:
        return "crash", "".join(traceback.format_exception_only(e)).strip() + "\n" + _where(e)
    if target.oracle is None:
        return "ok", ""
    try:
        want = target.oracle(files)
    except Invalid as e:
        return "misparse", f"accepted input the reference refuses: {e}"
    if want != got:
        return "misparse", f"read {_short(got)}; the reference reads {_short(want)}"
    return "ok", ""


def run(targets: Iterable[Target], n: int, seed: int = 0, report: Report | None = None,
        progress: Callable[[int], None] | None = None) -> Report:
    """Fuzz each target with ``n`` inputs (the seeds themselves first), deterministically for ``seed``."""
    report = report or Report()
    for target in targets:
        rng = random.Random(f"{seed}:{target.name}")
        with tempfile.TemporaryDirectory(prefix=f"fuzz-{target.name}-") as tmp:
            work = Path(tmp)
            for i in range(n):
                if i < len(target.seeds):
                    files: Files = target.seeds[i]
                else:
                    files = mutate(rng.choice(target.seeds), rng, target.mutable)
                outcome, detail = classify(target, files, work)
                report.add(target.name, outcome, detail, files)
                if progress is not None:
                    progress(1)
    return report


#: Inputs per chunk of :func:`run_chunks`: fixed, so the inputs do not depend on the number of processes.
CHUNK = 1000

# The targets of a worker process of run_chunks, handed over at fork (targets hold closures, which do not
# pickle; a forked child inherits its initializer's arguments unpickled). Set only in worker processes.
_WORKER_TARGETS: list[Target] = []


def chunks(n: int, size: int = CHUNK) -> list[tuple[int, int, int]]:
    """``(chunk, start, count)`` covering ``range(n)`` in pieces of ``size`` (the last may be shorter)."""
    return [(c, start, min(size, n - start)) for c, start in enumerate(range(0, n, size))]


def run_chunk(target: Target, seed: int, chunk: int, start: int, count: int) -> Report:
    """Inputs ``start .. start+count-1`` of ``target``: the seeds themselves at their own positions, then
    mutations drawn from a generator seeded by ``(seed, target, chunk)``; timed."""
    report = Report()
    rng = random.Random(f"{seed}:{target.name}:{chunk}")
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"fuzz-{target.name}-") as tmp:
        work = Path(tmp)
        for i in range(start, start + count):
            if i < len(target.seeds):
                files: Files = target.seeds[i]
            else:
                files = mutate(rng.choice(target.seeds), rng, target.mutable)
            outcome, detail = classify(target, files, work)
            report.add(target.name, outcome, detail, files)
    report.seconds[target.name] = time.perf_counter() - began
    return report


def _adopt(targets: list[Target]) -> None:
    _WORKER_TARGETS[:] = targets


def _run_task(task: tuple[int, int, int, int, int]) -> Report:
    index, seed, chunk, start, count = task
    return run_chunk(_WORKER_TARGETS[index], seed, chunk, start, count)


def run_chunks(targets: Iterable[Target], n: int, seed: int = 0, jobs: int = 1,
               progress: Callable[[int], None] | None = None) -> Report:
    """Fuzz each target with ``n`` inputs in chunks of :data:`CHUNK`, over ``jobs`` processes.

    The chunks are the same for any ``jobs`` and their reports are merged in
    chunk order, so counts and findings do not depend on ``jobs`` (only the
    seconds do, a little). ``jobs > 1`` forks worker processes.
    """
    targets = list(targets)
    tasks = [(i, seed, c, start, count) for i in range(len(targets)) for c, start, count in chunks(n)]
    report = Report()

    def take(part: Report) -> None:
        report.merge(part)
        if progress is not None:
            progress(part.n_inputs)

    if jobs <= 1:
        for i, seed_, c, start, count in tasks:
            take(run_chunk(targets[i], seed_, c, start, count))
        return report
    with multiprocessing.get_context("fork").Pool(jobs, initializer=_adopt, initargs=(targets,)) as pool:
        for part in pool.imap(_run_task, tasks):
            take(part)
    return report


def _where(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    return " <- ".join(f"{Path(f.filename).name}:{f.lineno}" for f in reversed(tb[-3:]))


def _short(value: Any, width: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."
