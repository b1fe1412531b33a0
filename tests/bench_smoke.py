"""A benchmark script's ``main()`` run inside the test process.

A smoke test proves that a script runs end to end and prints its tables; a fresh interpreter per
script proves nothing more, and imports the app again (~1.5 CPU-s, ~2.5 with Qt). One script,
bench_ui.py, is still started as a program, for its section 3 (a cold start is a fresh process;
tests/ui/test_bench_ui_smoke.py): proof that a benchmark runs on its own with one command. Two tests of the same script (its tables, its JSON)
share one run through a module fixture (``run_once``); such a module is one xdist group, so
that the run is made once, on one worker.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def load_script(script: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """``script`` imported as a module (its folder on sys.path, as when it runs), for the test's duration."""
    monkeypatch.syspath_prepend(str(script.parent))  # the benchmarks import their helpers (_timing)
    spec = importlib.util.spec_from_file_location(f"_smoke_{script.stem}", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def run_main(script: Path, argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    """``script``'s ``main(argv)`` in this process (its folder on sys.path, as when it runs); its stdout."""
    module = load_script(script, monkeypatch)
    capsys.readouterr()
    assert module.main(argv) == 0
    return capsys.readouterr().out


def run_once(script: Path, argv: list[str]) -> str:
    """``run_main`` for a module-scoped fixture (no test's monkeypatch or capsys): its stdout."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        module = load_script(script, monkeypatch)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert module.main(argv) == 0
    return out.getvalue()


def run_once_with_json(script: Path, argv: list[str], folder: Path) -> tuple[str, dict[str, Any]]:
    """``run_once`` with ``--json-file`` in ``folder``: the script's stdout and its JSON results."""
    results = folder / "results.json"
    out = run_once(script, [*argv, "--json-file", str(results)])
    return out, json.loads(results.read_text(encoding="utf-8"))
