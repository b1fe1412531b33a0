"""The demo provider in Run mode: drives a workflow through the real tools, deterministically, offline.

Everything it knows comes from the request, as a model's would: ``RUN_DIRECTIVE`` (the state
file, the current node, whether the run is complete), ``NODE_BRIEF`` (the step file, the
outputs, the allowed next nodes) and the tool results of the current turn. For the node it is
on, it does in order whatever has not been done since the last state write:

1. read the state file (``fs.read``), then the step file;
2. if the step body says to ask with ``ui.ask_user`` and the tool is offered: ask, in one form
   (a step's fields are the keys under ``variables`` in the step's YAML example; a decision asks
   which edge to take); every field has a default, so ``crewagent run --yes`` answers with them;
   without the tool it takes the defaults (the user's text, if any, is the first goal);
3. write the node's outputs (``fs.write``, a Markdown document built from the variables);
4. patch the state (``fs.apply_patch`` + ``updateFrontmatter``): the node appended to
   ``stepsCompleted``, ``currentNodeId`` moved along the chosen (else default) edge, the
   answers in ``variables``, a ``decisionLog`` entry for a decision, ``workflowStatus:
   complete`` at an end node.

When the run is complete it says so in text; every other answer is a tool call, so one turn
runs the workflow to its end. After a crash it starts again from the state file it reads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from crewagent.core.llm.toolnames import wire_name_candidates
from crewagent.core.tools import frontmatter
from crewagent.core.tools.results import ToolFailure

LABEL = "[demo]"
RUN_MARK = "RUN_DIRECTIVE\n"
#: What a question would be answered with when no one can answer.
DEFAULT_ANSWERS: dict[str, Any] = {
    "projectName": "Example project",
    "audience": "people trying CrewAgent Desktop for the first time",
    "goals": ["See a workflow run from start to end without an API key"],
    "constraints": ["works offline"],
}
_START_WORDS = frozenset({"", "start", "continue", "resume", "go", "next"})

#: (tool, arguments, why) -> the answer plan; provided by demo.py (keeps the wire format there).
ToolPlan = Callable[[str, dict[str, Any], str], Any]
TextPlan = Callable[[str], Any]


def is_run_request(messages: Sequence[Mapping[str, Any]]) -> bool:
    return any(m.get("role") == "user" and message_text(m).startswith(RUN_MARK) for m in messages)


@dataclass
class _Directive:
    state: str
    current: str
    complete: bool
    step_file: str
    outputs: tuple[str, ...]
    allowed: tuple[tuple[str, str, bool], ...]  # (to, label, default)
    user_text: str


def plan_run(messages: Sequence[Mapping[str, Any]], offered: Callable[[str], bool], tool: ToolPlan, text: TextPlan) -> Any:
    """The next answer in a run (see the module docstring)."""
    directive = _directive(messages)
    turn = _current_turn(messages)
    if directive.complete:
        if messages[-1].get("role") == "tool":
            return text(
                f"{LABEL} The workflow is complete. The brief is at @project/artifacts/brief.md; the run's state "
                f"is in {directive.state}. (A script, not a model, drove this run.)"
            )
        return text(f"{LABEL} This run is complete; ask about its artifacts, or start a new run.")
    refused = _refusal(messages)
    if refused is not None:
        return text(
            f"{LABEL} The {refused} was refused, so the run waits here. Re-run with --yes (or allow it in the app) "
            "and say \"continue\"."
        )
    since = _since_last_state_write(turn, directive.state)
    reads = {str(args.get("path")): result for name, args, result in since if name == "fs.read" and result.get("ok")}
    if directive.state not in reads:
        return tool("fs.read", {"path": directive.state}, "The protocol starts with the state: I read it first.")
    step_path = f"@pkg/{directive.step_file}"
    if step_path not in reads:
        return tool("fs.read", {"path": step_path}, f"I read the step file of {directive.current}.")
    state = _frontmatter(str(reads[directive.state].get("content", "")))
    step = _step(str(reads[step_path].get("content", "")))
    body = step["body"]
    decision = step["type"] == "decision" or len(directive.allowed) > 1
    fields = _fields(body, decision, directive)
    asked = [result for name, _args, result in since if name == "ui.ask_user"]
    if fields and "ui.ask_user" in body and not asked and offered("ui.ask_user"):
        form = {
            "type": "form",
            "title": step.get("title") or f"Step {directive.current}",
            "description": f"{LABEL} The step {directive.current} needs your input.",
            "fields": fields,
        }
        return tool("ui.ask_user", form, "The step says to ask the user; I ask with ui.ask_user.")
    answers = _answers(fields, asked, directive.user_text)
    variables = dict(state.get("variables") or {}) if isinstance(state.get("variables"), dict) else {}
    variables.update({k: v for k, v in answers.items() if k not in ("outcome", "changes")})
    written = {str(args.get("path")) for name, args, result in since if name == "fs.write" and result.get("ok")}
    for output in directive.outputs:
        target = f"@project/{output}"
        if target not in written:
            content = _document(output, variables, state)
            return tool("fs.write", {"path": target, "content": content}, f"I write the step's output {output}.")
    return tool("fs.apply_patch", {"path": directive.state, "updateFrontmatter": _patch(directive, state, step, answers, decision)}, "The step is done; I record it in the state.")


def _patch(directive: _Directive, state: Mapping[str, Any], step: Mapping[str, Any], answers: Mapping[str, Any], decision: bool) -> dict[str, Any]:
    current = directive.current
    done = [str(s) for s in state.get("stepsCompleted") or []]
    update: dict[str, Any] = {"stepsCompleted": [*done, current]}
    variables = {k: v for k, v in answers.items() if k not in ("outcome", "changes")}
    edge = _chosen_edge(directive, answers if decision else {})
    if edge is not None:
        update["currentNodeId"] = edge[0]
    elif not state.get("currentNodeId"):
        update["currentNodeId"] = current
    if decision and edge is not None:
        names = [str(v) for v in step.get("setsVariables") or []]
        if names:
            variables[names[0]] = "approved" if edge[1] == "approve" else edge[1]
        reason = str(answers.get("changes") or "").strip() or f"{LABEL} took the {edge[1]} edge"
        log = [entry for entry in state.get("decisionLog") or [] if isinstance(entry, dict)]
        update["decisionLog"] = [*log, {"from": current, "to": edge[0], "label": edge[1], "reason": reason}]
    if not directive.allowed:
        variables["workflowStatus"] = "complete"
    if directive.outputs:
        known = [str(a) for a in state.get("artifacts") or []]
        update["artifacts"] = [*known, *(o for o in directive.outputs if o not in known)]
    if variables:
        update["variables"] = variables
    return update


def _refusal(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """The tool whose call the user just refused or dismissed (the last message is its result), if any."""
    last = messages[-1]
    if last.get("role") != "tool":
        return None
    try:
        result = json.loads(message_text(last))
    except ValueError:
        return None
    error = result.get("error") if isinstance(result, dict) else None
    if isinstance(error, dict) and error.get("code") in ("E_USER_DENIED", "E_USER_CANCELLED"):
        return "write" if error.get("code") == "E_USER_DENIED" else "question"
    return None


def _chosen_edge(directive: _Directive, answers: Mapping[str, Any]) -> tuple[str, str] | None:
    if not directive.allowed:
        return None
    wanted = str(answers.get("outcome") or "")
    for to, label, _default in directive.allowed:
        if wanted and wanted in (label, to):
            return to, label
    default = next(((to, label) for to, label, is_default in directive.allowed if is_default), None)
    return default or (directive.allowed[0][0], directive.allowed[0][1])


def _fields(body: str, decision: bool, directive: _Directive) -> list[dict[str, Any]]:
    """The form a step asks: a decision's edge and notes, or the variables its YAML example sets."""
    if decision:
        labels = [label for _to, label, _d in directive.allowed]
        default = next((label for _to, label, d in directive.allowed if d), labels[0] if labels else "")
        return [
            {"name": "outcome", "label": "Outcome", "type": "select", "options": labels, "default": default, "required": True},
            {"name": "changes", "label": "What to change (for a revision)", "type": "textarea", "default": ""},
        ]
    names: list[str] = []
    for block in re.findall(r"```ya?ml\n(.*?)```", body, re.DOTALL):
        try:
            data = yaml.safe_load(block)
        except yaml.YAMLError:
            continue
        variables = data.get("variables") if isinstance(data, dict) else None
        if isinstance(variables, dict):
            names = [str(k) for k in variables if k != "workflowStatus"]
            break
    fields = []
    for name in names:
        default = DEFAULT_ANSWERS.get(name, "")
        text = "\n".join(default) if isinstance(default, list) else str(default)
        kind = "textarea" if isinstance(default, list) else "text"
        fields.append({"name": name, "label": _label(name), "type": kind, "default": text, "required": name == "goals"})
    return fields


