"""The suite's xdist groups reach the scheduler: one worker runs the users of the session's zygote."""

from __future__ import annotations

import pytest

from tests.fakes.zygote import ZYGOTE_GROUP


@pytest.mark.xdist_group(ZYGOTE_GROUP)
def test_a_grouped_test_carries_its_group_to_the_scheduler(request: pytest.FixtureRequest) -> None:
    """``--dist loadgroup`` schedules by the ``@group`` suffix xdist gives a grouped test's node id.
    Without it (pytest 9.2 with xdist 3.8) the groups are silently ignored: every worker starts its
    own zygote and the kill loops, meant to run one at a time, run side by side."""
    if not request.config.getoption("loadgroup", default=False):
        pytest.skip("not an xdist worker of a --dist loadgroup run")
    assert request.node.nodeid.endswith(f"@{ZYGOTE_GROUP}"), request.node.nodeid
