"""The timeline's tool parts, by call id: their states, results, waiting widgets and subagents.

Pure bookkeeping over :class:`~crewagent.ui.timeline.nodes.Node` values: each method returns
the node it changed (None when nothing changed), and the model says so to the view.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from crewagent.ui.timeline.nodes import INTERRUPTED, OK, FAILED, PENDING, RUNNING, Node, merged_subagent, tool_state
from crewagent.worker.turn_values import SubagentInfo, TimelineMessage, ToolCallRef, ToolFinish, ToolOutputChunk

#: Characters of a running command's output a tool part keeps (the result has the rest).
LIVE_OUTPUT_CHARS = 16_000


class ToolParts:
    """The tool parts of one timeline, by call id."""

    def __init__(self) -> None:
        self._calls: dict[str, Node] = {}

    def clear(self) -> None:
        self._calls = {}

    def get(self, call_id: str) -> Node | None:
        return self._calls.get(call_id)

    @staticmethod
    def new_node(call: ToolCallRef | None, result: TimelineMessage | None, *, row: int, parent: Node | None = None) -> Node:
        """A part for a call (pending), or for a result whose call is unknown (an orphan)."""
        key = f"tool:{call.id}" if call is not None else f"tool:{result.id if result else row}"
        node = Node(key=key, kind="tool", row=row, parent=parent, call=call, result=result, state=PENDING)
        if result is not None:
            node.state = tool_state(result)
            node.duration_ms = result.duration_ms
            node.subagent = result.subagent
        return node

    def add(self, node: Node) -> None:
        assert node.call is not None
        self._calls[node.call.id] = node

    def attach_result(self, message: TimelineMessage) -> Node | None:
        """A ``role=tool`` message: its call's part takes it as its result (None: no such call)."""
        node = self._calls.get(message.tool_call_id or "")
        if node is None:
            return None
        node.result = message
        node.state = tool_state(message)
        node.duration_ms = message.duration_ms if message.duration_ms is not None else node.duration_ms
        if message.subagent is not None:
            node.subagent = merged_subagent(node.subagent, message.subagent)
        return node

    def started(self, call: ToolCallRef) -> Node | None:
        node = self._calls.get(call.id)
        if node is None or node.state not in (PENDING, ""):
            return None
        node.state = RUNNING
        return node

    def finished(self, finish: ToolFinish) -> Node | None:
        node = self._calls.get(finish.call_id)
        if node is None or node.result is not None:
            return None
        node.state = OK if finish.ok else FAILED
        node.duration_ms = finish.duration_ms
        return node

    def output(self, chunk: ToolOutputChunk) -> Node | None:
        """More live output of a running call; only the newest LIVE_OUTPUT_CHARS are kept."""
        node = self._calls.get(chunk.call_id)
        if node is None or node.result is not None:
            return None
        node.live_output = (node.live_output + chunk.text)[-LIVE_OUTPUT_CHARS:]
        return node

    def interrupt_open(self) -> Iterator[Node]:
        """The turn is over: every part still pending or running without a result is interrupted."""
        for node in self._calls.values():
            if node.state in (PENDING, RUNNING) and node.result is None:
                node.state = INTERRUPTED
                yield node

    def apply_subagent(self, info: SubagentInfo, session_id: str) -> Node | None:
        """A subagent's news, for the Task part that made it in session ``session_id``."""
        if info.parent_session_id != session_id:
            return None
        node = self._calls.get(info.parent_call_id)
        if node is not None:
            node.subagent = merged_subagent(node.subagent, info)
        return node

    def set_widget_request(self, call_id: str, request_id: str, widget: Mapping[str, Any] | None) -> tuple[bool, Node | None]:
        """(whether the call is known, the node when it changed)."""
        node = self._calls.get(call_id)
        if node is None or node.widget_request == request_id:
            return node is not None, None
        node.widget_request = request_id
        if widget is not None:
            node.widget = widget
        return True, node

    def withdraw_widget_request(self, request_id: str) -> Node | None:
        for node in self._calls.values():
            if node.widget_request == request_id:
                node.widget_request = ""
                return node
        return None