def _answers(fields: Sequence[Mapping[str, Any]], asked: Sequence[Mapping[str, Any]], user_text: str) -> dict[str, Any]:
    """The user's answers (a submitted form), else the defaults; list-like fields become lists."""
    values: Mapping[str, Any] = {}
    for result in reversed(asked):
        response = result.get("response")
        if result.get("ok") and isinstance(response, Mapping) and isinstance(response.get("values"), Mapping):
            values = response["values"]
            break
    answers: dict[str, Any] = {}
    for field_ in fields:
        name = str(field_["name"])
        value = values.get(name, field_.get("default", ""))
        if isinstance(DEFAULT_ANSWERS.get(name), list):
            items = value if isinstance(value, list) else [line.strip("-• ").strip() for line in str(value).splitlines()]
            value = [item for item in (str(i).strip() for i in items) if item]
            if name == "goals" and not values and user_text:
                value = [user_text, *value]
        answers[name] = value
    return answers


def _document(output: str, variables: Mapping[str, Any], state: Mapping[str, Any]) -> str:
    name = str(variables.get("projectName") or "The project")

    def bullets(value: Any) -> str:
        items = value if isinstance(value, list) else ([value] if value else [])
        return "\n".join(f"- {item}" for item in items) or "- (none given)"

    revisions = [e for e in state.get("decisionLog") or [] if isinstance(e, dict) and e.get("label") == "revise"]
    lines = [
        f"# {name}: project brief",
        "",
        f"_Written by the demo provider (a script) for {output}._",
        "",
        "## Problem",
        f"{name} helps {variables.get('audience') or 'its users'} reach the goals below.",
        "",
        "## Audience",
        str(variables.get("audience") or "(not given)"),
        "",
        "## Goals",
        bullets(variables.get("goals")),
        "",
        "## Constraints",
        bullets(variables.get("constraints")),
        "",
        "## Open questions",
        "- Assumption: the goals above are complete.",
    ]
    if revisions:
        lines += ["", "## Revisions", *(f"- {e.get('reason', '')}" for e in revisions)]
    return "\n".join(lines) + "\n"


