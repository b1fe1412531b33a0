"""What row painters draw on: fonts, the row's column, laid-out text, and primitives that also record hit areas.

A :class:`Canvas` without a QPainter draws nothing but still records where buttons, links and
documents are, so hit testing uses exactly the geometry that painting does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QFontMetricsF,
    QImage,
    QPainter,
    QPalette,
    QPen,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)

from crewagent.ui.timeline.colors import TimelineColors
from crewagent.ui.timeline.documents import DocumentCache, LaidOut, estimate_height, font_metrics, mono_font
from crewagent.ui.timeline.metrics import METRICS, ColumnMetrics

#: A block of text: laid out (exact) or only its estimated height (a row not painted yet).
Text = LaidOut | float


def height_of(text: Text | None) -> float:
    if text is None:
        return 0.0
    return text if isinstance(text, float) else text.height


@dataclass(frozen=True)
class Fonts:
    """The fonts of a row, derived from the view's font once."""

    base: QFont
    small: QFont
    bold: QFont
    small_bold: QFont
    mono: QFont

    @classmethod
    def of(cls, font: QFont) -> Fonts:
        controls = METRICS.controls
        small = QFont(font)
        small.setPointSizeF(max(controls.small_min, font.pointSizeF() - controls.small_delta))
        bold = QFont(font)
        bold.setWeight(QFont.Weight.DemiBold)
        small_bold = QFont(small)
        small_bold.setWeight(QFont.Weight.DemiBold)
        return cls(QFont(font), small, bold, small_bold, mono_font(font))


@dataclass(frozen=True, slots=True)
class Frame:
    """Where a row's content goes: a column of at most ``max_width``, centred; messages indented past the avatar."""

    left: float
    top: float
    width: float

    @classmethod
    def of(cls, row_width: float, left: float = 0.0, top: float = 0.0, column: ColumnMetrics = METRICS.column) -> Frame:
        wanted = min(row_width - 2 * column.side, column.max_width)
        return cls(left + max(column.side, (row_width - wanted) / 2), top, max(column.min_width, wanted))

    @property
    def text_left(self) -> float:
        return self.left + METRICS.column.avatar + METRICS.column.avatar_gap

    @property
    def text_width(self) -> float:
        return self.width - METRICS.column.avatar - METRICS.column.avatar_gap


class TextSizer(Protocol):
    """Lays out a block of a row's text (``part`` names it within the row)."""

    def __call__(self, part: str, text: str, width: float, font: QFont, *, plain: bool = False, growing: bool = False) -> Text: ...


class Estimating:
    """A :class:`TextSizer` that builds no document: only an estimated height, from each font's metrics taken once."""

    def __init__(self, fonts: Fonts):
        self._metrics = {id(font): font_metrics(font) for font in (fonts.base, fonts.small, fonts.bold, fonts.small_bold, fonts.mono)}

    def __call__(self, part: str, text: str, width: float, font: QFont, *, plain: bool = False, growing: bool = False) -> Text:
        return estimate_height(text, width, self._metrics.get(id(font)) or font, code=plain)


@dataclass(frozen=True)
class LayingOut:
    """A :class:`TextSizer` that lays text out for real, through the delegate's document cache."""

    cache: DocumentCache
    #: The searched text to mark in every block of the row ("" for none; a background only, so
    #: the row measures the same with or without it).
    highlight: str = ""
    mark: QColor | None = None

    def __call__(self, part: str, text: str, width: float, font: QFont, *, plain: bool = False, growing: bool = False) -> Text:
        # Keyed by the text itself, not by the row's version: the end of a stream and the stored
        # message that replaces it change the row, not its text, and must not lay it out again.
        key = (part,)
        marked = (self.highlight, self.mark) if self.highlight and self.mark is not None else None
        if plain:
            return self.cache.plain(key, text, width, font, marked=marked)
        return self.cache.markdown(key, text, width, font, growing=growing, marked=marked)


@dataclass(frozen=True)
class TextRange:
    """Selected text: characters ``start`` to ``end`` (either order) of a row's ``doc``-th placed document."""

    doc: int
    start: int
    end: int

    def cursor(self, document: QTextDocument) -> QTextCursor:
        cursor = QTextCursor(document)
        last = max(0, document.characterCount() - 1)
        cursor.setPosition(min(self.start, last))
        cursor.setPosition(min(self.end, last), QTextCursor.MoveMode.KeepAnchor)
        return cursor

    def paint(self, document: QTextDocument, background: QColor, foreground: QColor) -> QAbstractTextDocumentLayout.Selection:
        selection = QAbstractTextDocumentLayout.Selection()
        selection.cursor = self.cursor(document)
        text_format = QTextCharFormat()
        text_format.setBackground(background)
        text_format.setForeground(foreground)
        selection.format = text_format
        return selection


@dataclass
class Hit:
    name: str
    rect: QRectF


@dataclass
class PlacedDoc:
    laid: LaidOut
    origin: QPointF


@dataclass
class RowLayout:
    """A row as laid out: its height and what in it can be clicked."""

    height: float = 0.0
    exact: bool = True
    hits: list[Hit] = field(default_factory=list)
    docs: list[PlacedDoc] = field(default_factory=list)
    editor: QRectF | None = None
    #: The ``@state/...`` images an opened MCP tool part names and has no thumbnails of yet.
    wanted_images: tuple[str, ...] = ()


