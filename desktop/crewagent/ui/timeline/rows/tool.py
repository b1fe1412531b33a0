"""A tool part: one line "🔧 name · status · 2 ms" that opens onto its arguments and result (a Task part: its subagent)."""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QFontMetricsF, QImage

from crewagent.core.mcp.manager import split_tool_name
from crewagent.core.mcp.results import image_paths
from crewagent.core.tools.results import readable
from crewagent.ui.core_texts import translate_core
from crewagent.ui.timeline.canvas import Canvas, Fonts, Frame, Text, TextSizer, height_of
from crewagent.ui.timeline.labels import (
    duration_label,
    json_object,
    pretty_json,
    robot_glyph,
    size_label,
    state_label,
    subagent_status_label,
    translate,
    wrench_glyph,
)
from crewagent.ui.timeline.metrics import METRICS
from crewagent.ui.timeline.model import PENDING, TASK_TOOL, TimelineRole
from crewagent.ui.timeline.rows import task
from crewagent.ui.timeline.rows.base import Index, RowContext, RowPainter
from crewagent.ui.timeline.rows.task import TaskGeometry
from crewagent.worker.tool_images import Problem, ToolImage
from crewagent.worker.turn_values import SubagentInfo

#: Characters of a tool result shown expanded (the rest: "… more", and "Open full output" opens the viewer).
MAX_RESULT_CHARS = 20_000
# An MCP result's image is shown at most this large (its thumbnail scaled down to fit), then a gap.
IMAGE_MAX_WIDTH, IMAGE_MAX_HEIGHT, IMAGE_GAP = 240.0, 180.0, 6.0


def _translated_error(result: str) -> str:
    """A failed call's error message in the UI language; empty when there is none or it reads the same."""
    if '"ok": false' not in result[:40] or len(result) > MAX_RESULT_CHARS:
        return ""
    problem = json_object(result).get("error")
    message = problem.get("message") if isinstance(problem, dict) else None
    if not isinstance(message, str):
        return ""
    translated = translate_core(message)
    return translated if translated != message else ""


@dataclass(frozen=True)
class ToolFacts:
    name: str = "tool"
    state: str = PENDING
    expanded: bool = False
    subagent: SubagentInfo | None = None
    is_task: bool = False
    #: A Task part's subagent type and description (from its subagent, else from its arguments).
    task_kind: str = ""
    task_description: str = ""
    #: Read only when the part is expanded (a tool's arguments may be megabytes).
    arguments: str = ""
    result: str = ""
    #: A running command's output so far (expanded parts only; "" once the result is in).
    live: str = ""
    #: Bytes of an offloaded result (None: the result is stored whole).
    offloaded: int | None = None
    read_only: bool = False
    duration_ms: float | None = None
    synthetic: bool = False
    # The ``@state/...`` images an MCP result names (expanded parts only), and their thumbnails
    # once the worker has read them (None: not yet).
    images: tuple[str, ...] = ()
    thumbnails: tuple[ToolImage, ...] | None = None


@dataclass(frozen=True)
class ImageSlot:
    """One image of a result where it is drawn: its thumbnail, or a one-line note (loading, or why not)."""

    rect: QRectF
    number: int
    image: QImage | None = None
    note: str = ""
    clickable: bool = False


@dataclass(frozen=True)
class Section:
    label: QRectF
    text: Text
    y: float


@dataclass(frozen=True)
class ToolGeometry:
    facts: ToolFacts
    card: QRectF
    header: QRectF
    height: float
    task: TaskGeometry | None = None
    #: Expanded only: the line under the header, the Arguments and Result sections, the row with
    #: "Open full output" (an offloaded result, or one cut at MAX_RESULT_CHARS).
    separator: QRectF | None = None
    sections: list[tuple[str, Section]] = field(default_factory=list)
    offload_y: float | None = None
    images: list[ImageSlot] = field(default_factory=list)


