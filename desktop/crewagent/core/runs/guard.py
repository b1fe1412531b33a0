"""The frontmatter guard of a run: every write to its workflow.md passes core.runs.state.check_write.

``fs.apply_patch`` (``updateFrontmatter``) and ``fs.write`` call the tool context's
``frontmatter_guard`` with the alias path, the old and the new frontmatter, under the file's lock
and before writing; a refusal is returned to the model as the tool's error and nothing is
written. After the run is complete a state write needs the user's confirmation: the model asks
with ``ui.ask_user`` (a confirmation), the engine sees the confirmed answer and allows one write.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from crewagent.core.runs.state import RunState, SchemaCheck, check_write
from crewagent.core.runs.types import GraphLike
from crewagent.core.tools.results import ErrorCode, error


class StateGuard:
    """Guards the state file of one run (``@state/runs/<runId>/workflow.md``); other paths pass."""

    def __init__(self, run_id: str, graph: GraphLike, *, schema: SchemaCheck | None = None):
        self.run_id = run_id
        self.shown_path = state_alias(run_id)
        self.graph = graph
        self.schema = schema
        self._confirmed = False
        self._lock = threading.Lock()

    def covers(self, shown: str) -> bool:
        return shown == self.shown_path

    def confirm_once(self) -> None:
        """The user confirmed a change to the completed run: allow the next state write."""
        with self._lock:
            self._confirmed = True

    def __call__(self, shown: str, old: dict[str, Any], new: dict[str, Any] | None) -> dict[str, Any] | None:
        if not self.covers(shown):
            return None
        refused = check_write(self.graph, old, new, schema=self.schema)
        if refused is not None:
            return refused
        assert new is not None
        if RunState.of(old).is_complete(self.graph) and not _same(old, new):
            with self._lock:
                if not self._confirmed:
                    return error(
                        ErrorCode.STATE_CHANGE_REQUIRES_CONFIRMATION,
                        "This run is complete; its state changes only after the user confirms. Ask with "
                        "ui.ask_user (type confirmation) and write again once they confirm. Nothing was written.",
                    )
                self._confirmed = False
        return None


def state_alias(run_id: str) -> str:
    """How the model names a run's state file."""
    return f"@state/runs/{run_id}/workflow.md"


def _same(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    ignored = {"updatedAt"}
    return {k: v for k, v in old.items() if k not in ignored} == {k: v for k, v in new.items() if k not in ignored}
