"""The rolling CONVERSATION_SUMMARY: an injected async summarizer, a deterministic fallback, persistence."""

from __future__ import annotations

import inspect
import logging
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from crewagent.core.context.builder import ContextResult, build_llm_messages
from crewagent.core.context.compression import one_line, outcome, tool_history_lines
from crewagent.core.context.render import truncate
from crewagent.core.context.tokens import content_text
from crewagent.core.messages import ConversationMessage
from crewagent.core.protocol.chain import SUMMARY_MARKER, Unit

log = logging.getLogger(__name__)

HEADINGS: tuple[str, ...] = (
    "User goal",
    "Current status",
    "Confirmed constraints",
    "Key decisions",
    "Files and paths",
    "Tool results",
    "Completed actions",
    "Pending tasks",
    "Do not repeat",
)
#: How much of the covered history the summarizer is shown (newest first).
SUMMARY_INPUT_CHARS = 60_000
_SECTION_LINES = 15
_PATH = re.compile(r"@(?:project|state|pkg)/[^\s\"'`)\]},]+")

#: Takes the prompt messages[] and returns the summary text; wired to the provider by the loop.
Summarizer = Callable[[list[dict[str, Any]]], Awaitable[str]]
#: Persists a message and returns it as stored (the store's ``append_message``, bound).
AppendSummary = Callable[[ConversationMessage], "ConversationMessage | Awaitable[ConversationMessage]"]

_INSTRUCTIONS = (
    "You maintain the rolling summary of a conversation between a user and an AI agent that "
    "uses tools. Merge the previous summary (if any) with the new transcript into one summary "
    "that lets the agent continue the work without the transcript. Be factual and specific: keep "
    "file paths, names, numbers, decisions and error codes; drop chit-chat. Reply with the "
    f"summary only, starting with the line {SUMMARY_MARKER} and then exactly these sections, "
    "each a markdown heading followed by short bullet points ('- (none)' when empty):\n"
    + "\n".join(f"## {h}" for h in HEADINGS)
)


def _transcript(units: Sequence[Unit]) -> str:
    lines: list[str] = []
    used = 0
    omitted = 0
    for unit in reversed(units):
        if unit.kind == "group":
            entry = "ASSISTANT (tool calls):\n" + "\n".join(tool_history_lines(unit))
        else:
            role = unit.message.role.upper()
            entry = f"{role}: {truncate(unit.message.text, 2_000, 'for the summary')}"
        if used + len(entry) > SUMMARY_INPUT_CHARS:
            omitted += 1
            continue
        used += len(entry)
        lines.append(entry)
    lines.reverse()
    if omitted:
        lines.insert(0, f"[{omitted} older entries omitted for length]")
    return "\n\n".join(lines)


def summary_prompt(previous: str | None, units: Sequence[Unit]) -> list[dict[str, Any]]:
    """The messages[] the summarizer sends to the model."""
    parts = []
    if previous:
        parts.append(f"PREVIOUS SUMMARY\n{previous}")
    parts.append(f"NEW TRANSCRIPT\n{_transcript(units)}")
    return [{"role": "system", "content": _INSTRUCTIONS}, {"role": "user", "content": "\n\n".join(parts)}]


def parse_sections(text: str) -> dict[str, list[str]]:
    """The bullet lines under each known heading of a summary."""
    sections: dict[str, list[str]] = {h: [] for h in HEADINGS}
    current: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("## "):
            title = stripped[3:].strip()
            current = title if title in sections else None
        elif current and stripped and stripped != "- (none)":
            sections[current].append(stripped if stripped.startswith("- ") else f"- {stripped}")
    return sections


def format_summary(sections: Mapping[str, Sequence[str]]) -> str:
    lines = [SUMMARY_MARKER]
    for heading in HEADINGS:
        lines.append(f"## {heading}")
        body = list(dict.fromkeys(sections.get(heading, ())))[-_SECTION_LINES:]
        lines.extend(body or ["- (none)"])
    return "\n".join(lines)


