"""Tool definitions, the per-call context, and the registry that validates, approves, runs and audits calls.

``ToolRegistry.execute(name, arguments, ctx, call_id=...)`` never raises for anything the model
or the environment did; it returns a result dict. The order of checks, and the code each gives:

1. unknown tool, or one the policy turns off: ``TOOL_NOT_AVAILABLE`` (the message lists the tools),
   unless the registry's fallback knows better (an MCP tool while MCP is off: ``MCP_DISABLED``);
2. ``arguments`` not JSON, or JSON that is not an object: ``TOOL_ARGS_INVALID_JSON``
   (an empty string or None counts as ``{}``: some providers send that for tools without arguments);
3. a JSON object that does not fit the tool's schema: ``E_SCHEMA_VALIDATION`` (always this code,
   so the model can tell "fix the JSON" from "fix the values");
4. the tool's preflight (the sandbox check of the target path, so nobody is asked to approve a
   write that would be refused anyway): its own code;
5. approval of write-capable tools: ``E_USER_DENIED`` on a refusal;
6. the handler under a timeout (``Tool.timeout_s``, else the policy's, default 300 s):
   ``TOOL_TIMEOUT``; a handler raising: ``TOOL_EXEC_FAILED`` with its message.

The timeout holds for CPU-bound work too, provided the work lets the event loop run: handlers do
their blocking work in a thread (the wait is abandoned at the deadline; the thread stops at its
next ``check_cancelled``), and no such thread may hold the GIL for long in one C call. The one
such call a model could provoke, a backtracking regular expression, is bounded by the call's
``deadline`` (textmatch.py).

Cancellation (the user pressed Stop) is not a result: ``execute`` audits the call as
``TOOL_INTERRUPTED``, sets the call's cancel event (threads stop at their next check) and
re-raises ``CancelledError``; the loop answers the call.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import logging
import math
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ValidationError

from crewagent.core import paths, texts
from crewagent.core.jsonparse import parse_json
from crewagent.core.tools.audit import AuditLog
from crewagent.core.tools.policy import ApprovalGate, ApprovalRequest, ToolPolicy
from crewagent.core.tools.results import ErrorCode, error
from crewagent.core.tools.protected import ProtectedAreas
from crewagent.core.tools.sandbox import Sandbox

if TYPE_CHECKING:
    from crewagent.core.messages import ConversationMessage
    from crewagent.core.store import ProjectInfo

log = logging.getLogger(__name__)

ToolResult = dict[str, Any]
ToolHandler = Callable[[dict[str, Any], "ToolContext"], Awaitable[ToolResult]]
#: Cheap checks run before approval; returns an error result to refuse, None to go on.
Preflight = Callable[[dict[str, Any], "ToolContext"], "ToolResult | None"]
#: Shows a widget and waits for the user's WIDGET_SUBMIT payload (None: dismissed).
AskUser = Callable[[dict[str, Any]], Awaitable["dict[str, Any] | None"]]
#: Checks a frontmatter update before it is written (Run mode state): (shown path, old, new) -> error or None.
#: ``new`` is None when ``fs.write`` writes text whose frontmatter is not valid YAML (a guard that
#: covers the path refuses it; any other path is none of its business). A guard reads ``old`` and
#: ``new`` and never changes them (fs.apply_patch returns the same ``new`` as the written frontmatter).
FrontmatterGuard = Callable[[str, dict[str, Any], "dict[str, Any] | None"], "ToolResult | None"]
#: Live output of a running call: (stream name, text), e.g. ("stdout", "collected 12 items\n").
ToolOutput = Callable[[str, str], None]


class SubagentAccess(Protocol):
    """What the loop needs from a session's subagent scope (``crewagent.core.subagents.scope``).

    A protocol, so that the tools (which the subagents use) do not import the subagents.
    """

    def annotate(self, message: ConversationMessage) -> ConversationMessage:
        """A Task result with its child's app-only link fields (other messages unchanged)."""
        ...

    async def turn_ended(self) -> list[ConversationMessage]:
        """The parent's turn ended normally: deliver the notices of finished background children."""
        ...


