"""TimelineDelegate: draws and measures timeline rows (bubbles, tool parts, errors) and handles clicks.

Geometry is computed in one place (:meth:`TimelineDelegate._layout`) for painting, sizing and hit
testing alike, so what is clickable is exactly what is drawn. Sizes are cached per row version,
width and view state; rows far from the end are estimated until painted (see ``documents``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from PySide6.QtCore import (
    QAbstractItemModel,
    QCoreApplication,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QPointF,
    QRectF,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QFontMetricsF,
    QGuiApplication,
    QMouseEvent,
    QPainter,
    QPalette,
    QPen,
)
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem, QWidget

from crewagent.ui.ask_user import AskUserForm, answer_lines
from crewagent.ui.markdown import COPY_SCHEME
from crewagent.ui.timeline.documents import DocumentCache, LaidOut, estimate_height, font_metrics, mono_font
from crewagent.ui.timeline.model import (
    ASK_USER_TOOL,
    FAILED,
    INTERRUPTED,
    OK,
    PENDING,
    RUNNING,
    SUBAGENT_NOTICE,
    TASK_TOOL,
    TimelineRole,
)
from crewagent.ui.timeline.state import TimelineViewState
from crewagent.ui.theme import TOKENS, ThemeName
from crewagent.worker.turn_values import SubagentInfo

_Index = QModelIndex | QPersistentModelIndex

MAX_COLUMN = 860
SIDE = 20
AVATAR = 26
AVATAR_GAP = 12
BUBBLE_PAD_X, BUBBLE_PAD_Y = 14, 10
CARD_PAD = 12
TOOL_HEADER = 34
BUTTON_H = 28
#: Rows within this many of the end are always measured exactly (the view opens there): enough
#: for a last page of short messages. Each costs a Markdown layout (~1 ms, more while the worker
#: competes for the GIL); a row above them is estimated until it is painted.
EXACT_TAIL = 16
#: Characters of a tool result shown expanded (the rest: "Open full output" or "… more").
MAX_RESULT_CHARS = 20_000
#: Characters of a subagent's summary shown in its Task part (the whole answer is in its tab).
MAX_SUMMARY_CHARS = 280


#: Labels are translated as rows are painted (a language switch only repaints); lupdate finds
#: ``translate("TimelineDelegate", "...")`` calls by this name.
translate = QCoreApplication.translate


@dataclass(frozen=True)
class TimelineColors:
    """What the delegate paints with, taken from a theme's token table (``ui/theme.py``)."""

    user_bubble: QColor
    user_text: QColor
    text: QColor
    muted: QColor
    accent: QColor
    accent_text: QColor
    card: QColor
    card_hover: QColor
    card_border: QColor
    button: QColor
    button_hover: QColor
    button_border: QColor
    error_fill: QColor
    error_border: QColor
    error_text: QColor
    ask_fill: QColor
    ask_border: QColor
    ask_text: QColor
    notice_fill: QColor
    notice_border: QColor
    notice_text: QColor
    states: Mapping[str, QColor]
    #: A subagent's status (running, completed, failed, cancelled) in its Task part and notice.
    subagent_states: Mapping[str, QColor]
    badges: Mapping[str, QColor]
    #: Code blocks in Markdown (``markdown.render``): ``light`` or ``dark``.
    code_theme: str

    @classmethod
    def from_tokens(cls, tokens: Mapping[str, str], code_theme: str = "light") -> TimelineColors:
        def c(name: str) -> QColor:
            return QColor(tokens[name])

        return cls(
            user_bubble=c("user_bubble"),
            user_text=c("user_bubble_text"),
            text=c("text"),
            muted=c("text_muted"),
            accent=c("accent"),
            accent_text=c("accent_text"),
            card=c("card"),
            card_hover=c("card_hover"),
            card_border=c("border"),
            button=c("surface"),
            button_hover=c("hover"),
            button_border=c("border_strong"),
            error_fill=c("error_bg"),
            error_border=c("error_border"),
            error_text=c("error_text"),
            ask_fill=c("ask_bg"),
            ask_border=c("ask_border"),
            ask_text=c("ask_text"),
            notice_fill=c("info_bg"),
            notice_border=c("info_border"),
            notice_text=c("info_text"),
            subagent_states={"running": c("running"), "completed": c("ok"), "failed": c("danger"), "cancelled": c("warning")},
            states={PENDING: c("text_muted"), RUNNING: c("running"), OK: c("ok"), FAILED: c("danger"), INTERRUPTED: c("warning")},
            badges={"interrupted": c("interrupted"), "synthetic": c("synthetic"), "error": c("danger")},
            code_theme=code_theme,
        )

    @classmethod
    def of_theme(cls, name: ThemeName) -> TimelineColors:
        return cls.from_tokens(TOKENS[name], name)


def state_label(state: str) -> str:
    return {
        PENDING: translate("TimelineDelegate", "waiting"),
        RUNNING: translate("TimelineDelegate", "running"),
        OK: translate("TimelineDelegate", "ok"),
        FAILED: translate("TimelineDelegate", "failed"),
        INTERRUPTED: translate("TimelineDelegate", "interrupted"),
    }.get(state, state)