class Canvas:
    """Draws a row's parts (when it has a painter) and records their hit areas (always)."""

    def __init__(
        self,
        painter: QPainter | None,
        fonts: Fonts,
        colors: TimelineColors,
        key: str,
        hover: tuple[str, str] | None,
        *,
        row_hovered: bool = False,
        selection: TextRange | None = None,
    ):
        self.painter = painter
        self.fonts = fonts
        self.c = colors
        self.key = key
        self.hover = hover
        #: The mouse is over this row: its hover actions (rows/actions.py) are drawn.
        self.row_hovered = row_hovered
        #: The text selected in this row, if any (drawn with the documents it is in).
        self.selection = selection
        self.layout = RowLayout()

    def hovered(self, name: str) -> bool:
        return self.hover == (self.key, name)

    def hit(self, name: str, rect: QRectF) -> None:
        self.layout.hits.append(Hit(name, rect))

    def place(self, laid: Text | None, x: float, y: float, color: QColor) -> None:
        if laid is None or isinstance(laid, float):
            return
        number = len(self.layout.docs)
        self.layout.docs.append(PlacedDoc(laid, QPointF(x, y)))
        if self.painter is not None:
            painter = self.painter
            painter.save()
            painter.translate(x, y)
            context = QAbstractTextDocumentLayout.PaintContext()
            context.palette.setColor(QPalette.ColorRole.Text, color)
            selected = self.selection
            if selected is not None and selected.doc == number and selected.start != selected.end:
                context.selections = [selected.paint(laid.document, self.c.accent, self.c.accent_text)]
            context.clip = QRectF(0, 0, laid.document.textWidth(), laid.height)
            laid.document.documentLayout().draw(painter, context)
            painter.restore()

    def card(self, rect: QRectF, fill: QColor, border: QColor, radius: float = METRICS.controls.card_radius) -> None:
        if self.painter is None:
            return
        inset = METRICS.controls.card_border / 2
        self.painter.setPen(QPen(border, METRICS.controls.card_border))
        self.painter.setBrush(fill)
        self.painter.drawRoundedRect(rect.adjusted(inset, inset, -inset, -inset), radius, radius)

    def fill(self, rect: QRectF, color: QColor) -> None:
        if self.painter is not None:
            self.painter.fillRect(rect, color)

    def dot(self, center: QPointF, radius: float, color: QColor) -> None:
        if self.painter is not None:
            self.painter.setPen(Qt.PenStyle.NoPen)
            self.painter.setBrush(color)
            self.painter.drawEllipse(center, radius, radius)

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
        """A rounded label (streaming, Interrupted, Synthetic); returns where the next one goes."""
        controls = METRICS.controls
        metrics = QFontMetricsF(self.fonts.small)
        height = metrics.height() + 2 * controls.pill_pad_y
        rect = QRectF(x, center_y - metrics.height() / 2 - controls.pill_pad_y, metrics.horizontalAdvance(text) + controls.pill_pad_x, height)
        if self.painter is not None:
            fill = QColor(color)
            fill.setAlpha(controls.pill_alpha)
            self.painter.setPen(Qt.PenStyle.NoPen)
            self.painter.setBrush(fill)
            self.painter.drawRoundedRect(rect, rect.height() / 2, rect.height() / 2)
            self.painter.setFont(self.fonts.small)
            self.painter.setPen(color)
            self.painter.drawText(rect, int(Qt.AlignmentFlag.AlignCenter), text)
        return rect.right() + controls.pill_gap

    def button(self, name: str, x: float, y: float, label: str, *, primary: bool = False) -> float:
        """A clickable button; returns where the next one goes."""
        controls = METRICS.controls
        font = self.fonts.small_bold
        rect = QRectF(x, y, QFontMetricsF(font).horizontalAdvance(label) + controls.button_pad_x, controls.button_height)
        self.hit(name, rect)
        if self.painter is not None:
            hovered = self.hovered(name)
            if primary:
                fill = self.c.accent.darker(controls.button_hover_darker) if hovered else self.c.accent
                self.card(rect, fill, fill, controls.button_radius)
                color = self.c.accent_text
            else:
                self.card(rect, self.c.button_hover if hovered else self.c.button, self.c.button_border, controls.button_radius)
                color = self.c.text
            self.painter.setFont(font)
            self.painter.setPen(color)
            self.painter.drawText(rect, int(Qt.AlignmentFlag.AlignCenter), label)
        return rect.right() + controls.button_gap

    def link(self, name: str, rect: QRectF, label: str, color: QColor) -> None:
        self.hit(name, rect)
        font = QFont(self.fonts.small_bold)
        font.setUnderline(self.hovered(name))
        self.text(rect, label, font, color)

    def image(self, name: str, rect: QRectF, image: QImage) -> None:
        """A thumbnail that can be clicked (``name``), in a thin frame."""
        self.hit(name, rect)
        if self.painter is not None:
            self.painter.drawImage(rect, image)
            self.painter.setPen(QPen(self.c.button_hover if self.hovered(name) else self.c.card_border, METRICS.controls.card_border))
            self.painter.setBrush(Qt.BrushStyle.NoBrush)
            self.painter.drawRect(rect)

    def avatar(self, left: float, y: float) -> None:
        if self.painter is None:
            return
        size = METRICS.column.avatar
        rect = QRectF(left, y, size, size)
        self.painter.setPen(Qt.PenStyle.NoPen)
        self.painter.setBrush(self.c.accent)
        self.painter.drawEllipse(rect)
        self.painter.setPen(self.c.accent_text)
        self.painter.setFont(self.fonts.small_bold)
        self.painter.drawText(rect, int(Qt.AlignmentFlag.AlignCenter), "AI")
