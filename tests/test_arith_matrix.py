"""The arithmetic matrix is built from the processor's own features (tools/arith_matrix.py).

Each test hands the pure functions a processor (its /proc/cpuinfo flags and numpy's view of it)
and checks the configurations a maintainer would get on that machine: every disable list names
only targets the processor has, every kernel is named explicitly, and an x86-64 processor with
AVX2 gets at least four configurations that really differ.
"""

from __future__ import annotations

import json

import arith_matrix as am
import pytest

# numpy 2.4's x86 dispatch targets (its baseline is X86_V2).
DISPATCH = ("X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR")
SSE = "fpu sse sse2 pni ssse3 sse4_1 sse4_2 popcnt"
AVX2 = f"{SSE} avx f16c fma avx2 bmi1 bmi2"
AVX512 = f"{AVX2} avx512f avx512cd avx512bw avx512dq avx512vl avx512_vnni"


@pytest.fixture(autouse=True)
def _a_real_processor(monkeypatch):
    """These tests describe processors of their own; a run that simulates a processor without the
    reference arithmetic (NORMCORE_SIMULATE_NO_REFERENCE=1, as make test is tried for an ARM
    laptop) must not reach them."""
    monkeypatch.delenv(am.NO_REFERENCE, raising=False)


def x86(flags: str, present: tuple[str, ...]) -> am.Cpu:
    return am.Cpu("x86_64", frozenset(flags.split()), DISPATCH, frozenset({"X86_V2", *present}))


# an AMD EPYC with AVX-512 but not AVX512_SPR (the machine of issue 33)
EPYC_AVX512 = x86(AVX512, ("X86_V3", "X86_V4", "AVX512_ICL"))
LAPTOP_AVX2 = x86(AVX2, ("X86_V3",))
OLD_SSE = x86(SSE, ())


def names(cpu: am.Cpu) -> list[str]:
    return [c.name for c in am.configurations(cpu)]


def test_avx512_processor_gets_five_configurations_with_its_own_disable_lists():
    matrix = {c.name: c for c in am.configurations(EPYC_AVX512)}
    assert list(matrix) == [
        "skylakex/all",
        "haswell/no-avx512",
        "nehalem/sse",
        "skylakex/sse",
        "nehalem/all",
    ]
    # only targets this processor has: AVX512_SPR is absent, so it is never named
    assert matrix["haswell/no-avx512"].disable == ("X86_V4", "AVX512_ICL")
    assert matrix["nehalem/sse"].disable == ("X86_V3", "X86_V4", "AVX512_ICL")
    assert matrix["skylakex/sse"].disable == matrix["nehalem/sse"].disable
    assert matrix["skylakex/all"].disable == matrix["nehalem/all"].disable == ()
    for config in matrix.values():
        assert set(config.disable) <= EPYC_AVX512.present


def test_avx2_processor_gets_four_and_never_an_avx512_kernel():
    matrix = am.configurations(LAPTOP_AVX2)
    assert [c.name for c in matrix] == ["haswell/all", "nehalem/sse", "haswell/sse", "nehalem/all"]
    assert {c.kernel for c in matrix} == {"Haswell", "Nehalem"}
    assert {c.disable for c in matrix} == {(), ("X86_V3",)}


def test_sse_processor_runs_its_one_level():
    assert names(OLD_SSE) == ["nehalem/all"]
    no_sse42 = x86("fpu sse sse2 pni ssse3", ())
    assert [c.kernel for c in am.configurations(no_sse42)] == ["Prescott"]


def test_avx_without_fma_is_not_sent_to_the_haswell_kernel():
    cpu = x86(f"{SSE} avx avx2", ("X86_V3",))  # no fma: Haswell's kernels would fault
    assert "Haswell" not in {c.kernel for c in am.configurations(cpu)}


