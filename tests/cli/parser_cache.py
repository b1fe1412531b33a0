"""One argparse tree for the in-process ``crewagent`` calls of a test session (tests/conftest.py).

``crewagent.cli.main`` builds its parser on every call (~5 ms, most of it argparse's gettext
look-ups): a process runs it once, but the suite calls ``main`` hundreds of times in-process. The
tree holds no state between parses (each parse makes a new Namespace) and its defaults read no
environment, so one serves all. It binds the ``cmd_*`` handlers of cli.py when it is built: a
test that monkeypatches one of them must also patch ``cli.build_parser`` back to a fresh build.
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
