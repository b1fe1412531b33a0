"""Python's own ``__import__`` for the tests of code that imports no Qt (the core and the command line).

Importing PySide6 (pytest-qt does, before any test) replaces ``builtins.__import__`` with
shiboken's ``__feature_import__``: every ``import`` statement that runs, even of a module loaded
long ago, then goes through two Python functions of PySide's ``__feature__`` support (snake_case
and true_property selection, star imports of lazily loaded Qt classes) before Python's import.
Hypothesis runs three function-level imports per value it draws (``ConjectureData.draw``), so a
property test pays this on every draw: about 10 % of the CPU of the core's property tests
(tests/core/test_frontmatter_dump.py, test_run_state.py, test_store_property.py ...: 12.8 → 11.6
CPU-s, three alternated pairs). The core and the command line import no Qt (import-linter), and
the ``crewagent`` command runs without PySide6 loaded: their tests run with the import it runs with.
"""

from __future__ import annotations

import _imp
import builtins
import importlib.machinery
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


def _startup_import() -> Callable[..., Any]:
    """``builtins.__import__`` as it was when Python started, whatever has replaced it since.

    CPython keeps a copy of the builtins module's namespace from its start; creating the builtin
    module again writes that copy back into it. Everything else in the namespace is then put back
    as it was, so this reads the original function and changes nothing. Where the copy is not
    written back (another Python), this returns the current function: the tests run as before.
    """
    now = dict(builtins.__dict__)
    try:
        _imp.create_builtin(importlib.machinery.ModuleSpec("builtins", None))
        return builtins.__import__
    finally:
        builtins.__dict__.update(now)


#: Read when tests/conftest.py imports this module, before any test (or thread of one) runs.
_STARTUP_IMPORT = _startup_import()


@contextmanager
def python_import() -> Iterator[None]:
    """Run the block with Python's ``__import__``; put back the one in place (Qt's) afterwards."""
    current = builtins.__import__
    builtins.__import__ = _STARTUP_IMPORT
    try:
        yield
    finally:
        builtins.__import__ = current
