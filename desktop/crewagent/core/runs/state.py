"""A run's state (the frontmatter of its workflow.md): reading it, and the checks every state write passes.

The rules of a state write (PACKAGE-FORMAT.md, "Engine"), checked before anything is written:

- the frontmatter is valid YAML (``E_INVALID_FRONTMATTER``) and passes the workflow-frontmatter
  schema (``E_SCHEMA_VALIDATION``);
- ``currentNodeId`` stays, or moves to a successor of the current node in the graph
  (``E_INVALID_TRANSITION``, listing the allowed nodes); before the first step the current node
  is the graph's entry node, so the first move must be to it or along one of its edges;
- ``stepsCompleted`` never shrinks: the old list is a prefix of the new one; and it grows only by
  the node the run was on and the node it moves to (``E_INVALID_TRANSITION``), so a step cannot
  be marked done twice by a model that repeats itself after a crash.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from crewagent.core import texts
from crewagent.core.runs.types import GraphLike
from crewagent.core.tools import frontmatter
from crewagent.core.tools.results import ErrorCode, ToolFailure, error

#: Checks a state against the workflow-frontmatter schema: a list of "pointer: message" problems.
SchemaCheck = Callable[[dict[str, Any]], list[str]]

COMPLETE = "complete"


@dataclass(frozen=True, slots=True)
class RunState:
    """The parts of the state the engine reads."""

    current_node_id: str
    steps_completed: tuple[str, ...]
    variables: Mapping[str, Any] = field(default_factory=dict)
    data: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> RunState:
        current = data.get("currentNodeId")
        steps = data.get("stepsCompleted")
        variables = data.get("variables")
        return cls(
            current_node_id=current if isinstance(current, str) else "",
            steps_completed=tuple(str(s) for s in steps) if isinstance(steps, list) else (),
            variables=variables if isinstance(variables, Mapping) else {},
            data=data,
        )

    def effective_node(self, graph: GraphLike) -> str:
        """The node the run is on: ``currentNodeId``, or the entry node before the first step."""
        return self.current_node_id or graph.entry_node_id

    def is_complete(self, graph: GraphLike) -> bool:
        """``variables.workflowStatus == "complete"``, or an end node is in ``stepsCompleted``."""
        if self.variables.get("workflowStatus") == COMPLETE:
            return True
        ends = set(graph.end_node_ids)
        return any(step in ends for step in self.steps_completed)


def parse_state(text: str) -> RunState:
    """The state of a workflow.md text; raises ToolFailure(E_INVALID_FRONTMATTER) when it is not YAML."""
    return RunState.of(frontmatter.jsonable(frontmatter.parse(text).data))


def check_write(
    graph: GraphLike,
    old: Mapping[str, Any],
    new: Mapping[str, Any] | None,
    *,
    schema: SchemaCheck | None = None,
) -> dict[str, Any] | None:
    """None when ``old`` may become ``new``, else the tool error result (``new`` None: not valid YAML)."""
    if new is None:
        return error(ErrorCode.E_INVALID_FRONTMATTER, texts.STATE_NOT_YAML)
    if schema is not None:
        problems = schema(dict(new))
        if problems:
            shown = "; ".join(problems[:8])
            return error(
                ErrorCode.E_SCHEMA_VALIDATION,
                f"The new state does not match the workflow state schema: {shown}. Nothing was written.",
                problems=problems[:20],
            )
    before, after = RunState.of(old), RunState.of(new)
    here = before.effective_node(graph)
    target = after.current_node_id
    allowed = _allowed(graph, here, started=bool(before.current_node_id))
    if target and target != before.current_node_id and target not in allowed:
        listing = ", ".join(allowed) or "none (this node has no outgoing edges)"
        return error(
            ErrorCode.E_INVALID_TRANSITION,
            f"currentNodeId cannot move from {here!r} to {target!r}: it is not a successor in the graph. "
            f"Allowed next nodes: {listing}. Nothing was written.",
            currentNodeId=here,
            allowedNext=list(allowed),
        )
    if not target and before.current_node_id:
        return error(
            ErrorCode.E_INVALID_TRANSITION,
            f"currentNodeId cannot be cleared once the run has started (it is {here!r}). Nothing was written.",
            currentNodeId=here,
            allowedNext=list(allowed),
        )
    old_steps, new_steps = before.steps_completed, after.steps_completed
    if tuple(new_steps[: len(old_steps)]) != old_steps:
        return error(
            ErrorCode.E_INVALID_TRANSITION,
            f"stepsCompleted may only grow: it was {list(old_steps)} and must keep those entries, in order, "
            f"at its start (got {list(new_steps)}). Nothing was written.",
            stepsCompleted=list(old_steps),
        )
    added = new_steps[len(old_steps) :]
    problem = _check_added(graph, here, target or here, old_steps, added)
    if problem is not None:
        return error(ErrorCode.E_INVALID_TRANSITION, problem + " Nothing was written.", stepsCompleted=list(old_steps))
    return None


def _allowed(graph: GraphLike, here: str, *, started: bool) -> tuple[str, ...]:
    successors = graph.successors(here)
    return successors if started else (here, *(s for s in successors if s != here))


def _check_added(graph: GraphLike, here: str, target: str, old: Sequence[str], added: Sequence[str]) -> str | None:
    """The new entries of stepsCompleted: the node the run was on, then (optionally) the node it moved to."""
    if not added:
        return None
    may = [here] if here == target else [here, target]
    position = 0
    for step in added:
        while position < len(may) and may[position] != step:
            position += 1
        if position == len(may):
            return (
                f"stepsCompleted can only gain the node the run is on ({here!r})"
                + (f" and the node it moves to ({target!r})" if target != here else "")
                + f"; {step!r} cannot be added now."
            )
        position += 1
    last = old[-1] if old else None
    if added[0] == last and last not in graph.successors(last):
        return f"{last!r} is already the last entry of stepsCompleted; a step is completed once per visit."
    return None


def raise_if_refused(refused: dict[str, Any] | None) -> None:
    """Turn a refusal into the ToolFailure tools raise (the tool catches it and returns the result)."""
    if refused is None:
        return
    part = refused.get("error", {})
    raise ToolFailure(
        part.get("code", ErrorCode.E_SCHEMA_VALIDATION),
        part.get("message", "The state write was refused."),
        **{k: v for k, v in part.items() if k not in ("code", "message")},
    )