def _label(name: str) -> str:
    words = re.sub(r"(?<!^)([A-Z])", r" \1", name).lower()
    return words[:1].upper() + words[1:]


# -- reading the request ---------------------------------------------------------------------------


def message_text(message: Mapping[str, Any]) -> str:
    """A request message's content as plain text (content parts joined)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return ""


def _field(block: str, key: str) -> str:
    match = re.search(rf"^- {re.escape(key)}: (.*)$", block, re.MULTILINE)
    return match.group(1).strip() if match else ""


def _directive(messages: Sequence[Mapping[str, Any]]) -> _Directive:
    run = next(message_text(m) for m in reversed(messages) if m.get("role") == "user" and message_text(m).startswith(RUN_MARK))
    brief = next((message_text(m) for m in reversed(messages) if m.get("role") == "user" and message_text(m).startswith("NODE_BRIEF\n")), "")
    user = next((message_text(m) for m in reversed(messages) if m.get("role") == "user" and message_text(m).startswith("USER_INPUT\n")), "")
    user_text = "\n".join(user.splitlines()[2:]).strip()
    current = _field(brief, "currentNodeId").split(" ")[0] or _field(run, "currentNodeId")
    outputs = tuple(
        pair.split(" -> ")[0].strip() for pair in _field(brief, "outputsMap").split(", ") if " -> " in pair
    )
    allowed: list[tuple[str, str, bool]] = []
    for item in re.findall(r"([^,\s]+) \(label=([^,]*), default=(true|false)\)", _field(brief, "allowedNext")):
        allowed.append((item[0], item[1], item[2] == "true"))
    return _Directive(
        state=_field(run, "state"),
        current=current,
        complete=_field(run, "status") == "complete",
        step_file=_field(brief, "stepFile").removeprefix("@pkg/"),
        outputs=outputs,
        allowed=tuple(allowed),
        user_text="" if user_text.lower() in _START_WORDS else user_text,
    )


def _current_turn(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The messages after the USER_INPUT block: this turn's calls and results."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "user":
            return list(messages[index + 1 :])
    return list(messages)


def _since_last_state_write(turn: Sequence[Mapping[str, Any]], state: str) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(tool, arguments, result) of this turn's calls after the last successful state write."""
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    done: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    for message in turn:
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            try:
                args = json.loads(function.get("arguments") or "{}")
            except ValueError:
                args = {}
            calls[str(call.get("id"))] = (_dotted(str(function.get("name", ""))), args if isinstance(args, dict) else {})
        if message.get("role") == "tool" and str(message.get("tool_call_id")) in calls:
            name, args = calls[str(message.get("tool_call_id"))]
            try:
                result = json.loads(message_text(message))
            except ValueError:
                result = {}
            result = result if isinstance(result, dict) else {}
            if name in ("fs.apply_patch", "fs.write") and args.get("path") == state and result.get("ok"):
                done = []
                continue
            done.append((name, args, result))
    return done


def _dotted(wire: str) -> str:
    for name in ("fs.read", "fs.write", "fs.apply_patch", "ui.ask_user", "fs.list", "fs.search"):
        if wire == name or wire in wire_name_candidates(name):
            return name
    return wire


def _frontmatter(text: str) -> dict[str, Any]:
    try:
        data = frontmatter.jsonable(frontmatter.parse(text).data)
    except ToolFailure:
        return {}
    return data if isinstance(data, dict) else {}


def _step(text: str) -> dict[str, Any]:
    try:
        document = frontmatter.parse(text)
    except ToolFailure:
        return {"type": "step", "body": text}
    data = frontmatter.jsonable(document.data)
    return {**data, "type": str(data.get("type") or "step"), "body": document.body}
