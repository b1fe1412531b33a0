"""The controller's warm-up of pytest's rewritten-module cache (tests/rewrite_cache.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from _pytest.assertion import rewrite

from tests import rewrite_cache

FAILING = "def test_it():\n    x = [1, 2]\n    assert len(x) == 3\n"


def _cached(file: Path) -> Path:
    return rewrite.get_cache_dir(file) / (file.name[:-3] + rewrite.PYC_TAIL)


def test_the_files_are_the_test_modules_and_conftests_under_the_arguments(tmp_path: Path, pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("a/test_one.py", "a/conftest.py", "a/helpers.py", "a/deep/test_two.py", "b/test_three.py", "a/.hidden/test_no.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    monkeypatch.setattr(pytestconfig, "args", [str(tmp_path / "a"), f"{tmp_path / 'b' / 'test_three.py'}::test_x"])

    found = {path.relative_to(tmp_path).as_posix() for path in rewrite_cache.test_modules(pytestconfig)}

    assert found == {"a/test_one.py", "a/conftest.py", "a/deep/test_two.py", "b/test_three.py"}


def test_a_warmed_module_is_read_back_by_pytest_with_its_asserts_rewritten(tmp_path: Path, pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    files = [tmp_path / "test_a.py", tmp_path / "test_b.py"]
    for file in files:
        file.write_text(FAILING)

    assert rewrite_cache.warm(pytestconfig, files) == 2  # here, or half of them in a forked child
    assert rewrite_cache.warm(pytestconfig, files) == 0  # fresh: nothing to write again

    for file in files:
        code = rewrite._read_pyc(file, _cached(file))
        assert code is not None, f"no valid cached pyc for {file.name}"
        namespace: dict[str, object] = {}
        exec(code, namespace)
        with pytest.raises(AssertionError) as failure:
            namespace["test_it"]()  # type: ignore[operator]
        assert "where 2 = len([1, 2])" in str(failure.value)  # pytest's explanation: rewritten


def test_a_changed_module_is_warmed_again(tmp_path: Path, pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    file = tmp_path / "test_c.py"
    file.write_text(FAILING)
    rewrite_cache.warm(pytestconfig, [file])

    file.write_text(FAILING + "\n\ndef test_more():\n    pass\n")

    assert rewrite._read_pyc(file, _cached(file)) is None  # stale by size
    assert rewrite_cache.warm(pytestconfig, [file]) == 1
    assert rewrite._read_pyc(file, _cached(file)) is not None


def test_nothing_is_written_when_python_writes_no_bytecode(tmp_path: Path, pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    file = tmp_path / "test_d.py"
    file.write_text(FAILING)

    assert rewrite_cache.warm(pytestconfig, [file]) == 0
    assert not _cached(file).exists()


def test_the_halves_hold_about_the_same_bytes(tmp_path: Path) -> None:
    sizes = [9000, 7000, 5000, 4000, 3000, 1000, 500]
    files = []
    for number, size in enumerate(sizes):
        files.append(tmp_path / f"test_{number}.py")
        files[-1].write_text("#" * size)

    one, two = rewrite_cache._halves(files)

    assert sorted(one + two) == sorted(files)
    totals = [sum(file.stat().st_size for file in half) for half in (one, two)]
    assert abs(totals[0] - totals[1]) <= max(sizes[-1], 1000)