def subagent_status_label(status: str) -> str:
    return {
        "running": translate("TimelineDelegate", "running"),
        "completed": translate("TimelineDelegate", "completed"),
        "failed": translate("TimelineDelegate", "failed"),
        "cancelled": translate("TimelineDelegate", "cancelled"),
    }.get(status, status)


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


@dataclass
class _Hit:
    name: str
    rect: QRectF


@dataclass
class _Doc:
    laid: LaidOut
    origin: QPointF


@dataclass
class _Layout:
    height: float = 0.0
    exact: bool = True
    hits: list[_Hit] = field(default_factory=list)
    docs: list[_Doc] = field(default_factory=list)
    editor: QRectF | None = None


class _Pass:
    """One run over a row's geometry: measuring (no painter) or painting."""

    def __init__(self, delegate: TimelineDelegate, option: QStyleOptionViewItem, index: _Index, painter: QPainter | None, exact: bool):
        self.d = delegate
        self.index = index
        self.painter = painter
        self.exact = exact
        self.font = QFont(option.font)
        self.small = QFont(option.font)
        self.small.setPointSizeF(max(7.0, option.font.pointSizeF() - 1.0))
        self.bold = QFont(option.font)
        self.bold.setWeight(QFont.Weight.DemiBold)
        self.small_bold = QFont(self.small)
        self.small_bold.setWeight(QFont.Weight.DemiBold)
        self.mono = mono_font(option.font)
        self.top = float(option.rect.top())
        width = float(delegate.row_width(option))
        column = min(width - 2 * SIDE, MAX_COLUMN)
        self.left = float(option.rect.left()) + max(SIDE, (width - column) / 2)
        self.width = max(200.0, column)
        self.text_left = self.left + AVATAR + AVATAR_GAP
        self.text_width = self.width - AVATAR - AVATAR_GAP
        self.layout = _Layout(exact=exact)
        self.key = str(index.data(TimelineRole.KEY))
        self.version = int(index.data(TimelineRole.VERSION) or 0)
        self.hover = delegate.hover
        self.c = delegate.colors

    # -- documents -------------------------------------------------------------------------------

    def doc(self, part: str, text: str, width: float, font: QFont, *, plain: bool = False, growing: bool = False) -> LaidOut | float:
        """A laid-out document, or (estimating) just its estimated height; ``growing``: still streaming."""
        if not self.exact:
            return estimate_height(text, width, font, code=plain)
        # Keyed by the text itself, not by the row's version: the end of a stream and the stored
        # message that replaces it change the row, not its text, and must not lay it out again.
        key = (part,)
        cache = self.d.documents
        return cache.plain(key, text, width, font) if plain else cache.markdown(key, text, width, font, growing=growing)

    def place(self, laid: LaidOut | float, x: float, y: float, color: QColor) -> float:
        if isinstance(laid, float):
            return laid
        self.layout.docs.append(_Doc(laid, QPointF(x, y)))
        if self.painter is not None:
            painter = self.painter
            painter.save()
            painter.translate(x, y)
            context = QAbstractTextDocumentLayout.PaintContext()
            context.palette.setColor(QPalette.ColorRole.Text, color)
            context.clip = QRectF(0, 0, laid.document.textWidth(), laid.height)
            laid.document.documentLayout().draw(painter, context)
            painter.restore()
        return laid.height

    # -- primitives --------------------------------------------------------------------------------

    def card(self, rect: QRectF, fill: QColor, border: QColor, radius: float = 10.0) -> None:
        if self.painter is None:
            return
        self.painter.setPen(QPen(border, 1.0))
        self.painter.setBrush(fill)
        self.painter.drawRoundedRect(rect.adjusted(0.5, 0.5, -0.5, -0.5), radius, radius)

    def text(self, rect: QRectF, text: str, font: QFont, color: QColor, align: Qt.AlignmentFlag = Qt.AlignmentFlag.AlignLeft) -> float:
        """One line of text, elided to fit; returns its width."""
        metrics = QFontMetricsF(font)
        shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, rect.width())
        if self.painter is not None:
            self.painter.setFont(font)
            self.painter.setPen(color)
            self.painter.drawText(rect, int(align | Qt.AlignmentFlag.AlignVCenter), shown)
        return metrics.horizontalAdvance(shown)

    def pill(self, x: float, center_y: float, text: str, color: QColor) -> float:
        metrics = QFontMetricsF(self.small)
        rect = QRectF(x, center_y - metrics.height() / 2 - 1, metrics.horizontalAdvance(text) + 12, metrics.height() + 2)
        if self.painter is not None:
            fill = QColor(color)
            fill.setAlpha(30)
            self.painter.setPen(Qt.PenStyle.NoPen)
            self.painter.setBrush(fill)
            self.painter.drawRoundedRect(rect, rect.height() / 2, rect.height() / 2)
            self.painter.setFont(self.small)
            self.painter.setPen(color)
            self.painter.drawText(rect, int(Qt.AlignmentFlag.AlignCenter), text)
        return rect.right() + 6

    def button(self, name: str, x: float, y: float, label: str, *, primary: bool = False) -> float:
        metrics = QFontMetricsF(self.small_bold)
        rect = QRectF(x, y, metrics.horizontalAdvance(label) + 24, BUTTON_H)
        self.layout.hits.append(_Hit(name, rect))
        if self.painter is not None:
            hovered = self.hover == (self.key, name)
            if primary:
                fill = self.c.accent.darker(115) if hovered else self.c.accent
                self.card(rect, fill, fill, 7)
                color = self.c.accent_text
            else:
                self.card(rect, self.c.button_hover if hovered else self.c.button, self.c.button_border, 7)
                color = self.c.text
            self.painter.setFont(self.small_bold)
            self.painter.setPen(color)
            self.painter.drawText(rect, int(Qt.AlignmentFlag.AlignCenter), label)
        return rect.right() + 8

    def link(self, name: str, rect: QRectF, label: str, color: QColor) -> None:
        self.layout.hits.append(_Hit(name, rect))
        font = QFont(self.small_bold)
        font.setUnderline(self.hover == (self.key, name))
        self.text(rect, label, font, color)

    def avatar(self, y: float) -> None:
        if self.painter is None:
            return
        rect = QRectF(self.left, y, AVATAR, AVATAR)
        self.painter.setPen(Qt.PenStyle.NoPen)
        self.painter.setBrush(self.c.accent)
        self.painter.drawEllipse(rect)
        self.painter.setPen(self.c.accent_text)
        self.painter.setFont(self.small_bold)
        self.painter.drawText(rect, int(Qt.AlignmentFlag.AlignCenter), "AI")


