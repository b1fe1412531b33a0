"""Validate an OpenAI ``messages[]`` the way the provider would, with OpenAI-style error envelopes."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

ErrorCode = Literal[
    "orphan_tool_message",
    "unknown_tool_call_id",
    "duplicate_tool_call_id",
    "missing_tool_result",
    "missing_tool_call_id",
    "invalid_message",
]

#: What OpenAI accepts as a function name; the default for ``crewagent validate``.
OPENAI_FUNCTION_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
#: Our own tools use dotted names (``fs.read``) that the provider adapter encodes; the log-level
#: check and the context builder's output allow the dot.
DOTTED_FUNCTION_NAME = re.compile(r"^[a-zA-Z0-9_.-]{1,64}$")

ROLES: tuple[str, ...] = ("system", "developer", "user", "assistant", "tool")


@dataclass(frozen=True, slots=True)
class ProtocolError:
    """One problem in a messages[] list, located like OpenAI locates it (``param``)."""

    code: ErrorCode
    message: str
    param: str
    index: int

    def envelope(self) -> dict[str, Any]:
        """The OpenAI-compatible error body: ``{"error": {message, type, param, code}}``."""
        return {
            "error": {
                "message": self.message,
                "type": "invalid_request_error",
                "param": self.param,
                "code": self.code,
            }
        }


class _Collector:
    """Gathers errors; stops the walk early when only the first one is wanted."""

    def __init__(self, first_only: bool) -> None:
        self.errors: list[ProtocolError] = []
        self.first_only = first_only

    def add(self, code: ErrorCode, message: str, param: str, index: int) -> None:
        self.errors.append(ProtocolError(code, message, param, index))
        if self.first_only:
            raise _Stop

    def wrong_type(self, param: str, expected: str, value: Any, index: int, *, required: bool = False) -> None:
        """``param`` holds ``value`` instead of ``expected`` (``required``: a missing one is named so)."""
        if required and value is None:
            message = f"Missing required parameter: '{param}'."
        else:
            message = f"Invalid type for '{param}': expected {expected}, but got {_type_name(value)} instead."
        self.add("invalid_message", message, param, index)


class _Stop(Exception):
    """Internal: the first error has been found."""


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def _content_ok(content: Any) -> bool:
    """A string, or an array of content parts (objects)."""
    if isinstance(content, str):
        return True
    return isinstance(content, list) and all(isinstance(part, Mapping) for part in content)


@dataclass(slots=True)
class _Block:
    """The tool block of one assistant message: the ids it issued and those answered so far."""

    index: int
    expected: list[str]
    answered: set[str]

    def missing(self) -> list[str]:
        return [call_id for call_id in self.expected if call_id not in self.answered]


def validate_messages(
    messages: Any,
    *,
    name_pattern: re.Pattern[str] | None = OPENAI_FUNCTION_NAME,
    first_only: bool = False,
) -> list[ProtocolError]:
    """Every protocol error in ``messages`` in list order (only the first with ``first_only``).

    ``name_pattern`` is the function-name rule (``None`` disables it). The walk follows the
    provider's state machine: an assistant with ``tool_calls`` opens a block that only
    ``role=tool`` messages answering its ids may follow, until every id is answered.
    """
    out = _Collector(first_only)
    try:
        _walk(messages, name_pattern, out)
    except _Stop:
        pass
    return out.errors


def first_error(
    messages: Any, *, name_pattern: re.Pattern[str] | None = OPENAI_FUNCTION_NAME
) -> ProtocolError | None:
    """The first protocol error, or ``None`` when the list would be accepted."""
    errors = validate_messages(messages, name_pattern=name_pattern, first_only=True)
    return errors[0] if errors else None


def _close_block(block: _Block | None, out: _Collector) -> None:
    if block is None:
        return
    missing = block.missing()
    if missing:
        out.add(
            "missing_tool_result",
            "An assistant message with 'tool_calls' must be followed by tool messages responding "
            "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
            + ", ".join(missing),
            f"messages.[{block.index}].tool_calls",
            block.index,
        )


def _walk(messages: Any, name_pattern: re.Pattern[str] | None, out: _Collector) -> None:
    if not isinstance(messages, list):
        out.wrong_type("messages", "an array", messages, -1)
        return
    if not messages:
        out.add(
            "invalid_message",
            "Invalid 'messages': empty array. Expected an array with minimum length 1, "
            "but got an empty array instead.",
            "messages",
            -1,
        )
        return
    issued: dict[str, str] = {}  # tool_call id -> param where it was first issued
    answered: dict[str, str] = {}  # tool_call id -> param where it was first answered
    block: _Block | None = None
    for index, message in enumerate(messages):
        at = f"messages.[{index}]"
        if not isinstance(message, Mapping):
            _close_block(block, out)
            block = None
            out.wrong_type(at, "an object", message, index)
            continue
        role = message.get("role")
        if role == "tool":
            # The block stays open after its last answer so that a second answer to the same
            # id is reported as a duplicate, not as an orphan.
            _check_tool(message, index, block, answered, out)
            continue
        _close_block(block, out)
        block = None
        if role not in ROLES:
            supported = ", ".join(f"'{r}'" for r in ROLES[:-1]) + f", and '{ROLES[-1]}'"
            out.add(
                "invalid_message",
                f"Invalid value: {role!r}. Supported values are: {supported}."
                if isinstance(role, str)
                else f"Missing required parameter: '{at}.role'.",
                f"{at}.role",
                index,
            )
            continue
        if role == "assistant":
            block = _check_assistant(message, index, issued, name_pattern, out)
        elif not _content_ok(message.get("content")):
            out.add(
                "invalid_message",
                f"Invalid value for 'content': expected a string, got {_type_name(message.get('content'))}.",
                f"{at}.content",
                index,
            )
    _close_block(block, out)


def _check_tool(
    message: Mapping[str, Any],
    index: int,
    block: _Block | None,
    answered: dict[str, str],
    out: _Collector,
) -> None:
    at = f"messages.[{index}]"
    call_id = message.get("tool_call_id")
    if call_id is None or call_id == "":
        out.add(
            "missing_tool_call_id",
            "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.",
            f"{at}.tool_call_id",
            index,
        )
        return
    if not isinstance(call_id, str):
        out.wrong_type(f"{at}.tool_call_id", "a string", call_id, index)
        return
    if block is None:
        out.add(
            "orphan_tool_message",
            "Invalid parameter: messages with role 'tool' must be a response to a preceding "
            "message with 'tool_calls'.",
            f"{at}.role",
            index,
        )
        return
    if call_id in answered:
        out.add(
            "duplicate_tool_call_id",
            f"Invalid parameter: 'tool_call_id' of '{call_id}' was already answered at "
            f"'{answered[call_id]}'. Each tool call must have exactly one response message.",
            f"{at}.tool_call_id",
            index,
        )
        return
    if call_id not in block.expected:
        out.add(
            "unknown_tool_call_id",
            f"Invalid parameter: 'tool_call_id' of '{call_id}' not found in 'tool_calls' of "
            "previous message.",
            f"{at}.tool_call_id",
            index,
        )
        return
    answered[call_id] = at
    block.answered.add(call_id)
    if not _content_ok(message.get("content")):
        out.add(
            "invalid_message",
            f"Invalid value for 'content': expected a string, got {_type_name(message.get('content'))}.",
            f"{at}.content",
            index,
        )


def _check_assistant(
    message: Mapping[str, Any],
    index: int,
    issued: dict[str, str],
    name_pattern: re.Pattern[str] | None,
    out: _Collector,
) -> _Block | None:
    at = f"messages.[{index}]"
    content = message.get("content")
    tool_calls = message.get("tool_calls")
    if content is not None and not _content_ok(content):
        out.wrong_type(f"{at}.content", "a string or an array", content, index)
    if tool_calls is None:
        if content is None:
            out.add(
                "invalid_message",
                "Invalid value for 'content': expected a string, got null.",
                f"{at}.content",
                index,
            )
        return None
    if not isinstance(tool_calls, list):
        out.wrong_type(f"{at}.tool_calls", "an array", tool_calls, index)
        return None
    if not tool_calls:
        out.add(
            "invalid_message",
            f"Invalid '{at}.tool_calls': empty array. Expected an array with minimum length 1, "
            "but got an empty array instead.",
            f"{at}.tool_calls",
            index,
        )
        return None
    expected: list[str] = []
    for k, call in enumerate(tool_calls):
        call_id = _check_call(call, f"{at}.tool_calls.[{k}]", index, name_pattern, out)
        if call_id is None:
            continue
        if call_id in issued:
            out.add(
                "duplicate_tool_call_id",
                f"Invalid parameter: duplicate tool call id '{call_id}' (first issued at "
                f"'{issued[call_id]}'). Tool call ids must be unique within a conversation.",
                f"{at}.tool_calls.[{k}].id",
                index,
            )
            continue
        issued[call_id] = f"{at}.tool_calls.[{k}].id"
        expected.append(call_id)
    return _Block(index, expected, set()) if expected else None


def _check_call(
    call: Any, at: str, index: int, name_pattern: re.Pattern[str] | None, out: _Collector
) -> str | None:
    """The call's id when the id is well formed (other faults are reported); else ``None``."""
    if not isinstance(call, Mapping):
        out.wrong_type(at, "an object", call, index)
        return None
    call_id = call.get("id")
    if not isinstance(call_id, str):
        out.wrong_type(f"{at}.id", "a string", call_id, index, required=True)
        return None
    if call_id == "":
        out.add(
            "invalid_message",
            f"Invalid '{at}.id': empty string. Expected a string with minimum length 1, "
            "but got an empty string instead.",
            f"{at}.id",
            index,
        )
        return None
    # The id is well formed from here on: it takes part in the block checks even when the
    # rest of the call is reported, so that its answer is not also called an orphan.
    if call.get("type", "function") != "function":
        out.add(
            "invalid_message",
            f"Invalid value: {call.get('type')!r}. Supported values are: 'function'.",
            f"{at}.type",
            index,
        )
        return call_id
    function = call.get("function")
    if not isinstance(function, Mapping):
        out.wrong_type(f"{at}.function", "an object", function, index, required=True)
        return call_id
    name = function.get("name")
    if not isinstance(name, str):
        out.wrong_type(f"{at}.function.name", "a string", name, index)
    elif name_pattern is not None and not name_pattern.match(name):
        out.add(
            "invalid_message",
            f"Invalid '{at}.function.name': string does not match pattern. Expected a string "
            f"that matches the pattern '{name_pattern.pattern}'.",
            f"{at}.function.name",
            index,
        )
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        out.wrong_type(f"{at}.function.arguments", "a string", arguments, index)
    return call_id
