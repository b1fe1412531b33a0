"""pytest's cache of assert-rewritten test modules, filled once by the xdist controller.

pytest rewrites the asserts of every test module (and conftest) it imports and keeps the result in
``__pycache__/<name>.cpython-XY-pytest-<version>.pyc``. A clean clone has none, and every xdist
worker collects every test module: the three workers started together and each rewrote all ~190
of them, ~9 CPU-s each (AST rewriting and compiling; a collection from a warm cache is ~2.8 CPU-s).
The controller, which has nothing to do while the fork server imports the app
(tests/forkserver.py), instead writes those files before any worker starts, in two processes: each
test module is rewritten once per run, not once per worker.

The files are written by pytest's own functions (``_pytest.assertion.rewrite``: the same code, the
same header and the same atomic replace pytest uses), so a worker reads them as if it had written
them itself, and rewrites any file that changed since. Those functions are private: if a pytest
release renames them, nothing is warmed and pytest rewrites as before.
"""

from __future__ import annotations

import fnmatch
import os
import sys
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest


def test_modules(config: pytest.Config) -> list[Path]:
    """The files under the run's arguments that pytest rewrites: test modules and conftests."""
    patterns = [*config.getini("python_files"), "conftest.py"]
    found: dict[Path, None] = {}
    for arg in config.args or [str(config.rootpath)]:
        path = Path(config.invocation_params.dir, arg.split("::", 1)[0]).resolve()
        files: Iterable[Path] = _python_files(path) if path.is_dir() else [path] if path.suffix == ".py" else []
        for file in files:
            if any(fnmatch.fnmatch(file.name, pattern) for pattern in patterns):
                found[file] = None
    return list(found)


def _python_files(folder: Path) -> Iterator[Path]:
    for parent, dirs, names in os.walk(folder):
        dirs[:] = [name for name in dirs if not name.startswith((".", "__"))]
        for name in names:
            if name.endswith(".py"):
                yield Path(parent, name)


#: What is used of ``_pytest.assertion.rewrite``.
_PRIVATE = ("PYC_TAIL", "_read_pyc", "_rewrite_test", "_write_pyc", "get_cache_dir")


def warm(config: pytest.Config, files: list[Path]) -> int:
    """Rewrite each of ``files`` whose cached pyc is missing or stale, in this process and one
    forked child (half of the bytes each); returns how many were."""
    if sys.dont_write_bytecode or config.getoption("assertmode") != "rewrite":
        return 0  # pytest would neither write nor read the cache
    from _pytest.assertion import rewrite

    if not all(hasattr(rewrite, name) for name in _PRIVATE):
        return 0
    stale = [file for file in files if rewrite._read_pyc(file, rewrite.get_cache_dir(file) / (file.name[:-3] + rewrite.PYC_TAIL)) is None]
    if not stale:
        return 0
    mine, theirs = _halves(stale)
    child = _fork_if_alone()
    if child == 0:
        code = 0
        try:
            _rewrite(config, theirs)
        except BaseException:
            code = 1
        os._exit(code)  # nothing of pytest's may run in the child
    _rewrite(config, mine if child else stale)
    if child:
        os.waitpid(child, 0)
    return len(stale)


def _halves(files: list[Path]) -> tuple[list[Path], list[Path]]:
    """Two lists of about equal bytes, the largest files placed first."""
    halves: tuple[list[Path], list[Path]] = ([], [])
    sizes = [0, 0]
    for file in sorted(files, key=lambda f: f.stat().st_size, reverse=True):
        side = 0 if sizes[0] <= sizes[1] else 1
        halves[side].append(file)
        sizes[side] += file.stat().st_size
    return halves


def _fork_if_alone() -> int | None:
    """A forked child's pid (0 in the child), or None when a thread other than this one runs:
    its locks would stay taken in the child."""
    tasks = "/proc/self/task"
    alone = len(os.listdir(tasks)) == 1 if os.path.isdir(tasks) else threading.active_count() == 1
    return os.fork() if alone and hasattr(os, "fork") else None


class _Quiet:
    """What ``_write_pyc`` takes as its state: only ``trace`` is used."""

    @staticmethod
    def trace(message: str) -> None:
        pass


def _rewrite(config: pytest.Config, files: list[Path]) -> None:
    from _pytest.assertion import rewrite

    for file in files:
        folder = rewrite.get_cache_dir(file)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            source_stat, code = rewrite._rewrite_test(file, config)
        except (OSError, SyntaxError, ValueError):
            continue  # pytest reports it when it imports the module
        rewrite._write_pyc(_Quiet(), code, source_stat, folder / (file.name[:-3] + rewrite.PYC_TAIL))  # type: ignore[arg-type]
