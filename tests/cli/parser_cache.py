"""One argparse tree for a test module's in-process ``crewagent`` calls.

``crewagent.cli.main`` builds its parser on every call (~5 ms, most of it argparse's gettext
look-ups): a process runs it once, but a module that calls ``main`` hundreds of times pays it each
time. The tree holds no state between parses (each parse makes a new Namespace), so one serves all.
Only for modules that do not monkeypatch the ``cmd_*`` handlers the tree binds when it is built.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from crewagent import cli


@contextmanager
def one_parser() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cli, "build_parser", functools.cache(cli.build_parser))
        yield
