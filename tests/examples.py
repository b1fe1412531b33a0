"""How many examples a hypothesis property runs: ``examples(n)`` in CI, ten times that when deep.

``make test`` runs the ``ci`` profile (registered in tests/conftest.py). Run a property deep
locally, after changing what it covers, with ``HYPOTHESIS_PROFILE=thorough``::

    HYPOTHESIS_PROFILE=thorough .venv/bin/python -m pytest -n 2 tests/core/test_store_property.py

A test's own ``@settings(max_examples=...)`` wins over the profile, so every property that sets
a count sets it through ``examples()``; a comment beside a count says why it is enough.
"""

from __future__ import annotations

import os

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
THOROUGH_FACTOR = 10


def examples(ci: int) -> int:
    """``ci`` examples under the ``ci`` profile, ``THOROUGH_FACTOR`` times as many under ``thorough``."""
    return ci * THOROUGH_FACTOR if PROFILE == "thorough" else ci