def test_every_configuration_overrides_the_inherited_environment():
    inherited = {
        "OPENBLAS_CORETYPE": "Haswell",
        "OPENBLAS_NUM_THREADS": "8",
        "NPY_DISABLE_CPU_FEATURES": "AVX512_SPR",
        "NPY_ENABLE_CPU_FEATURES": "X86_V3",
        "HOME": "/root",
    }
    for config in am.configurations(EPYC_AVX512):
        env = am.environment(config, inherited)
        assert env["OPENBLAS_CORETYPE"] == config.kernel
        assert env["OPENBLAS_NUM_THREADS"] == env["OMP_NUM_THREADS"] == "1"
        assert env["NPY_DISABLE_CPU_FEATURES"] == " ".join(config.disable)
        assert "NPY_ENABLE_CPU_FEATURES" not in env
        assert env["HOME"] == "/root"


def test_arm_runs_what_applies_and_says_so():
    neon = am.Cpu(
        "aarch64",
        frozenset("fp asimd evtstrm aes crc32 asimddp".split()),
        ("ASIMDHP", "ASIMDDP", "ASIMDFHM"),
        frozenset({"NEON", "ASIMD", "ASIMDHP", "ASIMDDP"}),
    )
    assert names(neon) == ["armv8/all"]
    sve = am.Cpu(neon.machine, neon.flags | {"sve"}, neon.dispatch, neon.present)
    matrix = {c.name: c for c in am.configurations(sve)}
    assert list(matrix) == ["neoversev1/all", "armv8/neon", "neoversev1/neon", "armv8/all"]
    assert matrix["armv8/neon"].disable == ("ASIMDHP", "ASIMDDP")
    assert "ARM" in am.platform_note(sve) and "what applies" in am.platform_note(sve)
    assert am.too_few(sve, 1) is None  # the x86 minimum does not apply on ARM


def test_same_arithmetic_counts_once():
    a, b, c = am.configurations(LAPTOP_AVX2)[:3]
    haswell = am.Ran((("openblas", "Haswell", 1),), ("X86_V3",))
    nehalem = am.Ran((("openblas", "Nehalem", 1),), ())
    found = am.distinct([(a, haswell), (b, nehalem), (c, haswell)])
    assert [same.name if same else None for _, _, same in found] == [None, None, a.name]


@pytest.mark.parametrize(("count", "fails"), [(1, True), (3, True), (4, False), (5, False)])
def test_fewer_than_four_distinct_on_avx2_is_a_failure(count, fails):
    assert (am.too_few(LAPTOP_AVX2, count) is not None) is fails
    assert (am.too_few(EPYC_AVX512, count) is not None) is fails
    assert am.too_few(OLD_SSE, count) is None


def test_cpuinfo_flags_are_read_from_the_first_processor():
    text = (
        "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu SSE avx2 fma\n\n"
        "processor\t: 1\nflags\t\t: fpu\n"
    )
    assert am.parse_cpuinfo(text) == frozenset({"fpu", "sse", "avx2", "fma"})
    arm = "processor\t: 0\nFeatures\t: fp asimd sve\nCPU implementer\t: 0x41\n"
    assert am.parse_cpuinfo(arm) == frozenset({"fp", "asimd", "sve"})
    assert am.parse_cpuinfo("") == frozenset()


def test_this_processor_gets_at_least_four_distinct_configurations_when_it_has_avx2():
    """The real machine, as make test-arith sees it (the pure functions on its features)."""
    cpu = am.this_cpu()
    matrix = am.configurations(cpu)
    assert len({(c.kernel, c.disable) for c in matrix}) == len(matrix)
    assert am.too_few(cpu, len(matrix)) is None
    for config in matrix:
        assert set(config.disable) <= cpu.present


def test_the_reference_arithmetic_is_the_avx2_level_on_every_x86_that_has_it():
    """make notebooks stores its runs under it and the figure pack redraws under it: an AVX-512
    processor and an AVX2 laptop must run the same kernel and the same loops."""
    big, laptop = am.reference(EPYC_AVX512), am.reference(LAPTOP_AVX2)
    assert big is not None and laptop is not None
    assert big.kernel == laptop.kernel == "Haswell"
    # what each leaves switched on is the same: numpy's loops up to X86_V3
    assert EPYC_AVX512.present - set(big.disable) == LAPTOP_AVX2.present - set(laptop.disable)
    assert big.env()["OPENBLAS_NUM_THREADS"] == "1"
    # and it is one of the matrix's configurations, so the matrix checks it too
    assert big in am.configurations(EPYC_AVX512) and laptop in am.configurations(LAPTOP_AVX2)
    assert am.reference(OLD_SSE) is None
    assert am.reference(x86(f"{SSE} avx avx2", ("X86_V3",))) is None  # no FMA


