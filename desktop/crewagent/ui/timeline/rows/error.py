"""An error part: the card under an assistant message that says why the turn ended, with any partial answer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QRectF

from crewagent.ui.core_texts import translate_core
from crewagent.ui.timeline.canvas import Canvas, Fonts, Frame, Text, TextSizer, height_of
from crewagent.ui.timeline.labels import translate
from crewagent.ui.timeline.metrics import METRICS


@dataclass(frozen=True)
class ErrorGeometry:
    title: str
    card: QRectF
    title_rect: QRectF
    #: ``(text, y)`` of the partial answer (drawn in the text colour) and of the error message.
    partial: tuple[Text, float] | None
    message: tuple[Text, float]


def measure(text: str, error: Mapping[str, Any], frame: Frame, fonts: Fonts, sizer: TextSizer, y: float) -> ErrorGeometry:
    pad, m = METRICS.controls.card_pad, METRICS.error
    code = str(error.get("code") or "ERROR")
    message = translate_core(str(error.get("message") or ""))
    partial = str(error.get("partialText") or "")
    if not message:
        partial, message = "", text
    inner_w = frame.text_width - 2 * pad
    partial_doc = sizer("partial", partial, inner_w, fonts.base) if partial else None
    message_doc = sizer("error", message, inner_w, fonts.small, plain=True)
    height = float(pad + m.title_height + m.title_gap)
    for laid in (partial_doc, message_doc):
        if laid is not None:
            height += height_of(laid) + m.block_gap
    height += pad - m.block_gap
    card = QRectF(frame.text_left, y, frame.text_width, height)
    inner_x, inner_y = card.left() + pad, y + pad
    kind = translate("TimelineDelegate", "The model call failed") if code.startswith("LLM") else translate("TimelineDelegate", "The turn ended with an error")
    title_rect = QRectF(inner_x, inner_y, inner_w, m.title_height)
    inner_y += m.title_height + m.title_gap
    placed_partial = None
    if partial_doc is not None:
        placed_partial = (partial_doc, inner_y)
        inner_y += height_of(partial_doc) + m.block_gap
    return ErrorGeometry(f"⚠  {kind} · {code}", card, title_rect, placed_partial, (message_doc, inner_y))


def draw(geometry: ErrorGeometry, canvas: Canvas) -> None:
    x = geometry.title_rect.left()
    canvas.card(geometry.card, canvas.c.error_fill, canvas.c.error_border)
    canvas.text(geometry.title_rect, geometry.title, canvas.fonts.small_bold, canvas.c.error_text)
    if geometry.partial is not None:
        canvas.place(geometry.partial[0], x, geometry.partial[1], canvas.c.text)
    canvas.place(geometry.message[0], x, geometry.message[1], canvas.c.error_text)