def _image_note(item: ToolImage) -> str:
    text = {
        Problem.OUTSIDE: translate("TimelineDelegate", "{path}: not in the state folder, not shown"),
        Problem.MISSING: translate("TimelineDelegate", "{path}: the image file is missing"),
        Problem.TOO_LARGE: translate("TimelineDelegate", "{path}: too large to preview; click to open it"),
        Problem.DAMAGED: translate("TimelineDelegate", "{path}: the image cannot be decoded"),
    }.get(item.problem or Problem.DAMAGED, "{path}")
    return text.format(path=item.shown)


def measure_images(facts: ToolFacts, left: float, y: float, width: float, fonts: Fonts) -> list[ImageSlot]:
    """Where an expanded MCP part's images go, top to bottom from ``y`` (empty: it names none)."""
    if not facts.expanded or not facts.images:
        return []
    line = QFontMetricsF(fonts.small).height() + 4
    if facts.thumbnails is None:
        return [ImageSlot(QRectF(left, y, width, line), 0, note=translate("TimelineDelegate", "Loading image…"))]
    slots = []
    for number, item in enumerate(facts.thumbnails):
        image = item.thumbnail
        if image is None or image.isNull() or image.width() <= 0 or image.height() <= 0:
            slots.append(ImageSlot(QRectF(left, y, width, line), number, note=_image_note(item), clickable=bool(item.path) and item.problem == Problem.TOO_LARGE))
            y += line + IMAGE_GAP
            continue
        scale = min(1.0, min(IMAGE_MAX_WIDTH, width) / image.width(), IMAGE_MAX_HEIGHT / image.height())
        rect = QRectF(left, y, max(1.0, image.width() * scale), max(1.0, image.height() * scale))
        slots.append(ImageSlot(rect, number, image=image))
        y += rect.height() + IMAGE_GAP
    return slots


def tool_label(name: str) -> tuple[str, str]:
    """The header's label and the kind after it: an MCP tool (``mcp__time__get_current_time``) shows
    as its tool and its server (``get_current_time · MCP time``), any other tool by its name."""
    parts = split_tool_name(name)
    return (parts[1], f"MCP {parts[0]}") if parts is not None else (name, "")


