"""finegrain.machine: the machine a result was measured on (CPU, architecture, SIMD flags), kept in results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finegrain.experiment.run import Experiment, run_experiment
from finegrain.machine import SIMD_FLAGS, Machine, describe_machine, has_native_bf16, parse_cpuinfo
from finegrain.settings import Settings

# a reported machine (AVX2, no AVX-512), two cores, shortened
EPYC_AVX2 = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 23
model\t\t: 49
model name\t: AMD EPYC 7B12
stepping\t: 0
flags\t\t: fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 sha_ni

processor\t: 1
vendor_id\t: AuthenticAMD
cpu family\t: 23
model\t\t: 49
model name\t: AMD EPYC 7B12
stepping\t: 0
flags\t\t: fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 sha_ni
"""

XEON_AVX512 = """processor\t: 0
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 106
model name\t: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz
stepping\t: 6
flags\t\t: fpu sse4_2 avx avx2 fma f16c avx512f avx512dq avx512bw avx512vl avx512_vnni
"""

# Arm: per-core blocks name no model; the board comes in a block of its own after them
RASPBERRY_PI = """processor\t: 0
BogoMIPS\t: 108.00
Features\t: fp asimd evtstrm crc32 cpuid
CPU implementer\t: 0x41
CPU part\t: 0xd08

Hardware\t: BCM2835
Model\t\t: Raspberry Pi 4 Model B Rev 1.4
"""


def test_x86_model_id_and_flags() -> None:
    model, cpu_id, flags = parse_cpuinfo(EPYC_AVX2)
    assert model == "AMD EPYC 7B12"
    assert cpu_id == "AuthenticAMD family 23 model 49 stepping 0"
    assert flags is not None and {"avx2", "fma"} <= flags and "avx512f" not in flags


def test_simd_lists_the_relevant_flags_in_a_fixed_order(tmp_path: Path) -> None:
    (tmp_path / "a").write_text(EPYC_AVX2)
    (tmp_path / "b").write_text(XEON_AVX512)
    a, b = describe_machine(tmp_path / "a"), describe_machine(tmp_path / "b")
    assert a.simd == ("sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c")  # sha_ni, sse2 ... are not kept
    assert b.simd == ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512dq", "avx512bw", "avx512vl",
                      "avx512_vnni")
    assert b.cpu_model == "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz"
    assert all(f in SIMD_FLAGS for f in a.simd + b.simd)


def test_arm_features_and_the_board_block() -> None:
    model, cpu_id, flags = parse_cpuinfo(RASPBERRY_PI)
    assert model == "Raspberry Pi 4 Model B Rev 1.4"
    assert cpu_id == "implementer 0x41 part 0xd08"
    assert flags == frozenset({"fp", "asimd", "evtstrm", "crc32", "cpuid"})


def test_nothing_known_is_none_not_empty(tmp_path: Path) -> None:
    assert parse_cpuinfo("") == (None, None, None)
    for m in (describe_machine(None), describe_machine(tmp_path / "missing")):
        assert m.simd is None and m.cpu_id is None  # "unknown", which is not "no SIMD"
        assert m.architecture and m.system


def test_to_dict_is_json_and_round_trips(tmp_path: Path) -> None:
    (tmp_path / "c").write_text(XEON_AVX512)
    m = describe_machine(tmp_path / "c")
    d = json.loads(json.dumps(m.to_dict()))
    assert set(d) == {"cpu_model", "cpu_id", "architecture", "system", "libc", "logical_cpus", "simd"}
    assert Machine(**{**d, "simd": tuple(d["simd"])}) == m


def test_this_machine() -> None:
    if not Path("/proc/cpuinfo").is_file():
        pytest.skip("no /proc/cpuinfo here")
    m = describe_machine()
    assert m.cpu_model and m.simd is not None
    if m.architecture in ("x86_64", "AMD64"):
        assert "sse4_2" in m.simd or "avx" not in m.simd  # sane: no AVX without SSE4.2 on a real x86-64


def test_eval_results_record_the_machine(tmp_path: Path) -> None:
    exp = Experiment(dataset="embedded/captions-en", retriever="bm25-okapi", metrics=("ndcg@10",))
    prov = run_experiment(exp, Settings(data_root=None), show_progress=False).results["provenance"]
    assert prov["machine"] == describe_machine().to_dict()


def test_native_bf16_is_read_from_the_flags(tmp_path: Path) -> None:
    """bfloat16 in hardware: AMX or AVX512-BF16 (x86), BF16 (Arm); AVX-512 alone is not it; no list is unknown."""
    sapphire = XEON_AVX512.replace("avx512_vnni", "avx512_vnni avx512_bf16 amx_tile amx_bf16")
    zen4 = EPYC_AVX2.replace("sha_ni", "avx512f avx512_bf16")
    graviton = RASPBERRY_PI.replace("cpuid", "cpuid bf16 i8mm")
    for name, text, want in (("spr", sapphire, True), ("zen4", zen4, True), ("arm", graviton, True),
                             ("icx", XEON_AVX512, False), ("zen2", EPYC_AVX2, False), ("pi", RASPBERRY_PI, False)):
        (tmp_path / name).write_text(text)
        assert has_native_bf16(describe_machine(tmp_path / name)) is want, name
    assert has_native_bf16(describe_machine(None)) is None
