"""Code health limits from issue 10 that a test can hold: no class in ui/ or worker/ over 400 lines."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import crewagent

PACKAGE = Path(crewagent.__file__).parent
MAX_CLASS_LINES = 400


def _classes(node: ast.AST) -> Iterator[ast.ClassDef]:
    """Every class statement below ``node``, nested ones too (in classes, functions, ifs, trys ...).

    A class is a statement: only statement lists are walked, not the expressions that make most of
    a tree (ast.walk over them took three quarters of the test's time after parsing)."""
    for field in ("body", "orelse", "finalbody", "handlers", "cases"):
        for child in getattr(node, field, None) or ():
            if isinstance(child, ast.ClassDef):
                yield child
            yield from _classes(child)


def test_no_class_in_ui_or_worker_is_over_400_lines() -> None:
    too_long = [
        f"{path.relative_to(PACKAGE)}:{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for layer in ("ui", "worker")
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        for node in _classes(ast.parse(path.read_text(encoding="utf-8")))
        if node.end_lineno is not None and node.end_lineno - node.lineno + 1 > MAX_CLASS_LINES
    ]
    assert too_long == [], "split these by responsibility: " + ", ".join(too_long)
