"""The claims suite's timing table: one row a module, a failing module shown as failing."""

from __future__ import annotations

import bench_claims
import pytest

pytestmark = pytest.mark.slow  # starts two pytest processes: make test runs it, make check does not

MODULE = """\
import pytest

pytestmark = pytest.mark.claims


def test_claim():
    assert {verdict}
"""


def test_each_module_is_timed_on_its_own_and_failures_show(tmp_path, capsys):
    good, bad = tmp_path / "test_good.py", tmp_path / "test_bad.py"
    good.write_text(MODULE.format(verdict="True"))
    bad.write_text(MODULE.format(verdict="False"))
    rows = bench_claims.claims_rows([good, bad])
    assert [(name, status) for name, _, status in rows] == [("test_good.py", 0), ("test_bad.py", 1)]
    assert all(seconds > 0 for _, seconds, _ in rows)
    bench_claims.print_claims_table(rows)
    out = capsys.readouterr().out
    assert "test_good.py" in out and "passed" in out
    assert "FAILED (pytest exit 1)" in out and "in all" in out
