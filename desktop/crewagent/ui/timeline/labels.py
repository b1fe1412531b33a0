"""The words and marks timeline rows show: status labels, sizes, durations, glyphs, tool arguments."""

from __future__ import annotations

import json
from collections.abc import Mapping

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QFont, QFontMetricsF

from crewagent.ui.timeline.model import FAILED, INTERRUPTED, OK, PENDING, RUNNING
from crewagent.worker.turn_values import TokenUsage

#: Characters of a subagent's summary shown in its Task part (the whole answer is in its tab).
MAX_SUMMARY_CHARS = 280

#: Labels are translated as rows are painted (a language switch only repaints); lupdate finds
#: ``translate("TimelineDelegate", "...")`` calls by this name.
translate = QCoreApplication.translate


def state_label(state: str) -> str:
    return {
        PENDING: translate("TimelineDelegate", "waiting"),
        RUNNING: translate("TimelineDelegate", "running"),
        OK: translate("TimelineDelegate", "ok"),
        FAILED: translate("TimelineDelegate", "failed"),
        INTERRUPTED: translate("TimelineDelegate", "interrupted"),
    }.get(state, state)


def usage_label(usage: TokenUsage) -> str:
    """``1,234 in (1,000 cached) · 56 out · $0.0012``: what a model call (or a conversation) used."""
    text = translate("TimelineDelegate", "{tokens} in").format(tokens=f"{usage.prompt:,}")
    if usage.cached:
        text += " " + translate("TimelineDelegate", "({tokens} cached)").format(tokens=f"{usage.cached:,}")
    text += " · " + translate("TimelineDelegate", "{tokens} out").format(tokens=f"{usage.completion:,}")
    if usage.cost_usd is not None:
        text += f" · ${usage.cost_usd:.4f}"
    return text


def subagent_status_label(status: str) -> str:
    return {
        "running": translate("TimelineDelegate", "running"),
        "completed": translate("TimelineDelegate", "completed"),
        "failed": translate("TimelineDelegate", "failed"),
        "cancelled": translate("TimelineDelegate", "cancelled"),
    }.get(status, status)


def open_subagent_label() -> str:
    return translate("TimelineDelegate", "Open subagent conversation") + "  ↗"


def compact(text: str, limit: int = MAX_SUMMARY_CHARS) -> str:
    """``text`` on one paragraph, cut at ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def duration_label(ms: float | None) -> str:
    if ms is None:
        return ""
    if ms < 1000:
        return f"{ms:.0f} ms"
    return f"{ms / 1000:.1f} s"


def size_label(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"


def pretty_json(text: str) -> str:
    """Arguments or a result as indented JSON; text that is not JSON is shown as it is."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


def json_object(text: str) -> Mapping[str, object]:
    """A tool part's arguments as a mapping (empty when they are not a JSON object)."""
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def robot_glyph(font: QFont) -> str:
    """The subagent mark: a robot where the font has one, else a plain diamond (no tofu box)."""
    return "🤖" if QFontMetricsF(font).inFontUcs4(0x1F916) else "◆"


def wrench_glyph(font: QFont) -> str:
    """A tool part's mark: a wrench where the font has one, else a gear."""
    return "🔧" if QFontMetricsF(font).inFontUcs4(0x1F527) else "⚙"


def notice_description(text: str) -> str:
    """The ``- description:`` line of a subagent notice (core.subagents.links.notice_message)."""
    for line in text.splitlines():
        if line.startswith("- description: "):
            return line.removeprefix("- description: ").strip()
    return ""
