"""A benchmark script's ``main()`` run inside the test process, for the second smoke run of a script.

Each benchmark's first smoke test starts the script as a program (a fresh interpreter: proof that
it runs on its own); a second run of the same script (``--json``) needs no second interpreter,
which would import the app again (~1.5 CPU-s).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest


def run_main(script: Path, argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    """``script``'s ``main(argv)`` in this process (its folder on sys.path, as when it runs); its stdout."""
    monkeypatch.syspath_prepend(str(script.parent))  # the benchmarks import their helpers (_timing)
    spec = importlib.util.spec_from_file_location(f"_smoke_{script.stem}", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    capsys.readouterr()
    assert module.main(argv) == 0
    return capsys.readouterr().out