class ToolPainter(RowPainter[ToolFacts, ToolGeometry]):
    def facts(self, index: Index, context: RowContext) -> ToolFacts:
        key, state = context.key, context.state
        name = str(index.data(TimelineRole.TOOL_NAME) or "tool")
        subagent: SubagentInfo | None = index.data(TimelineRole.SUBAGENT)
        is_task = subagent is not None or name == TASK_TOOL
        expanded = key in state.expanded_tools
        # Only a Task part's arguments are read: another tool's may be megabytes (an fs.write of a
        # 20 MB file), and parsing them here on every measure and paint froze the GUI thread.
        arguments = str(index.data(TimelineRole.TOOL_ARGUMENTS) or "") if expanded or is_task else ""
        parsed = json_object(arguments) if is_task else {}
        offloaded = index.data(TimelineRole.FULL_OUTPUT_BYTES)
        label, server = tool_label(name)
        result = str(index.data(TimelineRole.TOOL_RESULT) or "") if expanded else ""
        images = image_paths(result) if server and result else ()
        return ToolFacts(
            name=label,
            state=str(index.data(TimelineRole.TOOL_STATE) or PENDING),
            expanded=expanded,
            subagent=subagent,
            is_task=is_task,
            task_kind=(subagent.subagent_type if subagent is not None else str(parsed.get("subagent_type") or "")) if is_task else server,
            task_description=((subagent.description if subagent is not None else "") or str(parsed.get("description") or "")),
            arguments=arguments if expanded else "",
            result=result,
            live=str(index.data(TimelineRole.TOOL_LIVE_OUTPUT) or "") if expanded else "",
            offloaded=int(offloaded) if offloaded is not None else None,
            read_only=state.read_only,
            duration_ms=index.data(TimelineRole.TOOL_DURATION),
            synthetic=bool(index.data(TimelineRole.SYNTHETIC)),
            images=images,
            thumbnails=state.images.get(key) if images else None,
        )

    def estimated(self, text: str, has_reasoning: bool) -> ToolFacts:
        return ToolFacts()

    def measure(self, facts: ToolFacts, frame: Frame, fonts: Fonts, sizer: TextSizer) -> ToolGeometry:
        t, pad = METRICS.tool, METRICS.controls.card_pad
        left, width = frame.text_left, frame.text_width
        top = frame.top + t.top
        header = QRectF(left, top, width, t.header)
        texts: list[tuple[str, Text]] = []
        cut = False
        if facts.expanded:
            inner_w = width - 2 * pad
            arguments = pretty_json(facts.arguments)
            if arguments:
                texts.append((translate("TimelineDelegate", "Arguments"), sizer("args", arguments, inner_w, fonts.mono, plain=True)))
            if facts.result:
                problem = _translated_error(facts.result)
                if problem:
                    texts.append((translate("TimelineDelegate", "Error"), sizer("error", problem, inner_w, fonts.base, plain=True)))
                # Multi-line text fields (a command's stdout, an fs.read's content) as text under their
                # name: inside JSON they are one line of "\n" escapes, and laying out one 20,000-character
                # line stalled the GUI thread for a third of a second.
                shown = readable(facts.result)
                if len(shown) > MAX_RESULT_CHARS:
                    cut = True
                    more = len(shown) - MAX_RESULT_CHARS
                    shown = shown[:MAX_RESULT_CHARS] + "\n" + translate("TimelineDelegate", "… {n} more characters").format(n=more)
                texts.append((translate("TimelineDelegate", "Result"), sizer("result", shown, inner_w, fonts.mono, plain=True)))
            elif facts.live:
                texts.append((translate("TimelineDelegate", "Output"), sizer("live", facts.live, inner_w, fonts.mono, plain=True)))
        body = 0.0
        for _label, laid in texts:
            body += t.section_label_advance + height_of(laid) + t.section_gap
        images = measure_images(facts, left + pad, 0.0, width - 2 * pad, fonts)
        images_h = images[-1].rect.bottom() + t.section_gap if images else 0.0
        body += images_h
        viewer_row = facts.offloaded is not None or (cut and not facts.read_only)
        if facts.expanded and viewer_row:
            body += METRICS.controls.button_height + t.offload_gap
        y = header.bottom()
        part = task.measure(facts.subagent, facts.task_description, left, y, width, fonts, sizer) if facts.is_task else None
        task_h = part.height if part is not None else 0.0
        card = QRectF(left, top, width, t.header + task_h + (body + pad if facts.expanded else 0))
        if not facts.expanded:
            return ToolGeometry(facts, card, header, card.bottom() + t.bottom - frame.top, part)
        y += task_h
        separator = QRectF(left + t.rule, y, width - 2 * t.rule, t.rule)
        y += t.body_top
        sections = []
        for label, laid in texts:
            rect = QRectF(left + pad, y, width, t.section_label)
            y += t.section_label_advance
            sections.append((label, Section(rect, laid, y)))
            y += height_of(laid) + t.section_gap
        placed = [ImageSlot(slot.rect.translated(0, y), slot.number, slot.image, slot.note, slot.clickable) for slot in images]
        y += images_h
        offload_y = y if viewer_row else None
        return ToolGeometry(facts, card, header, card.bottom() + t.bottom - frame.top, part, separator, sections, offload_y, placed)

    def draw(self, geometry: ToolGeometry, canvas: Canvas) -> None:
        facts, header = geometry.facts, geometry.header
        hovered = canvas.hovered("toggle_tool")
        canvas.card(geometry.card, canvas.c.card_hover if hovered and not facts.expanded else canvas.c.card, canvas.c.card_border, METRICS.tool.radius)
        canvas.hit("toggle_tool", header)
        self._header(geometry, canvas)
        if geometry.task is not None:
            task.draw(geometry.task, canvas)
        if geometry.separator is not None:
            canvas.fill(geometry.separator, canvas.c.card_border)
        for label, section in geometry.sections:
            canvas.text(section.label, label.upper(), canvas.fonts.small_bold, canvas.c.muted)
            canvas.place(section.text, section.label.left(), section.y, canvas.c.text)
        self._images(geometry, canvas)
        if geometry.offload_y is not None:
            self._offload(geometry, geometry.offload_y, canvas)

    @staticmethod
    def _header(geometry: ToolGeometry, canvas: Canvas) -> None:
        t, facts, header, fonts, c = METRICS.tool, geometry.facts, geometry.header, canvas.fonts, canvas.c
        left, y, width = header.left(), header.top(), header.width()
        color = c.states.get(facts.state, c.muted)
        status = state_label(facts.state)
        if facts.subagent is not None:
            color = c.subagent_states.get(facts.subagent.status, c.muted)
            status = subagent_status_label(facts.subagent.status)
        x = left + t.dot_x
        canvas.dot(QPointF(x + t.dot_radius, header.center().y()), t.dot_radius, color)
        x += t.dot_advance
        icon = robot_glyph(fonts.base) if facts.is_task else wrench_glyph(fonts.base)
        x += canvas.text(QRectF(x, y, t.icon_width, t.header), icon, fonts.base, c.text) + t.icon_gap
        label = translate("TimelineDelegate", "Subagent") if facts.is_task else facts.name
        x += canvas.text(QRectF(x, y, width * t.label_ratio, t.header), label, fonts.small_bold, c.text) + t.label_gap
        if facts.task_kind:
            x += canvas.text(QRectF(x, y, t.separator_width, t.header), "·", fonts.small, c.muted) + t.separator_gap
            x += canvas.text(QRectF(x, y, width * t.kind_ratio, t.header), facts.task_kind, fonts.small, c.text) + t.kind_gap
        details = [status]
        duration = duration_label(facts.duration_ms)
        if duration:
            details.append(duration)
        if facts.offloaded is not None:
            details.append(size_label(facts.offloaded))
        x += canvas.text(QRectF(x, y, t.separator_width, t.header), "·", fonts.small, c.muted) + t.separator_gap
        x += canvas.text(QRectF(x, y, t.status_width, t.header), details[0], fonts.small_bold, color) + t.status_gap
        if len(details) > 1:
            canvas.text(QRectF(x, y, width - (x - left) - t.details_reserve, t.header), "· " + " · ".join(details[1:]), fonts.small, c.muted)
        if facts.synthetic:
            canvas.pill(left + width - t.synthetic_from_right, header.center().y(), translate("TimelineDelegate", "Synthetic"), c.badges["synthetic"])
        chevron = "▾" if facts.expanded else "▸"
        canvas.text(QRectF(left + width - t.chevron_from_right, y, t.chevron_width, t.header), chevron, fonts.base, c.muted)

    @staticmethod
    def _images(geometry: ToolGeometry, canvas: Canvas) -> None:
        facts = geometry.facts
        if facts.images and facts.thumbnails is None:
            canvas.layout.wanted_images = facts.images  # the delegate asks the worker for them
        for slot in geometry.images:
            name = f"open_image:{slot.number}"
            if slot.image is not None:
                canvas.image(name, slot.rect, slot.image)
            elif slot.clickable:
                canvas.link(name, slot.rect, slot.note, canvas.c.accent)
            else:
                canvas.text(slot.rect, slot.note, canvas.fonts.small, canvas.c.muted)

    @staticmethod
    def _offload(geometry: ToolGeometry, y: float, canvas: Canvas) -> None:
        facts, header, fonts, c = geometry.facts, geometry.header, canvas.fonts, canvas.c
        x, width, height = header.left() + METRICS.controls.card_pad, header.width(), METRICS.controls.button_height
        if not facts.read_only:  # a subagent's outputs are read from its own log, not here
            # Opens the full-output viewer (a window of its own): the row keeps its preview.
            x = canvas.button("open_output", x, y, translate("TimelineDelegate", "Open full output"))
        if facts.offloaded is not None:
            size = size_label(facts.offloaded)
            canvas.text(QRectF(x, y, width, height), translate("TimelineDelegate", "The result was {size}; above is its beginning.").format(size=size), fonts.small, c.muted)