class ToolCancelled(Exception):
    """Raised by ``ToolContext.check_cancelled`` inside a tool thread whose call was abandoned."""


@dataclass(frozen=True)
class Tool:
    """One tool the model can call.

    ``args_model`` (a pydantic model) validates the arguments and, when ``parameters`` is left
    empty, provides the JSON schema. Without it, ``parameters`` is checked with a small
    JSON-schema subset (type, required, properties, additionalProperties, enum, items, bounds).
    ``timeout_s``: None uses the policy's timeout; ``math.inf`` means none (waiting for a user).
    """

    name: str
    description: str
    handler: ToolHandler
    parameters: dict[str, Any] = field(default_factory=dict)
    writes: bool = False
    args_model: type[BaseModel] | None = None
    preflight: Preflight | None = None
    timeout_s: float | None = None
    #: A one-line description of a call for the approval prompt.
    summarize: Callable[[dict[str, Any]], str] | None = None
    #: Offered to the model only when a user can answer (not in a headless run).
    needs_ui: bool = False
    #: Further fields of the approval request (``summary``, ``scope``, ``scope_label``,
    #: ``details``), computed after the preflight; a command tool scopes its grants by program.
    approval_fields: Callable[[dict[str, Any], ToolContext], dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        if not self.parameters:
            schema = schema_of(self.args_model) if self.args_model else {"type": "object", "properties": {}}
            object.__setattr__(self, "parameters", schema)

    def openai_schema(self) -> dict[str, Any]:
        """The entry of the OpenAI ``tools=[...]`` list (the name keeps its dots; the adapter encodes it)."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


@dataclass(frozen=True)
class ToolContext:
    """What a tool call may use: the sandbox roots, the policy, the UI callbacks, the audit.

    Build one per conversation with :meth:`for_project`; the registry derives a per-call copy
    (``call_id`` and a fresh ``cancel_event``). Threads doing long work call
    :meth:`check_cancelled` between steps so an abandoned call stops promptly.
    """

    project_root: Path
    state_dir: Path | None = None
    pkg_dir: Path | None = None
    #: Further folders no path may reach (conversation logs), on top of ``areas``.
    protected: tuple[Path, ...] = ()
    #: The app's own files no tool may reach (protected.py); None: the app's default folders.
    areas: ProtectedAreas | None = field(default=None, compare=False)
    policy: ToolPolicy = field(default_factory=ToolPolicy)
    ask_user: AskUser | None = None
    approval: ApprovalGate | None = None
    audit: AuditLog | None = None
    conversation_id: str | None = None
    run_id: str | None = None
    frontmatter_guard: FrontmatterGuard | None = None
    #: How the Task tool reaches the subagent manager (issue 6); None: no subagents here.
    subagents: SubagentAccess | None = field(default=None, compare=False)
    call_id: str | None = None
    cancel_event: threading.Event = field(default_factory=threading.Event, compare=False)
    #: Where a running call reports live output (the loop's ToolCallOutput); None: nobody listens.
    on_output: ToolOutput | None = field(default=None, compare=False)
    #: When the running call times out (``time.monotonic()``); None: no limit. Work that cannot
    #: check ``cancel_event`` often (a regular expression) bounds itself by it.
    deadline: float | None = field(default=None, compare=False)
    sandbox: Sandbox = field(init=False, compare=False)

    def __post_init__(self) -> None:
        sandbox = Sandbox(self.project_root, self.state_dir, self.pkg_dir, self.protected, self.areas)
        object.__setattr__(self, "sandbox", sandbox)

    @classmethod
    def for_project(
        cls, project: ProjectInfo, *, pkg_dir: Path | None = None, config_dir: Path | None = None, **fields: Any
    ) -> ToolContext:
        """The context of an opened project: @state and the protected areas come from it.

        The data root is the one the project lives in; ``config_dir`` is the settings folder in
        use (None: ``paths.config_dir()``). The defaults of both are protected as well.
        """
        runtime = project.runtime_dir
        areas = ProtectedAreas.of_app(
            paths.data_root_of_runtime(runtime), config_dir, logs=(paths.conversations_dir(runtime),)
        )
        return cls(project_root=project.root, state_dir=paths.state_dir(runtime), pkg_dir=pkg_dir, areas=areas, **fields)

    def for_call(self, call_id: str | None, on_output: ToolOutput | None = None) -> ToolContext:
        """A copy for one call: its id and its own cancel event (the sandbox is shared, not re-resolved)."""
        clone = copy.copy(self)
        object.__setattr__(clone, "call_id", call_id)
        object.__setattr__(clone, "cancel_event", threading.Event())
        if on_output is not None:
            object.__setattr__(clone, "on_output", on_output)
        return clone

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    def check_cancelled(self) -> None:
        if self.cancel_event.is_set():
            raise ToolCancelled(self.call_id or "")


class ToolRegistry:
    """The tools a session knows; gives the OpenAI tool list and executes calls by name."""

    def __init__(self, tools: Iterable[Tool] = ()):
        self._tools: dict[str, Tool] = {}
        #: Answers a call to a tool that is not here, when its owner knows why (MCP: MCP_DISABLED).
        self._fallback: Callable[[str], ToolResult | None] | None = None
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def set_fallback(self, fallback: Callable[[str], ToolResult | None] | None) -> None:
        """``fallback(name)`` gives the result of a call to an unknown tool (None: TOOL_NOT_AVAILABLE)."""
        self._fallback = fallback

    def names(self) -> list[str]:
        return list(self._tools)

    def visible(self, policy: ToolPolicy | None = None, *, has_ui: bool = True) -> list[Tool]:
        """The tools the policy leaves on (and, without a UI, those that need none)."""
        return [
            tool
            for tool in self._tools.values()
            if (policy is None or policy.allows(tool.name)) and (has_ui or not tool.needs_ui)
        ]

    def openai_tools(self, policy: ToolPolicy | None = None, *, has_ui: bool = True) -> list[dict[str, Any]]:
        """``tools=[...]`` for a chat completion."""
        return [tool.openai_schema() for tool in self.visible(policy, has_ui=has_ui)]

    async def execute(
        self,
        name: str,
        arguments: str | Mapping[str, Any] | None,
        ctx: ToolContext,
        *,
        call_id: str | None = None,
        on_output: ToolOutput | None = None,
    ) -> ToolResult:
        """Run one tool call and return its result dict (see the module docstring for the codes).

        ``on_output`` receives the live output of tools that stream it (commands)."""
        started = time.perf_counter()
        call_ctx = ctx.for_call(call_id, on_output)
        tool = self._tools.get(name)
        args: Any = arguments
        approval: str | None = None
        try:
            parsed, result = self._prepare(tool, name, arguments, call_ctx)
            if parsed is not None:
                args = parsed
            if result is None:
                assert tool is not None and parsed is not None
                if tool.writes and ctx.approval is not None:
                    request = ApprovalRequest(
                        tool=name,
                        args=parsed,
                        call_id=call_id,
                        conversation_id=ctx.conversation_id,
                        **{"summary": _summary(tool, parsed), **_approval_fields(tool, parsed, call_ctx)},
                    )
                    decision, result = await ctx.approval.check(request)
                    approval = decision.value
                if result is None:
                    started = time.perf_counter()  # the time spent waiting for the user is not the tool's
                    result = await self._run(tool, parsed, call_ctx)
        except asyncio.CancelledError:
            call_ctx.cancel_event.set()
            interrupted = error(ErrorCode.TOOL_INTERRUPTED, texts.TOOL_CALL_INTERRUPTED)
            if ctx.audit is not None:
                # Synchronous on purpose: awaiting here would be cancelled too; one short append.
                self._audit(ctx, name, args, interrupted, started, call_id, approval)
            raise
        if ctx.audit is not None:
            await asyncio.to_thread(self._audit, ctx, name, args, result, started, call_id, approval)
        return result

    def _prepare(
        self, tool: Tool | None, name: str, arguments: str | Mapping[str, Any] | None, ctx: ToolContext
    ) -> tuple[dict[str, Any] | None, ToolResult | None]:
        """Parsed arguments, or the error result that refuses the call before it runs."""
        if tool is None and self._fallback is not None:
            refused = self._fallback(name)
            if refused is not None:
                return None, refused
        if tool is None or not ctx.policy.allows(name):
            available = ", ".join(t.name for t in self.visible(ctx.policy)) or "none"
            return None, error(ErrorCode.TOOL_NOT_AVAILABLE, texts.TOOL_UNKNOWN.format(name=name, available=available))
        parsed, problem = parse_arguments(arguments)
        if parsed is None:
            return None, error(ErrorCode.TOOL_ARGS_INVALID_JSON, texts.TOOL_ARGS_INVALID.format(name=name, problem=problem))
        invalid = validate_args(tool, parsed)
        if invalid is not None:
            return parsed, error(ErrorCode.E_SCHEMA_VALIDATION, texts.TOOL_ARGS_SCHEMA.format(name=name, problem=invalid))
        if tool.preflight is not None:
            refused = tool.preflight(parsed, ctx)
            if refused is not None:
                return parsed, refused
        return parsed, None

    async def _run(self, tool: Tool, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        timeout = tool.timeout_s if tool.timeout_s is not None else ctx.policy.timeout_s
        try:
            if math.isinf(timeout):
                result = await tool.handler(args, ctx)
            else:
                object.__setattr__(ctx, "deadline", time.monotonic() + timeout)  # ctx is this call's own copy
                # In this task (wait_for would start one more task per call and wait for it).
                async with asyncio.timeout(timeout):
                    result = await tool.handler(args, ctx)
        except TimeoutError:
            ctx.cancel_event.set()
            return error(ErrorCode.TOOL_TIMEOUT, texts.TOOL_TIMED_OUT.format(name=tool.name, timeout=timeout))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug in the tool: the model reads it, the log keeps the traceback
            log.exception("tool %s failed", tool.name)
            return error(ErrorCode.TOOL_EXEC_FAILED, texts.TOOL_FAILED.format(name=tool.name, kind=type(exc).__name__, detail=exc))
        if not isinstance(result, dict) or not isinstance(result.get("ok"), bool):
            log.error("tool %s returned %r, not a result dict", tool.name, type(result).__name__)
            return error(ErrorCode.TOOL_EXEC_FAILED, texts.TOOL_INVALID_RESULT.format(name=tool.name))
        return result

    @staticmethod
    def _audit(
        ctx: ToolContext,
        name: str,
        args: Any,
        result: ToolResult,
        started: float,
        call_id: str | None,
        approval: str | None,
    ) -> None:
        assert ctx.audit is not None
        ctx.audit.record(
            tool=name,
            args=args,
            result=result,
            duration_ms=(time.perf_counter() - started) * 1000,
            call_id=call_id,
            conversation_id=ctx.conversation_id,
            run_id=ctx.run_id,
            approval=approval,
        )


def _summary(tool: Tool, args: dict[str, Any]) -> str:
    if tool.summarize is not None:
        try:
            return tool.summarize(args)
        except Exception:  # only a label; the approval must still be asked
            log.exception("summary of %s failed", tool.name)
    return tool.name


def _approval_fields(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if tool.approval_fields is None:
        return {}
    try:
        return tool.approval_fields(args, ctx)
    except Exception:  # only what the prompt shows; the question is still asked
        log.exception("approval fields of %s failed", tool.name)
        return {}


def parse_arguments(arguments: str | Mapping[str, Any] | None) -> tuple[dict[str, Any] | None, str]:
    """The arguments as a dict, or None and what is wrong with them."""
    if arguments is None:
        return {}, ""
    if isinstance(arguments, Mapping):
        return dict(arguments), ""
    if not isinstance(arguments, str):
        return None, f"are a {type(arguments).__name__}, not a JSON object"
    if not arguments.strip():
        return {}, ""
    try:
        value = parse_json(arguments)
    except ValueError as exc:
        return None, f"are {exc}"
    if not isinstance(value, dict):
        return None, f"must be a JSON object, not {type(value).__name__}"
    return value, ""


def validate_args(tool: Tool, args: dict[str, Any]) -> str | None:
    """None when the arguments fit the tool, else a message naming the fields at fault."""
    if tool.args_model is not None:
        try:
            tool.args_model.model_validate(args)
        except ValidationError as exc:
            return describe_validation_error(exc)
        return None
    return check_schema(tool.parameters, args)


def describe_validation_error(exc: ValidationError) -> str:
    parts = []
    for item in exc.errors()[:8]:
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        parts.append(f"{where}: {item['msg']}")
    return "; ".join(parts)


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def check_schema(schema: Mapping[str, Any], value: Any, where: str = "arguments") -> str | None:
    """A small JSON-schema subset check, enough for tools declared by schema alone (MCP)."""
    expected = schema.get("type")
    if expected is not None:
        names = expected if isinstance(expected, list) else [expected]
        if not any(_has_type(value, name) for name in names):
            return f"{where}: expected {' or '.join(map(str, names))}, got {_json_type(value)}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where}: must be one of {schema['enum']}"
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                return f"{where}.{key}: required"
        for key, item in value.items():
            if key in properties:
                problem = check_schema(properties[key], item, f"{where}.{key}")
                if problem:
                    return problem
            elif schema.get("additionalProperties") is False:
                return f"{where}.{key}: unknown field"
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(value):
            problem = check_schema(schema["items"], item, f"{where}[{index}]")
            if problem:
                return problem
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{where}: must be >= {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{where}: must be <= {schema['maximum']}"
    if isinstance(value, str) and "minLength" in schema and len(value) < schema["minLength"]:
        return f"{where}: must have at least {schema['minLength']} characters"
    return None


def _has_type(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _JSON_TYPES.get(name, (object,)))


def _json_type(value: Any) -> str:
    for name, types in _JSON_TYPES.items():
        if _has_type(value, name):
            return name
    return type(value).__name__


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """A compact JSON schema for a pydantic arguments model (titles dropped, ``X | None`` as X, refs inlined).

    Inlined because some OpenAI-compatible servers do not follow ``$ref``. Made once per model
    (pydantic builds it anew on every call, ~2 ms for the Task tool's arguments, and every session
    makes its Task tools again); each caller gets its own copy.
    """
    return copy.deepcopy(_schema_of(model))


@functools.cache
def _schema_of(model: type[BaseModel]) -> dict[str, Any]:
    schema = _compact(model.model_json_schema())
    defs = schema.pop("$defs", {})
    return _inline(schema, defs)


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        rest = {key: value for key, value in node.items() if key != "$ref"}
        return {**_inline(defs[ref.removeprefix("#/$defs/")], defs), **rest}
    return {key: _inline(value, defs) for key, value in node.items()}


def _compact(node: Any) -> Any:
    if isinstance(node, list):
        return [_compact(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {
        key: ({name: _compact(sub) for name, sub in value.items()} if key in ("properties", "$defs") else _compact(value))
        for key, value in node.items()
        if key != "title"
    }
    options = out.get("anyOf")
    if isinstance(options, list):
        real = [option for option in options if option != {"type": "null"}]
        if len(real) < len(options):  # an optional argument: the model just leaves it out
            out.pop("anyOf")
            out = {**real[0], **out} if len(real) == 1 else {"anyOf": real, **out}
            if out.get("default", 0) is None:
                out.pop("default")
    return out
