"""A gallery of timeline rows, one of every kind and state, rendered offscreen by the real delegate.

Used by tests/ui/test_timeline_look.py (estimate and layout agree; the look does not change) and
by hand, to see the rows or compare two builds pixel by pixel::

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.ui.timeline_gallery OUT_DIR
    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.ui.timeline_gallery --compare DIR_A DIR_B
    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.ui.timeline_gallery --digests tests/ui/timeline_look.json

The last one records what test_timeline_look checks against: run it after a deliberate change of
the look (and look at the PNGs first).
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, QRect, qVersion
from PySide6.QtGui import QColor, QFontInfo, QGuiApplication, QImage, QPainter
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem

from crewagent.ui.timeline import TimelineModel, TimelineRole, TimelineView
from crewagent.ui.timeline.delegate import robot_glyph
from crewagent.ui.timeline.documents import mono_font
from crewagent.ui.timeline.view import TimelineColors
from crewagent.worker.turn_values import LoadedConversation, SubagentInfo, TimelineMessage, ToolCallRef, frozen_json

#: Row widths the gallery is drawn at: narrow (the column shrinks), medium and past MAX_COLUMN.
WIDTHS = (320, 640, 1100)
T = "2026-01-01T00:00:00.000Z"
CONVERSATION = "conv"

MARKDOWN = "Here is **bold**, `code` and a [link](https://example.com).\n\n- one\n- two\n\n```python\nprint('hi')\n```\n\nThe end."
LONG = " ".join(f"word{n}" for n in range(160))


def _msg(mid: str, role: str, text: str = "", **fields: Any) -> TimelineMessage:
    return TimelineMessage(mid, role, T, text, **fields)


def _call(call_id: str, name: str, arguments: object) -> ToolCallRef:
    return ToolCallRef(call_id, name, json.dumps(arguments))


def _result(mid: str, call_id: str, name: str, result: object, **fields: Any) -> TimelineMessage:
    fields.setdefault("part_type", "tool_result")
    return _msg(mid, "tool", json.dumps(result), tool_call_id=call_id, tool_name=name, duration_ms=1234.0, **fields)


def _info(session: str, call_id: str, status: str, **fields: Any) -> SubagentInfo:
    return SubagentInfo(session, "explore", status, parent_session_id=CONVERSATION, parent_call_id=call_id, **fields)


def history() -> tuple[LoadedConversation, tuple[str, ...], tuple[str, ...]]:
    """The gallery's conversation, and the keys of the tool parts and notices to show expanded."""
    big = {"ok": True, "content": "x" * 25_000}
    messages = (
        _msg("u-short", "user", "list the files"),
        _msg("u-markdown", "user", MARKDOWN),
        _msg("u-long", "user", LONG),
        _msg("a-text", "assistant", MARKDOWN),
        _msg("a-long", "assistant", LONG),
        _msg("a-reasoning", "assistant", "The answer.", reasoning="I should think.\n\nThen answer."),
        _msg("a-reasoning-open", "assistant", "Answer after thought.", reasoning="Step one.\n\nStep **two**."),
        _msg("a-synthetic", "assistant", "Filled in.", synthetic=True),
        _msg("a-interrupted", "assistant", "Half a", interrupted=True),
        _msg("a-error-plain", "assistant", "Something broke", part_type="error"),
        _msg("a-error-tool", "assistant", "", part_type="error", error=frozen_json({"code": "TOOL_LOOP_LIMIT", "message": "Too many rounds."})),
        _msg("a-calls", "assistant", "Let me look.", tool_calls=(
            _call("c-ok", "fs.list", {"path": "@project"}),
            _call("c-open", "fs.read", {"path": "@project/README.md"}),
            _call("c-failed", "fs.read", {"path": "missing.md"}),
            _call("c-pending", "fs.write", {"path": "a.md", "content": "A"}),
            _call("c-big", "fs.read", {"path": "big.md"}),
            _call("c-big-full", "fs.read", {"path": "big2.md"}),
            _call("c-offload", "fs.read", {"path": "huge.md"}),
            _call("c-offload-full", "fs.read", {"path": "huge2.md"}),
            _call("c-interrupted", "fs.list", {}),
            _call("c-offload-open", "fs.read", {"path": "huge3.md"}),
        )),
        _result("t-ok", "c-ok", "fs.list", {"ok": True, "entries": ["a.md", "b.md"]}),
        _result("t-open", "c-open", "fs.read", {"ok": True, "content": "# Readme\n\nHello."}),
        _result("t-failed", "c-failed", "fs.read", {"ok": False, "error": {"code": "E_NOT_FOUND"}}, part_type="error"),
        _result("t-big", "c-big", "fs.read", big),
        _result("t-big-full", "c-big-full", "fs.read", big),
        _result("t-offload", "c-offload", "fs.read", {"ok": True, "content": "start"}, full_output_bytes=3_500_000),
        _result("t-offload-full", "c-offload-full", "fs.read", {"ok": True, "content": "start"}, full_output_bytes=60_000),
        _result("t-offload-open", "c-offload-open", "fs.read", {"ok": True, "content": "start"}, full_output_bytes=900),
        _result("t-interrupted", "c-interrupted", "fs.list", {"ok": False, "error": {"code": "TOOL_INTERRUPTED"}},
                part_type="error", synthetic=True),
        _msg("a-tasks", "assistant", "", tool_calls=(
            _call("k-none", "task", {"description": "look around", "prompt": "Look.", "subagent_type": "explore"}),
            _call("k-running", "task", {"description": "scan", "prompt": "Scan.", "subagent_type": "explore"}),
            _call("k-background", "task", {"description": "long job", "prompt": "Go.", "subagent_type": "explore"}),
            _call("k-done", "task", {"description": "summarise", "prompt": "Sum.", "subagent_type": "explore"}),
            _call("k-failed", "task", {"description": "break", "prompt": "Fail.", "subagent_type": "explore"}),
        )),
        _result("r-done", "k-done", "task", {"ok": True, "summary": "done"}),
        _result("r-failed", "k-failed", "task", {"ok": False}, part_type="error"),
        _msg("a-ask", "assistant", "", tool_calls=(
            _call("q-waiting", "ui.ask_user", {"type": "confirmation", "title": "Go on?"}),
            _call("q-answered", "ui.ask_user", {"type": "confirmation", "title": "Sure?"}),
            _call("q-unanswered", "ui.ask_user", {"type": "text", "title": ""}),
            _call("q-stopped", "ui.ask_user", {"type": "confirmation", "title": "Stop?"}),
            _call("q-editor", "ui.ask_user", {"type": "confirmation", "title": "Edit?"}),
        )),
        _result("s-answered", "q-answered", "ui.ask_user", {"ok": True, "response": {"confirmed": True}}),
        _result("s-unanswered", "q-unanswered", "ui.ask_user", {"ok": True}),
        _result("s-stopped", "q-stopped", "ui.ask_user", {"ok": False, "error": {"code": "TOOL_INTERRUPTED"}},
                part_type="error", synthetic=True),
        _msg("n-summary", "user", "The earlier conversation, summarised:\n\n- a\n- **b**", is_summary=True),
        _msg("n-summary-open", "user", "Summary again:\n\n" + LONG, is_summary=True),
        _msg("n-subagent", "user", "Background subagent finished.\n- description: index the docs", synthetic=True,
             subagent=SubagentInfo("s-bg", "explore", "completed", summary="Indexed " + LONG)),
        _msg("n-subagent-failed", "user", "Background subagent failed.", synthetic=True,
             subagent=SubagentInfo("s-bg2", "general", "failed")),
        _msg("a-error-last", "assistant", "Half an answer", part_type="error",
             error=frozen_json({"code": "LLM_HTTP_ERROR", "message": "The connection dropped. " + LONG, "partialText": "Half **an** answer"})),
    )
    subagents = (
        _info("s-running", "k-running", "running", description="scan the tree"),
        _info("s-background", "k-background", "running", background=True),
        _info("s-done", "k-done", "completed", summary="It went well. " + LONG),
        _info("s-failed", "k-failed", "failed", summary="It broke: no access."),
    )
    expanded = ("tool:c-open", "tool:c-failed", "tool:c-big", "tool:c-big-full", "tool:c-offload", "tool:c-offload-full",
                "tool:c-offload-open", "tool:k-done", "a-reasoning-open", "n-summary-open")
    return LoadedConversation("proj", CONVERSATION, messages, subagents=subagents), expanded, ("tool:c-ok", "a-calls")


