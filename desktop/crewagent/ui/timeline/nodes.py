"""The timeline's rows as plain values: a node per row, its data roles, and how a row reads them.

No Qt model plumbing here (see ``model.py``): a :class:`Node` is what one row knows, and
:func:`node_data` is what it answers for each :class:`TimelineRole`.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from PySide6.QtCore import Qt

from crewagent.worker.turn_values import SubagentInfo, TimelineMessage, ToolCallRef

USER_ROLE = Qt.ItemDataRole.UserRole.value

#: Tool part states, in the order a call goes through them.
PENDING, RUNNING, OK, FAILED, INTERRUPTED = "pending", "running", "ok", "failed", "interrupted"
STREAM_KEY_PREFIX = "stream:"
ASK_USER_TOOL = "ui.ask_user"
TASK_TOOL = "task"
#: The row kind of a finished background subagent's notice (a synthetic user message).
SUBAGENT_NOTICE = "subagent_notice"


class TimelineRole(IntEnum):
    """Custom data roles of :class:`~crewagent.ui.timeline.model.TimelineModel`."""

    KIND = USER_ROLE  #: "user", "assistant", "tool", "notice" or "subagent_notice"
    KEY = USER_ROLE + 1  #: stable identity: a message id, "tool:<call id>" or "stream:<n>"
    MESSAGE = USER_ROLE + 2  #: the TimelineMessage (None while streaming)
    TEXT = USER_ROLE + 3  #: the Markdown text shown (grows while streaming)
    REASONING = USER_ROLE + 4
    STREAMING = USER_ROLE + 5  #: True while the text is still arriving
    REASONING_SECONDS = USER_ROLE + 6  #: how long the model thought (None when unknown)
    IS_ERROR = USER_ROLE + 7
    ERROR = USER_ROLE + 8  #: the error block mapping of an error part
    INTERRUPTED = USER_ROLE + 9
    SYNTHETIC = USER_ROLE + 10
    TOOL_NAME = USER_ROLE + 11
    TOOL_CALL_ID = USER_ROLE + 12
    TOOL_ARGUMENTS = USER_ROLE + 13  #: the model's raw JSON arguments
    TOOL_STATE = USER_ROLE + 14  #: pending, running, ok, failed or interrupted
    TOOL_DURATION = USER_ROLE + 15  #: milliseconds, None until known
    TOOL_RESULT = USER_ROLE + 16  #: the result text (a preview when offloaded)
    FULL_OUTPUT_BYTES = USER_ROLE + 17  #: size of an offloaded result, None when not offloaded
    RESULT_MESSAGE_ID = USER_ROLE + 18  #: the id of the role=tool message (for "Open full output")
    WIDGET_REQUEST = USER_ROLE + 19  #: the ask-user request id while the widget waits, else ""
    VERSION = USER_ROLE + 20  #: bumped on every change of the row (a cache key for the delegate)
    IS_LAST = USER_ROLE + 21  #: True for the last top-level row
    WIDGET = USER_ROLE + 22  #: an ask-user part's widget (the validated one while it waits, else the arguments)
    #: What the delegate needs to size a row in one call: ``(key, version, kind, rows from the
    #: end, text, has reasoning, needs the full layout)``. Sizing 10,000 rows must stay cheap.
    MEASURE = USER_ROLE + 23
    #: The :class:`SubagentInfo` of a Task part or a subagent notice (None for other rows).
    SUBAGENT = USER_ROLE + 24
    #: The searched text to mark in this row ("" for every row but the search hit shown; issue 18).
    HIGHLIGHT = USER_ROLE + 25
    #: A running command's output so far, stdout and stderr as they came (the newest ~16 KB; "" for other parts).
    TOOL_LIVE_OUTPUT = USER_ROLE + 26
    #: The :class:`TokenUsage` of an assistant message's model call (None: not reported; issue 17).
    USAGE = USER_ROLE + 27
    #: A user message's attached images (references or URLs; issue 17 item 4), () for other rows.
    IMAGES = USER_ROLE + 28


@dataclass(eq=False)
class Node:
    """One row: a message, the answer streaming now, or a tool part (a call and its result)."""

    key: str
    kind: str
    row: int
    parent: Node | None = None
    children: list[Node] = field(default_factory=list)
    message: TimelineMessage | None = None
    text: str = ""
    reasoning: str = ""
    streaming: bool = False
    reasoning_seconds: float | None = None
    # tool parts
    call: ToolCallRef | None = None
    result: TimelineMessage | None = None
    state: str = ""
    duration_ms: float | None = None
    widget_request: str = ""
    widget: Mapping[str, Any] | None = None
    subagent: SubagentInfo | None = None
    #: A running command's live output (tool parts; dropped once the result arrives).
    live_output: str = ""
    #: The searched text marked in this row (see ``TimelineModel.set_highlight``).
    highlight: str = ""
    version: int = 0
    # while streaming: when reasoning started (the text taking over ends the thinking)
    _thinking_since: float | None = None

    def add_text(self, text: str) -> None:
        """Streamed answer text: the first of it ends the thinking."""
        self.stop_thinking()
        self.text += text

    def add_reasoning(self, text: str) -> None:
        if self._thinking_since is None:
            self._thinking_since = time.monotonic()
        self.reasoning += text

    def stop_thinking(self) -> None:
        if self._thinking_since is not None and self.reasoning_seconds is None:
            self.reasoning_seconds = time.monotonic() - self._thinking_since


def merged_subagent(old: SubagentInfo | None, new: SubagentInfo) -> SubagentInfo:
    """``new``, completed by what ``old`` knew; a final status is never taken back by a stale "running"
    (a background child's Task result says running, whatever happened since)."""
    if old is None or old.session_id != new.session_id:
        return new
    status, summary = new.status, new.summary or old.summary
    if new.running and not old.running:
        status, summary = old.status, old.summary
    return dataclasses.replace(
        new,
        status=status,
        summary=summary,
        description=new.description or old.description,
        conversation_id=new.conversation_id or old.conversation_id,
        parent_session_id=new.parent_session_id or old.parent_session_id,
        parent_call_id=new.parent_call_id or old.parent_call_id,
        background=new.background or old.background,
    )


def tool_state(result: TimelineMessage) -> str:
    if result.synthetic or result.interrupted:
        return INTERRUPTED
    return FAILED if result.is_error else OK


def display_text(node: Node) -> str:
    """The DisplayRole of a row."""
    if node.kind == "tool":
        return f"{_tool_name(node)} · {node.state}"
    return node.text


def node_data(node: Node, role: int, rows_after: int) -> Any:
    """A custom role's value for ``node``; ``rows_after`` counts the top-level rows after its own."""
    message = node.message if node.kind != "tool" else node.result
    if role == TimelineRole.MEASURE:
        special = bool(node.streaming or node.widget_request or node.highlight or node.kind in ("notice", SUBAGENT_NOTICE)
                       or node.subagent is not None
                       or (message is not None and (message.is_error or message.interrupted or bool(message.images)))
                       or (node.call is not None and node.call.name in (ASK_USER_TOOL, TASK_TOOL)))
        return (node.key, node.version, node.kind, rows_after, node.text, bool(node.reasoning), special)
    if role == TimelineRole.KIND:
        return node.kind
    if role == TimelineRole.KEY:
        return node.key
    if role == TimelineRole.MESSAGE:
        return message
    if role == TimelineRole.TEXT:
        return node.text if node.kind != "tool" else ""
    if role == TimelineRole.REASONING:
        return node.reasoning
    if role == TimelineRole.STREAMING:
        return node.streaming
    if role == TimelineRole.REASONING_SECONDS:
        return node.reasoning_seconds
    if role == TimelineRole.IS_ERROR:
        return bool(message and message.is_error)
    if role == TimelineRole.ERROR:
        return dict(message.error) if message and message.error else {}
    if role == TimelineRole.INTERRUPTED:
        return bool(message and message.interrupted) or node.state == INTERRUPTED
    if role == TimelineRole.SYNTHETIC:
        return bool(message and message.synthetic)
    if role == TimelineRole.TOOL_NAME:
        return _tool_name(node) if node.kind == "tool" else ""
    if role == TimelineRole.TOOL_CALL_ID:
        if node.call is not None:
            return node.call.id
        return (node.result.tool_call_id if node.result else None) or ""
    if role == TimelineRole.TOOL_ARGUMENTS:
        return node.call.arguments if node.call is not None else ""
    if role == TimelineRole.TOOL_STATE:
        return node.state
    if role == TimelineRole.TOOL_DURATION:
        return node.duration_ms
    if role == TimelineRole.TOOL_RESULT:
        return node.result.text if node.result is not None else ""
    if role == TimelineRole.FULL_OUTPUT_BYTES:
        return node.result.full_output_bytes if node.result is not None else None
    if role == TimelineRole.RESULT_MESSAGE_ID:
        return node.result.id if node.result is not None else ""
    if role == TimelineRole.WIDGET_REQUEST:
        return node.widget_request
    if role == TimelineRole.VERSION:
        return node.version
    if role == TimelineRole.WIDGET:
        return node.widget if node.widget is not None else _json_object(node.call.arguments if node.call else "")
    if role == TimelineRole.SUBAGENT:
        return node.subagent
    if role == TimelineRole.HIGHLIGHT:
        return node.highlight
    if role == TimelineRole.TOOL_LIVE_OUTPUT:
        return node.live_output if node.result is None else ""
    if role == TimelineRole.IS_LAST:
        return rows_after == 0
    if role == TimelineRole.IMAGES:
        return message.images if message is not None and node.kind == "user" else ()
    if role == TimelineRole.USAGE:
        return message.usage if message is not None and node.kind == "assistant" else None
    return None


def _tool_name(node: Node) -> str:
    if node.call is not None:
        return node.call.name
    return (node.result.tool_name if node.result else None) or "tool"


def _json_object(text: str) -> Mapping[str, Any] | None:
    try:
        value = json.loads(text) if text else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
