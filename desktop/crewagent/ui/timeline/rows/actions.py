"""A message's hover actions (issue 18 item 12): Copy, Edit, Regenerate, as small links on the row under the mouse.

Their hit areas are recorded whether the row is hovered or not (the mouse over one makes its
row the hovered one), so what is clickable is exactly where they are drawn; they take no room
of their own, so showing them never changes a row's height.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QFontMetricsF

from crewagent.ui.timeline.canvas import Canvas, Fonts
from crewagent.ui.timeline.labels import translate

COPY = "copy_message"
EDIT = "edit_message"
REGENERATE = "regenerate"
#: Pixels between two links, and around them on a backdrop.
GAP = 10.0
HEIGHT = 22.0


def label(name: str) -> str:
    return {
        COPY: translate("TimelineDelegate", "Copy"),
        EDIT: translate("TimelineDelegate", "Edit"),
        REGENERATE: translate("TimelineDelegate", "Regenerate"),
    }[name]


def width(names: tuple[str, ...], fonts: Fonts) -> float:
    """How wide the links of ``names`` are, gaps included."""
    metrics = QFontMetricsF(fonts.small_bold)
    return sum(metrics.horizontalAdvance(label(name)) for name in names) + GAP * max(0, len(names) - 1)


def draw(canvas: Canvas, names: tuple[str, ...], right: float, center_y: float, *, backdrop: bool = False) -> None:
    """The links of ``names`` ending at ``right``; on the hovered row only (their hits always).

    ``backdrop``: drawn over other content (a bubble with no room beside it), on a card.
    """
    if not names:
        return
    metrics = QFontMetricsF(canvas.fonts.small_bold)
    top = center_y - HEIGHT / 2
    if backdrop and canvas.row_hovered and canvas.painter is not None:
        total = width(names, canvas.fonts) + 2 * GAP
        canvas.card(QRectF(right - total + GAP, top, total, HEIGHT), canvas.c.button, canvas.c.button_border)
    x = right
    for name in reversed(names):
        text = label(name)
        w = metrics.horizontalAdvance(text)
        x -= w
        rect = QRectF(x, top, w, HEIGHT)
        if canvas.row_hovered:
            canvas.link(name, rect, text, canvas.c.accent if canvas.hovered(name) else canvas.c.muted)
        else:
            canvas.hit(name, rect)
        x -= GAP
