"""Which process of a pytest run this is: an xdist controller runs no test, so it needs no test imports."""

from __future__ import annotations

import pytest


def is_xdist_controller(config: pytest.Config) -> bool:
    """True in the process that only hands tests to xdist workers and prints their reports.

    It is xdist's own test for starting its distributed session (``xdist.plugin._is_distribution_mode``,
    collect-only excepted, where the main process collects the tests itself); an xdist worker has
    ``workerinput``, and ``-n 0`` or no xdist at all leaves ``dist`` at "no".
    """
    return (
        not hasattr(config, "workerinput")
        and not config.getoption("collectonly")
        and config.getoption("dist", "no") != "no"
        and bool(config.getoption("tx", None))
    )