class TimelineDelegate(QStyledItemDelegate):
    """Paints the rows of a :class:`~crewagent.ui.timeline.model.TimelineModel`."""

    #: ``(key)``: the user clicked a tool part's header.
    tool_toggled = Signal(str)

    #: ``(key)``: the user clicked "Thought for N s" (or a notice's header).
    reasoning_toggled = Signal(str)

    #: ``(action, index)``: a button of a row: "retry", "continue" or "open_output".
    action_triggered = Signal(str, QPersistentModelIndex)

    #: ``(href)``: a link in a message was clicked (safe schemes only reach here).
    link_activated = Signal(str)

    #: ``(code)``: a code block's Copy link was clicked; the text is on the clipboard.
    code_copied = Signal(str)

    #: A row's exact height differs from the estimate it was laid out with: measure it again.
    height_changed = Signal(QPersistentModelIndex)

    #: ``(request_id, call_id, payload)``: an ask-user widget was submitted (payload None: dismissed).
    widget_answered = Signal(str, str, object)

    def __init__(self, state: TimelineViewState, row_width: Callable[[], int], parent: QWidget | None = None):
        super().__init__(parent)
        self.state = state
        self._row_width = row_width
        self.colors = TimelineColors.of_theme("light")
        self.documents = DocumentCache()
        self._sizes: dict[tuple[object, ...], float] = {}
        self._metrics: tuple[float, float] | None = None
        self._exact: set[tuple[object, ...]] = set()
        self._editors: dict[str, AskUserForm] = {}
        self.hover: tuple[str, str] | None = None
        self._pending_remeasure: list[QPersistentModelIndex] = []
        self._remeasure_timer = QTimer(self)
        self._remeasure_timer.setSingleShot(True)
        self._remeasure_timer.setInterval(0)
        self._remeasure_timer.timeout.connect(self._flush_remeasure)

    def row_width(self, option: QStyleOptionViewItem | None = None) -> int:
        return max(240, self._row_width())

    def set_colors(self, colors: TimelineColors) -> None:
        """Paint with another theme's colours (code blocks are laid out again in its highlighting)."""
        if colors == self.colors:
            return
        self.colors = colors
        self.documents.code_theme = colors.code_theme
        self.documents.clear()

    def clear_caches(self) -> None:
        self.documents.clear()
        self._metrics = None
        self._sizes.clear()
        self._exact.clear()

    # -- sizing ---------------------------------------------------------------------------------

    def _size_key(self, index: _Index, width: int | None = None) -> tuple[object, ...]:
        key, version, _kind, from_end, _text, _reasoning, _special = index.data(TimelineRole.MEASURE)
        return self._key_of(key, version, from_end, self.row_width() if width is None else width)

    def _key_of(self, key: str, version: int, from_end: int, width: int) -> tuple[object, ...]:
        editor = self._editors.get(key) if self._editors else None
        editor_h = editor.sizeHint().height() if editor is not None else 0
        state = self.state
        signature = state.signature(key) if (state.expanded_tools or state.expanded_reasoning or state.full_outputs) else None
        return (key, version, width, signature, from_end == 0 and state.busy, from_end == 0, editor_h)

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        measure = index.data(TimelineRole.MEASURE)
        if measure is None:
            return QSize(0, 0)
        key, version, kind, from_end, text, has_reasoning, special = measure
        width = self.row_width()
        size_key = self._key_of(key, version, from_end, width)
        height = self._sizes.get(size_key)
        if height is None:
            exact = from_end < EXACT_TAIL or special or size_key[3] not in (None, (False, False, False))
            if exact:
                height = self._layout(option, index, None, exact=True).height
                self._exact.add(size_key)
            else:
                height = self._estimate(option, kind, text, has_reasoning, width)
            self._sizes[size_key] = height
            if len(self._sizes) > 60_000:
                self._sizes.clear()
                self._exact.clear()
        return QSize(width, max(2, round(height)))

    def _estimate(self, option: QStyleOptionViewItem, kind: str, text: str, has_reasoning: bool, width: int) -> float:
        """A row's height without building any document (mirrors the geometry of ``_layout``)."""
        if self._metrics is None:
            self._metrics = font_metrics(option.font)
        metrics = self._metrics
        column = max(200.0, min(width - 2 * SIDE, MAX_COLUMN))
        if kind == "tool":
            return 3 + TOOL_HEADER + 4
        if kind == "notice":
            return 36
        if kind == "user":
            return 12 + estimate_height(text, column * 0.78 - 2 * BUBBLE_PAD_X, metrics) + 2 * BUBBLE_PAD_Y + 6
        height = 10.0 + AVATAR + 4 + (24 if has_reasoning else 0)
        if text:
            height += estimate_height(text, column - AVATAR - AVATAR_GAP, metrics) + 4
        return height + 6

    def _layout(self, option: QStyleOptionViewItem, index: _Index, painter: QPainter | None, *, exact: bool = True) -> _Layout:
        run = _Pass(self, option, index, painter, exact)
        kind = index.data(TimelineRole.KIND)
        if kind == "user":
            height = self._user(run)
        elif kind == "tool":
            height = self._tool(run)
        elif kind == "notice":
            height = self._notice(run)
        elif kind == SUBAGENT_NOTICE:
            height = self._subagent_notice(run)
        else:
            height = self._assistant(run)
        run.layout.height = height
        return run.layout

    # -- painting -------------------------------------------------------------------------------

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        layout = self._layout(option, index, painter)
        painter.restore()
        key = self._size_key(index)
        if key not in self._exact:
            self._exact.add(key)
            if abs(self._sizes.get(key, -1) - layout.height) >= 1:
                self._sizes[key] = layout.height
                self._remeasure_later(QPersistentModelIndex(index))

    def _remeasure_later(self, index: QPersistentModelIndex) -> None:
        self._pending_remeasure.append(index)
        self._remeasure_timer.start()

    def _flush_remeasure(self) -> None:
        pending, self._pending_remeasure = self._pending_remeasure, []
        for index in pending:
            if index.isValid():
                self.height_changed.emit(index)

    # -- rows -----------------------------------------------------------------------------------

    def _user(self, run: _Pass) -> float:
        index = run.index
        y = run.top + 12
        max_bubble = run.width * 0.78
        laid = run.doc("text", str(index.data(TimelineRole.TEXT) or ""), max_bubble - 2 * BUBBLE_PAD_X, run.font)
        if isinstance(laid, float):
            text_h, text_w = laid, max_bubble - 2 * BUBBLE_PAD_X
        else:
            text_h, text_w = laid.height, min(laid.ideal_width, max_bubble - 2 * BUBBLE_PAD_X)
        bubble = QRectF(run.left + run.width - text_w - 2 * BUBBLE_PAD_X, y, text_w + 2 * BUBBLE_PAD_X, text_h + 2 * BUBBLE_PAD_Y)
        run.card(bubble, run.c.user_bubble, run.c.user_bubble, 14)
        run.place(laid, bubble.left() + BUBBLE_PAD_X, bubble.top() + BUBBLE_PAD_Y, run.c.user_text)
        return bubble.bottom() + 6 - run.top

    def _assistant(self, run: _Pass) -> float:
        index = run.index
        y = run.top + 10
        run.avatar(y)
        message = index.data(TimelineRole.MESSAGE)
        streaming = bool(index.data(TimelineRole.STREAMING))
        is_error = bool(index.data(TimelineRole.IS_ERROR))
        interrupted = bool(index.data(TimelineRole.INTERRUPTED))
        header = QRectF(run.text_left, y, run.text_width, AVATAR)
        name_w = run.text(header, translate("TimelineDelegate", "Assistant"), run.bold, run.c.text)
        x = run.text_left + name_w + 10
        if streaming:
            x = run.pill(x, header.center().y(), translate("TimelineDelegate", "streaming…"), run.c.accent)
        if interrupted:
            x = run.pill(x, header.center().y(), translate("TimelineDelegate", "Interrupted"), run.c.badges["interrupted"])
        if bool(index.data(TimelineRole.SYNTHETIC)):
            x = run.pill(x, header.center().y(), translate("TimelineDelegate", "Synthetic"), run.c.badges["synthetic"])
        y = header.bottom() + 4

        reasoning = str(index.data(TimelineRole.REASONING) or "")
        if reasoning:
            y = self._reasoning(run, reasoning, y, streaming)

        text = str(index.data(TimelineRole.TEXT) or "")
        if is_error:
            y = self._error_card(run, text, y)
        elif text:
            y += run.place(run.doc("text", text, run.text_width, run.font, growing=streaming), run.text_left, y, run.c.text) + 4
        elif streaming and not reasoning:
            run.text(QRectF(run.text_left, y, 60, 20), "● ● ●", run.small, run.c.muted)
            y += 22
        offer = not self.state.busy and not self.state.read_only
        if (is_error or interrupted) and bool(index.data(TimelineRole.IS_LAST)) and offer and not streaming:
            y += 4
            x = run.button("retry", run.text_left, y, "↻ " + translate("TimelineDelegate", "Retry"))
            run.button("continue", x, y, translate("TimelineDelegate", "Continue") + " →", primary=True)
            y += BUTTON_H + 4
        return y + 6 - run.top

    def _reasoning(self, run: _Pass, reasoning: str, y: float, streaming: bool) -> float:
        seconds = run.index.data(TimelineRole.REASONING_SECONDS)
        expanded = run.key in self.state.expanded_reasoning
        if streaming and not run.index.data(TimelineRole.TEXT):
            label = translate("TimelineDelegate", "Thinking…")
        elif isinstance(seconds, (int, float)):
            label = translate("TimelineDelegate", "Thought for {n} s").format(n=max(1, round(seconds)))
        else:
            label = translate("TimelineDelegate", "Thoughts")
        chevron = "▾" if expanded else "▸"
        rect = QRectF(run.text_left, y, QFontMetricsF(run.small_bold).horizontalAdvance(f"{label} {chevron}") + 8, 22)
        run.link("toggle_reasoning", rect, f"{label} {chevron}", run.c.muted)
        y = rect.bottom() + 2
        if expanded:
            laid = run.doc("reasoning", reasoning, run.text_width - 14, run.small, plain=False)
            height = laid if isinstance(laid, float) else laid.height
            if run.painter is not None:
                run.painter.fillRect(QRectF(run.text_left, y, 3, height), run.c.card_border)
            run.place(laid, run.text_left + 12, y, run.c.muted)
            y += height + 8
        return y

    def _error_card(self, run: _Pass, text: str, y: float) -> float:
        error = run.index.data(TimelineRole.ERROR) or {}
        code = str(error.get("code") or "ERROR")
        message = str(error.get("message") or "")
        partial = str(error.get("partialText") or "")
        if not message:
            partial, message = "", text
        # measure first, then draw the card behind what it holds
        inner_w = run.text_width - 2 * CARD_PAD
        partial_doc = run.doc("partial", partial, inner_w, run.font) if partial else None
        message_doc = run.doc("error", message, inner_w, run.small, plain=True)
        height = float(CARD_PAD + 22 + 4)
        for laid in (partial_doc, message_doc):
            if laid is not None:
                height += (laid if isinstance(laid, float) else laid.height) + 6
        height += CARD_PAD - 6
        card = QRectF(run.text_left, y, run.text_width, height)
        run.card(card, run.c.error_fill, run.c.error_border)
        inner_y = y + CARD_PAD
        title = translate("TimelineDelegate", "The model call failed") if code.startswith("LLM") else translate("TimelineDelegate", "The turn ended with an error")
        run.text(QRectF(card.left() + CARD_PAD, inner_y, inner_w, 22), f"⚠  {title} · {code}", run.small_bold, run.c.error_text)
        inner_y += 26
        if partial_doc is not None:
            inner_y += run.place(partial_doc, card.left() + CARD_PAD, inner_y, run.c.text) + 6
        run.place(message_doc, card.left() + CARD_PAD, inner_y, run.c.error_text)
        return card.bottom() + 6

    def _tool(self, run: _Pass) -> float:
        index = run.index
        if index.data(TimelineRole.TOOL_NAME) == ASK_USER_TOOL:
            return self._ask_user(run)
        y = run.top + 3
        state = str(index.data(TimelineRole.TOOL_STATE) or PENDING)
        expanded = run.key in self.state.expanded_tools
        color = run.c.states.get(state, run.c.muted)
        left, width = run.text_left, run.text_width
        name = str(index.data(TimelineRole.TOOL_NAME) or "tool")
        subagent: SubagentInfo | None = index.data(TimelineRole.SUBAGENT)
        is_task = subagent is not None or name == TASK_TOOL
        status_text = state_label(state)
        if subagent is not None:
            color = run.c.subagent_states.get(subagent.status, run.c.muted)
            status_text = subagent_status_label(subagent.status)
        # the card's height is known only after its content is measured
        sections: list[tuple[str, LaidOut | float]] = []
        offloaded = index.data(TimelineRole.FULL_OUTPUT_BYTES)
        if expanded:
            inner_w = width - 2 * CARD_PAD
            arguments = pretty_json(str(index.data(TimelineRole.TOOL_ARGUMENTS) or ""))
            if arguments:
                sections.append((translate("TimelineDelegate", "Arguments"), run.doc("args", arguments, inner_w, run.mono, plain=True)))
            result = self.state.full_outputs.get(run.key) or str(index.data(TimelineRole.TOOL_RESULT) or "")
            if result:
                shown = pretty_json(result)
                if len(shown) > MAX_RESULT_CHARS:
                    more = len(shown) - MAX_RESULT_CHARS
                    shown = shown[:MAX_RESULT_CHARS] + "\n" + translate("TimelineDelegate", "… {n} more characters").format(n=more)
                part = "full" if run.key in self.state.full_outputs else "result"
                sections.append((translate("TimelineDelegate", "Result"), run.doc(part, shown, inner_w, run.mono, plain=True)))
        body = 0.0
        for _label, laid in sections:
            body += 20 + (laid if isinstance(laid, float) else laid.height) + 8
        if expanded and offloaded is not None:
            body += BUTTON_H + 6
        task_h = self._task_body(run, subagent, left, y, width, draw=False) if is_task else 0.0
        card = QRectF(left, y, width, TOOL_HEADER + task_h + (body + CARD_PAD if expanded else 0))
        hovered = run.hover == (run.key, "toggle_tool")
        run.card(card, run.c.card_hover if hovered and not expanded else run.c.card, run.c.card_border, 9)
        header = QRectF(left, y, width, TOOL_HEADER)
        run.layout.hits.append(_Hit("toggle_tool", header))
        x = left + 12
        if run.painter is not None:
            run.painter.setPen(Qt.PenStyle.NoPen)
            run.painter.setBrush(color)
            run.painter.drawEllipse(QPointF(x + 4, header.center().y()), 4, 4)
        x += 16
        icon = self._robot(run) if is_task else self._wrench(run)
        x += run.text(QRectF(x, y, 24, TOOL_HEADER), icon, run.font, run.c.text) + 6
        label = translate("TimelineDelegate", "Subagent") if is_task else name
        x += run.text(QRectF(x, y, width * 0.5, TOOL_HEADER), label, run.small_bold, run.c.text) + 8
        # Only a Task part's arguments are read: another tool's may be megabytes (an fs.write of a
        # 20 MB file), and parsing them here on every measure and paint froze the GUI thread.
        kind = ""
        if is_task:
            kind = subagent.subagent_type if subagent is not None else str(_arguments(index).get("subagent_type") or "")
        if is_task and kind:
            x += run.text(QRectF(x, y, 14, TOOL_HEADER), "·", run.small, run.c.muted) + 6
            x += run.text(QRectF(x, y, width * 0.3, TOOL_HEADER), kind, run.small, run.c.text) + 6
        details = [status_text]
        duration = duration_label(index.data(TimelineRole.TOOL_DURATION))
        if duration:
            details.append(duration)
        if offloaded is not None:
            details.append(size_label(int(offloaded)))
        x += run.text(QRectF(x, y, 14, TOOL_HEADER), "·", run.small, run.c.muted) + 6
        x += run.text(QRectF(x, y, 200, TOOL_HEADER), details[0], run.small_bold, color) + 6
        if len(details) > 1:
            run.text(QRectF(x, y, width - (x - left) - 40, TOOL_HEADER), "· " + " · ".join(details[1:]), run.small, run.c.muted)
        if bool(index.data(TimelineRole.SYNTHETIC)):
            run.pill(left + width - 120, header.center().y(), translate("TimelineDelegate", "Synthetic"), run.c.badges["synthetic"])
        run.text(QRectF(left + width - 28, y, 20, TOOL_HEADER), "▾" if expanded else "▸", run.font, run.c.muted)
        y = header.bottom()
        if is_task:
            y += self._task_body(run, subagent, left, y, width, draw=True)
        if expanded:
            if run.painter is not None:
                run.painter.fillRect(QRectF(left + 1, y, width - 2, 1), run.c.card_border)
            y += 6
            for label, laid in sections:
                run.text(QRectF(left + CARD_PAD, y, width, 18), label.upper(), run.small_bold, run.c.muted)
                y += 20
                y += run.place(laid, left + CARD_PAD, y, run.c.text) + 8
            if offloaded is not None:
                if run.key in self.state.full_outputs:
                    run.text(QRectF(left + CARD_PAD, y, width, BUTTON_H), translate("TimelineDelegate", "Showing the full output ({size}).").format(size=size_label(int(offloaded))), run.small, run.c.muted)
                elif run.key in self.state.loading_outputs:
                    run.text(QRectF(left + CARD_PAD, y, width, BUTTON_H), translate("TimelineDelegate", "Loading the full output…"), run.small, run.c.muted)
                else:
                    x = left + CARD_PAD
                    if not self.state.read_only:  # a subagent's outputs are read from its own log, not here
                        x = run.button("open_output", x, y, translate("TimelineDelegate", "Open full output"))
                    run.text(QRectF(x, y, width, BUTTON_H), translate("TimelineDelegate", "The result was {size}; above is its beginning.").format(size=size_label(int(offloaded))), run.small, run.c.muted)
                y += BUTTON_H + 6
        return card.bottom() + 4 - run.top

    def _task_body(self, run: _Pass, info: SubagentInfo | None, left: float, y: float, width: float, *, draw: bool) -> float:
        """Under a Task part's header: what the child was asked, how it went, and the way to its tab.

        Measures only when ``draw`` is False (no painting, no hit areas), so the card's height is
        known before its background is painted.
        """
        x = left + 28  # under the part's name, past the status dot
        inner_w = width - (x - left) - CARD_PAD
        arguments = _arguments(run.index)
        description = (info.description if info is not None else "") or str(arguments.get("description") or "")
        height = 0.0
        if description:
            if draw:
                run.text(QRectF(x, y + height, inner_w, 20), description, run.font, run.c.text)
            height += 22
        if info is None or info.running:
            waiting = info is not None and info.background
            note = translate("TimelineDelegate", "Working in the background…") if waiting else translate("TimelineDelegate", "Working…")
            if draw:
                run.text(QRectF(x, y + height, inner_w, 18), note, run.small, run.c.muted)
            height += 20
        elif info.summary:
            laid = run.doc("summary", compact(info.summary), inner_w, run.small, plain=True)
            if draw:
                color = run.c.error_text if info.status == "failed" else run.c.muted
                run.place(laid, x, y + height, color)
            height += (laid if isinstance(laid, float) else laid.height) + 2
        if info is not None:
            if draw:
                run.button("open_subagent", x, y + height + 4, translate("TimelineDelegate", "Open subagent conversation") + "  ↗")
            height += BUTTON_H + 4
        return height + 10

    def _subagent_notice(self, run: _Pass) -> float:
        """A finished background subagent's notice: one subtle card, not a bubble the user wrote."""
        index = run.index
        info: SubagentInfo | None = index.data(TimelineRole.SUBAGENT)
        y = run.top + 6
        left, width = run.text_left, run.text_width
        status = info.status if info is not None else ""
        kind = info.subagent_type if info is not None else ""
        summary = compact(info.summary, 200) if info is not None else ""
        description = _notice_description(str(index.data(TimelineRole.TEXT) or ""))
        height = 8 + 22 + (18 if summary else 0) + 4 + (BUTTON_H + 6 if info is not None else 0) + 6
        card = QRectF(left, y, width, height)
        run.card(card, run.c.notice_fill, run.c.notice_border, 8)
        inner_x, inner_w = left + CARD_PAD, width - 2 * CARD_PAD
        inner_y = y + 8
        title = translate("TimelineDelegate", "Background subagent {type} {status}").format(type=kind, status=subagent_status_label(status))
        x = inner_x
        if run.painter is not None:
            run.painter.setPen(Qt.PenStyle.NoPen)
            run.painter.setBrush(run.c.subagent_states.get(status, run.c.muted))
            run.painter.drawEllipse(QPointF(x + 3, inner_y + 11), 3.5, 3.5)
        x += 12
        x += run.text(QRectF(x, inner_y, inner_w - (x - inner_x), 22), title, run.small_bold, run.c.notice_text) + 6
        if description:
            run.text(QRectF(x, inner_y, inner_w - (x - inner_x), 22), "· " + description, run.small, run.c.notice_text)
        inner_y += 22
        if summary:
            run.text(QRectF(inner_x, inner_y, inner_w, 18), summary, run.small, run.c.muted)
            inner_y += 18
        if info is not None:
            run.button("open_subagent", inner_x, inner_y + 4, translate("TimelineDelegate", "Open subagent conversation") + "  ↗")
        return card.bottom() + 6 - run.top

    def _robot(self, run: _Pass) -> str:
        return robot_glyph(run.font)

    def _wrench(self, run: _Pass) -> str:
        metrics = QFontMetricsF(run.font)
        return "🔧" if metrics.inFontUcs4(0x1F527) else "⚙"

    def _ask_user(self, run: _Pass) -> float:
        index = run.index
        y = run.top + 3
        widget = index.data(TimelineRole.WIDGET) or {}
        left, width = run.text_left, run.text_width
        editor = self._editors.get(run.key)
        title = str(widget.get("title") or translate("TimelineDelegate", "A question"))
        lines: list[str] = []
        state = str(index.data(TimelineRole.TOOL_STATE) or PENDING)
        if editor is None:
            response = None
            result = index.data(TimelineRole.TOOL_RESULT)
            message = index.data(TimelineRole.MESSAGE)
            if message is not None:
                parsed = message.result_json()
                response = parsed.get("response") if isinstance(parsed, dict) else None
            if response is not None:
                lines = answer_lines(widget, response)
            elif state == INTERRUPTED:
                lines = [translate("TimelineDelegate", "Not answered: the turn was stopped.")]
            elif result:
                lines = [translate("TimelineDelegate", "Not answered.")]
            else:
                lines = [translate("TimelineDelegate", "Waiting for your answer…")]
        body_h = editor.sizeHint().height() if editor is not None else len(lines) * 20 + 8
        card = QRectF(left, y, width, 30 + body_h + 6)
        run.card(card, run.c.ask_fill, run.c.ask_border, 10)
        run.text(QRectF(left + CARD_PAD, y + 4, width - 2 * CARD_PAD, 24), "?  " + title, run.small_bold, run.c.ask_text)
        inner_y = y + 30
        if editor is not None:
            run.layout.editor = QRectF(left + 2, inner_y, width - 4, body_h)
        else:
            for line in lines:
                run.text(QRectF(left + CARD_PAD, inner_y, width - 2 * CARD_PAD, 20), line, run.font, run.c.text)
                inner_y += 20
        return card.bottom() + 4 - run.top

    def _notice(self, run: _Pass) -> float:
        y = run.top + 8
        expanded = run.key in self.state.expanded_reasoning
        label = translate("TimelineDelegate", "Summary of the earlier conversation") + ("  ▾" if expanded else "  ▸")
        rect = QRectF(run.left, y, run.width, 22)
        run.layout.hits.append(_Hit("toggle_reasoning", rect))
        run.text(rect, label, run.small_bold, run.c.muted, Qt.AlignmentFlag.AlignHCenter)
        y += 24
        if expanded:
            laid = run.doc("text", str(run.index.data(TimelineRole.TEXT) or ""), run.width - 40, run.small)
            y += run.place(laid, run.left + 20, y, run.c.muted) + 6
        return y + 4 - run.top

    # -- clicks -----------------------------------------------------------------------------------

    def editorEvent(self, event: QEvent, model: QAbstractItemModel, option: QStyleOptionViewItem, index: _Index) -> bool:
        if event.type() not in (QEvent.Type.MouseMove, QEvent.Type.MouseButtonRelease, QEvent.Type.MouseButtonPress):
            return False
        assert isinstance(event, QMouseEvent)
        layout = self._layout(option, index, None)
        pos = event.position()
        key = str(index.data(TimelineRole.KEY))
        hit = next((h for h in layout.hits if h.rect.contains(pos)), None)
        href = self._anchor_at(layout, pos)
        if event.type() == QEvent.Type.MouseMove:
            hover = (key, hit.name) if hit is not None else None
            if hover != self.hover:
                self.hover = hover
                self._repaint(option)
            self._set_cursor(option, hit is not None or bool(href))
            return False
        if event.button() != Qt.MouseButton.LeftButton:
            return False
        if event.type() == QEvent.Type.MouseButtonPress:
            return hit is not None or bool(href)
        if hit is not None:
            self._activate(hit.name, key, index)
            return True
        if href:
            self._follow(layout, href)
            return True
        return False

    def _activate(self, name: str, key: str, index: _Index) -> None:
        if name == "toggle_tool":
            self.tool_toggled.emit(key)
        elif name == "toggle_reasoning":
            self.reasoning_toggled.emit(key)
        else:
            self.action_triggered.emit(name, QPersistentModelIndex(index))

    @staticmethod
    def _anchor_at(layout: _Layout, pos: QPointF) -> str:
        for doc in layout.docs:
            local = pos - doc.origin
            size = doc.laid.document.size()
            if 0 <= local.x() <= size.width() and 0 <= local.y() <= size.height():
                href = doc.laid.document.documentLayout().anchorAt(local)
                if href:
                    return str(href)
        return ""

    def _follow(self, layout: _Layout, href: str) -> None:
        if href.startswith(COPY_SCHEME):
            number = int(href[len(COPY_SCHEME):] or 0)
            for doc in layout.docs:
                if number < len(doc.laid.code_blocks):
                    code = doc.laid.code_blocks[number]
                    QGuiApplication.clipboard().setText(code)
                    self.code_copied.emit(code)
                    return
            return
        self.link_activated.emit(href)

    def _repaint(self, option: QStyleOptionViewItem) -> None:
        widget = option.widget
        if widget is not None and hasattr(widget, "viewport"):
            widget.viewport().update()

    @staticmethod
    def _set_cursor(option: QStyleOptionViewItem, pointing: bool) -> None:
        widget = option.widget
        if widget is None or not hasattr(widget, "viewport"):
            return
        shape = Qt.CursorShape.PointingHandCursor if pointing else Qt.CursorShape.ArrowCursor
        if widget.viewport().cursor().shape() != shape:
            widget.viewport().setCursor(shape)

    # -- the ask-user editor -------------------------------------------------------------------------

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: _Index) -> QWidget:
        widget = index.data(TimelineRole.WIDGET) or {}
        request_id = str(index.data(TimelineRole.WIDGET_REQUEST) or "")
        call_id = str(index.data(TimelineRole.TOOL_CALL_ID) or "")
        key = str(index.data(TimelineRole.KEY))
        form = AskUserForm(widget if isinstance(widget, Mapping) else {}, parent)
        form.submitted.connect(lambda payload: self.widget_answered.emit(request_id, call_id, payload))
        form.dismissed.connect(lambda: self.widget_answered.emit(request_id, call_id, None))
        self._editors[key] = form
        form.destroyed.connect(lambda *_: self._editors.pop(key, None))
        return form

    def destroyEditor(self, editor: QWidget, index: _Index) -> None:
        self._editors.pop(str(index.data(TimelineRole.KEY)), None)
        super().destroyEditor(editor, index)

    def editor_for(self, key: str) -> AskUserForm | None:
        return self._editors.get(key)

    def updateEditorGeometry(self, editor: QWidget, option: QStyleOptionViewItem, index: _Index) -> None:
        rect = self._layout(option, index, None).editor
        if rect is not None:
            editor.setGeometry(rect.toRect())

    def setEditorData(self, editor: QWidget, index: _Index) -> None:
        pass  # the form keeps what the user typed; the model holds no answer until it is stored

    def setModelData(self, editor: QWidget, model: QAbstractItemModel, index: _Index) -> None:
        pass  # answers go to the worker (widget_answered), never into the model


def robot_glyph(font: QFont) -> str:
    """The subagent mark: a robot where the font has one, else a plain diamond (no tofu box)."""
    return "🤖" if QFontMetricsF(font).inFontUcs4(0x1F916) else "◆"


def _arguments(index: _Index) -> Mapping[str, object]:
    """A tool part's arguments as a mapping (empty when they are not a JSON object)."""
    try:
        value = json.loads(str(index.data(TimelineRole.TOOL_ARGUMENTS) or "") or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _notice_description(text: str) -> str:
    """The ``- description:`` line of a subagent notice (core.subagents.links.notice_message)."""
    for line in text.splitlines():
        if line.startswith("- description: "):
            return line.removeprefix("- description: ").strip()
    return ""