def normalize_summary(text: str) -> str | None:
    """A summarizer reply in the fixed shape (marker and every heading), or ``None`` when empty."""
    if not isinstance(text, str) or not text.strip():
        return None
    sections = parse_sections(text)
    if not any(sections.values()):
        # Free text without the headings: keep it as the status rather than lose it.
        sections["Current status"] = [f"- {one_line(text, 2_000)}"]
    return format_summary(sections)


def deterministic_summary(previous: str | None, units: Sequence[Unit]) -> str:
    """A summary built without a model from the covered messages (and the previous summary)."""
    sections = parse_sections(previous) if previous else {h: [] for h in HEADINGS}
    users = [u.message for u in units if u.kind == "text" and u.message.role == "user"]
    answers = [u.message for u in units if u.kind == "text" and u.message.role == "assistant"]
    if users and not sections["User goal"]:
        sections["User goal"].append(f"- {one_line(users[0].text, 300)}")
    if answers:
        sections["Current status"] = [f"- {one_line(answers[-1].text, 300)}"]
    if users:
        sections["Pending tasks"] = [f"- last request covered here: {one_line(users[-1].text, 300)}"]
    paths: list[str] = []
    calls: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    for unit in units:
        texts = [unit.message.text]
        for call in unit.calls:
            texts.append(call.function.arguments)
            calls[call.function.name] += 1
            result = unit.results.get(call.id)
            status = outcome(content_text(result.content)) if result is not None else "failed TOOL_INTERRUPTED"
            entry = f"- {call.function.name} {one_line(call.function.arguments, 120)}"
            if status.startswith("failed"):
                failed[call.function.name] += 1
                sections["Do not repeat"].append(f"{entry} → {status}")
            else:
                sections["Completed actions"].append(entry)
        for text in texts:
            paths.extend(_PATH.findall(text))
    sections["Files and paths"].extend(f"- {p}" for p in dict.fromkeys(paths))
    sections["Tool results"].extend(
        f"- {name}: {count} call(s), {failed[name]} failed" for name, count in sorted(calls.items())
    )
    return format_summary(sections)


async def build_with_summary(
    messages: Sequence[ConversationMessage | Mapping[str, Any]],
    *,
    append: AppendSummary,
    summarizer: Summarizer | None = None,
    **build_options: Any,
) -> ContextResult:
    """Build the context; when compression was needed, persist a rolling summary and rebuild.

    The summary covers what the window lost (trimmed or compressed units, oldest first) plus
    whatever the previous summary covered. ``summarizer`` failing (any exception: it is the
    provider's call) or returning nothing falls back to the deterministic summary; the reason
    is in ``debug["summary"]["fallbackReason"]``. Stored messages are never changed: the only
    write is the new summary message through ``append``.
    """
    result = build_llm_messages(messages, **build_options)
    if not result.ok or not result.summary_candidates:
        return result
    previous = result.summary
    units = result.summary_candidates
    covered: list[str] = []
    if previous is not None:
        covered.extend(previous.summaryOf or [])
        covered.append(previous.id)
    covered.extend(i for unit in units for i in unit.ids)
    covered = list(dict.fromkeys(covered))
    previous_text = previous.text if previous is not None else None

    text: str | None = None
    reason: str | None = None
    source = "llm"
    if summarizer is not None:
        try:
            text = normalize_summary(await summarizer(summary_prompt(previous_text, units)))
            if text is None:
                reason = "the summarizer returned no text"
        except Exception as exc:  # noqa: BLE001 - any provider failure means: use the fallback
            reason = f"{type(exc).__name__}: {exc}"
            log.warning("conversation summary fell back to the deterministic one: %s", reason)
    else:
        reason = "no summarizer configured"
    if text is None:
        text = deterministic_summary(previous_text, units)
        source = "deterministic"

    summary = ConversationMessage.new(
        "system",
        text,
        summaryOf=covered,
        synthetic=True,
        partType="content",
        mode=build_options.get("mode", "chat"),
    )
    stored = append(summary)
    if inspect.isawaitable(stored):
        stored = await stored
    rebuilt = build_llm_messages([*messages, stored], **build_options)
    rebuilt.debug["summary"] = {
        **(rebuilt.debug.get("summary") or {}),
        "created": True,
        "source": source,
        "fallbackReason": reason,
        "coveredMessages": len(covered),
    }
    return rebuilt