def streams() -> tuple[LoadedConversation, ...]:
    """Conversations whose last row is an answer streaming in: with text, still thinking, nothing yet."""
    asked = (_msg("s-user", "user", "go"),)
    return (
        LoadedConversation("proj", CONVERSATION, asked, streaming=True, streaming_text=MARKDOWN[:40]),
        LoadedConversation("proj", CONVERSATION, asked, streaming=True, streaming_reasoning="Let me think"),
        LoadedConversation("proj", CONVERSATION, asked, streaming=True),
    )


def build(qapp: QApplication) -> tuple[TimelineView, TimelineModel]:
    """A view showing the gallery, with its expanded parts and an open ask-user form."""
    loaded, expanded, _hover = history()
    model = TimelineModel()
    model.load(loaded)
    view = _view(model)
    state = view.view_state
    for key in expanded:
        (state.expanded_tools if key.startswith("tool:") else state.expanded_reasoning).add(key)
    model.set_widget_request("q-editor", "req-1")
    model.tool_started(ToolCallRef("c-pending", "fs.write", "{}"))
    return view, model


def _view(model: TimelineModel) -> TimelineView:
    view = TimelineView()
    view.timeline_delegate.set_colors(TimelineColors.of_theme("light"))
    view.set_timeline(model)
    view.resize(WIDTHS[0], 400)
    view.show()
    return view