def test_using_the_reference_sets_only_the_given_environment():
    environ = {"NPY_ENABLE_CPU_FEATURES": "X86_V4", "OPENBLAS_CORETYPE": "Zen", "HOME": "/x"}
    said = am.use_reference(environ)
    config = am.reference(am.this_cpu())
    if config is None:
        assert "own arithmetic" in said and environ["OPENBLAS_CORETYPE"] == "Zen"
    else:
        assert config.name in said
        assert environ == {"HOME": "/x", **config.env(), "NORMCORE_ARITHMETIC": "reference"}


def test_a_processor_without_the_reference_can_be_simulated(monkeypatch):
    monkeypatch.setenv(am.NO_REFERENCE, "1")
    assert am.reference(EPYC_AVX512) is None
    environ = {"HOME": "/x"}
    assert "own arithmetic" in am.use_reference(environ) and environ == {"HOME": "/x"}
    monkeypatch.delenv(am.NO_REFERENCE)
    assert am.reference(EPYC_AVX512) is not None


def test_the_matrix_never_marks_its_configurations_as_the_reference(monkeypatch):
    monkeypatch.setenv("NORMCORE_ARITHMETIC", "reference")
    env = am.environment(am.furthest(EPYC_AVX512))
    assert "NORMCORE_ARITHMETIC" not in env


def test_the_furthest_configuration_is_the_slowest_level_with_its_own_kernel():
    assert am.furthest(EPYC_AVX512).name == "nehalem/sse"
    assert am.furthest(LAPTOP_AVX2).name == "nehalem/sse"
    assert am.furthest(OLD_SSE).name == "nehalem/all"


def test_the_matrix_leaves_the_reference_to_the_suite_and_runs_slow_tests_twice(
    monkeypatch, tmp_path
):
    """With --suite-ran-reference (.ci/run), the reference is not run again; the slow numeric
    tests run only under the furthest configuration; the summary says which was left."""
    calls: dict[str, str | None] = {}
    claims: list[str] = []

    def probe(config):  # every configuration runs its own arithmetic
        return am.Ran((("openblas", config.kernel, 1),), config.disable)

    def run(config, targets, workers, junit=None, marks=None):
        calls[config.name] = marks
        if "tests/claims" in targets:
            claims.append(config.name)
        return True, 1.0, ["1 passed"]

    monkeypatch.setattr(am, "this_cpu", lambda: EPYC_AVX512)
    monkeypatch.setattr(am, "probe", probe)
    monkeypatch.setattr(am, "run", run)
    monkeypatch.setattr(am, "numeric_tests", lambda: ["tests/test_x.py"])
    monkeypatch.setattr(am, "book_chapters", lambda: ["book/00-x.ipynb"])
    summary = tmp_path / "arith.json"
    assert am.main(["--suite-ran-reference", "--summary", str(summary)]) == 0
    assert calls == {
        "skylakex/all": "not slow",
        "nehalem/sse": None,
        "skylakex/sse": "not slow",
        "nehalem/all": "not slow",
    }
    assert claims == ["nehalem/sse"]  # the claims suite, under the furthest arithmetic
    data = {c["name"]: c for c in json.loads(summary.read_text())["configurations"]}
    assert data["haswell/no-avx512"]["by_suite"] is True
    assert data["haswell/no-avx512"]["passed"] is None
    assert not any(c["by_suite"] for name, c in data.items() if name != "haswell/no-avx512")
    calls.clear()
    assert am.main([]) == 0  # without it, the reference runs with every test
    assert calls["haswell/no-avx512"] is None and len(calls) == 5
