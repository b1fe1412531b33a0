"""Package exports imported on first use (PEP 562), so importing one light submodule stays light.

``import crewagent.core.context.prompts`` runs ``crewagent/core/context/__init__.py`` first; if
that re-exported the builder eagerly, every light user (the package loader's agents, ``crewagent
packages list``) would import the compaction, the tools and the store too. A package's
``__init__`` instead names its exports by submodule::

    if TYPE_CHECKING:  # what mypy (and PyInstaller's import scan) sees
        from crewagent.core.context.builder import build_llm_messages
    __getattr__, __dir__ = lazy_exports(__name__, {"builder": ("build_llm_messages",)})

tests/cli/test_cli_startup.py checks that each map matches its ``TYPE_CHECKING`` block and
``__all__``, and that every name resolves.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``exports`` maps a submodule's name (relative
    to the package) to the names it exports; the first access of a name imports its submodule."""
    where = {name: f"{package}.{module}" for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # the next access is a plain attribute lookup
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__