def rows(model: TimelineModel) -> Iterator[tuple[str, QModelIndex]]:
    for top in model.iter_top():
        yield str(top.data(TimelineRole.KEY)), top
        for row in range(model.rowCount(top)):
            child = model.index(row, 0, top)
            yield str(child.data(TimelineRole.KEY)), child


def option_for(view: TimelineView, width: int, height: int = 0) -> QStyleOptionViewItem:
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    option.rect = QRect(0, 0, width, height)
    return option


def set_width(qapp: QApplication, view: TimelineView, width: int) -> None:
    """Resize the view so that its rows are laid out ``width`` wide."""
    view.resize(width + (view.width() - view.row_width()), 400)
    qapp.processEvents()
    assert view.row_width() == width, (view.row_width(), width)


def render(view: TimelineView, index: QModelIndex, width: int, hover: str = "", *, row_hover: bool = False) -> QImage:
    delegate = view.timeline_delegate
    height = delegate.sizeHint(option_for(view, width), index).height()
    image = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(QColor("#ffffff"))
    delegate.hover = (str(index.data(TimelineRole.KEY)), hover) if hover else None
    delegate.hover_row = str(index.data(TimelineRole.KEY)) if row_hover or hover else None
    painter = QPainter(image)
    delegate.paint(painter, option_for(view, width, height), index)
    painter.end()
    delegate.hover = delegate.hover_row = None
    return image


def images(qapp: QApplication) -> Iterator[tuple[str, QImage]]:
    """Every gallery row at every width (and a few hovered), as ``(name, image)``."""
    view, model = build(qapp)
    try:
        for width in WIDTHS:
            set_width(qapp, view, width)
            for busy in (False, True):
                view.view_state.busy = busy
                for key, index in rows(model):
                    if busy and key != "a-error-last":
                        continue
                    yield f"{width}-{key}{'-busy' if busy else ''}", render(view, index, width)
            view.view_state.busy = False
            for key, hover in (("tool:c-ok", "toggle_tool"), ("a-error-last", "retry"), ("a-error-last", "continue"),
                               ("tool:k-done", "open_subagent"), ("a-reasoning", "toggle_reasoning")):
                yield f"{width}-{key}-hover-{hover}", render(view, model.index_of_key(key), width, hover)
            # A message's hover actions (issue 18 item 12): Copy, Edit on the user's; drawn on the row under the mouse.
            for key in ("u-short", "u-long", "a-long"):
                yield f"{width}-{key}-hover-row", render(view, model.index_of_key(key), width, row_hover=True)
            yield f"{width}-u-short-hover-edit_message", render(view, model.index_of_key("u-short"), width, "edit_message")
            view.view_state.read_only = True
            yield f"{width}-tool:c-offload-open-read-only", render(view, model.index_of_key("tool:c-offload-open"), width)
            view.view_state.read_only = False
    finally:
        view.close()
        view.deleteLater()
    for number, loaded in enumerate(streams()):
        view = _view(TimelineModel())
        scene = view.model()
        assert isinstance(scene, TimelineModel)
        scene.load(loaded)
        try:
            for width in WIDTHS:
                set_width(qapp, view, width)
                yield f"{width}-stream-{number}", render(view, scene.index(scene.rowCount() - 1, 0), width)
        finally:
            view.close()
            view.deleteLater()


def digest(image: QImage) -> str:
    image = image.convertToFormat(QImage.Format.Format_ARGB32)
    return f"{image.width()}x{image.height()}:" + hashlib.sha256(bytes(image.constBits())).hexdigest()[:16]


def environment() -> dict[str, str]:
    """What else decides the pixels: the same gallery drawn with other fonts or another Qt differs."""
    font = QGuiApplication.font()
    return {"qt": qVersion(), "platform": QGuiApplication.platformName(), "font": font.key(), "family": QFontInfo(font).family(),
            "mono": QFontInfo(mono_font(font)).family(), "emoji": robot_glyph(font)}


def main(argv: list[str]) -> int:
    qapp = QApplication.instance() or QApplication(argv[:1])
    assert isinstance(qapp, QApplication)
    if argv[1:2] == ["--compare"]:
        a, b = Path(argv[2]), Path(argv[3])
        differ = [p.name for p in sorted(a.glob("*.png")) if QImage(str(p)) != QImage(str(b / p.name))]
        missing = sorted({p.name for p in a.glob("*.png")} ^ {p.name for p in b.glob("*.png")})
        print(f"{len(differ)} differ: {differ}\n{len(missing)} only in one: {missing}")
        return 1 if differ or missing else 0
    if argv[1:2] == ["--digests"]:
        found = {name: digest(image) for name, image in images(qapp)}
        Path(argv[2]).write_text(json.dumps({"environment": environment(), "digests": found}, indent=1, sort_keys=True) + "\n")
        return 0
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, image in images(qapp):
        image.save(str(out / f"{name.replace(':', '_')}.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
