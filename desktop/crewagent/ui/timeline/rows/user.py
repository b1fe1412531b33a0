"""A message the user wrote: a bubble on the right, as wide as its text needs, with Copy and Edit on hover.

Attached images (issue 17) show under the text as thumbnails in a row of fixed squares; an image
that cannot be shown (a missing file, a refused reference) is a one-line note instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFontMetricsF, QPixmap

from crewagent.ui.timeline.canvas import Canvas, Fonts, Frame, Text, TextSizer
from crewagent.ui.timeline.metrics import METRICS
from crewagent.ui.timeline.model import TimelineRole
from crewagent.ui.timeline.rows import actions
from crewagent.ui.timeline.rows.base import Index, RowContext, RowPainter


#: The side of an image's square in the bubble, and the space between two.
IMAGE_BOX = 72.0
IMAGE_GAP = 6.0


@dataclass(frozen=True)
class UserFacts:
    text: str
    #: Edit is offered (nothing runs, and the timeline is not a subagent's read-only tab).
    editable: bool = False
    #: One per attached image: its thumbnail, a one-line note, or None while it loads.
    images: tuple[QPixmap | str | None, ...] = ()


@dataclass(frozen=True)
class ImageSlot:
    rect: QRectF
    shown: QPixmap | str | None


@dataclass(frozen=True)
class UserGeometry:
    bubble: QRectF
    text: Text | None
    height: float
    frame: Frame
    actions: tuple[str, ...] = ()
    #: The links do not fit beside the bubble: they float over its lower left corner.
    actions_over: bool = False
    images: tuple[ImageSlot, ...] = ()


class UserPainter(RowPainter[UserFacts, UserGeometry]):
    def facts(self, index: Index, context: RowContext) -> UserFacts:
        state = context.state
        urls = index.data(TimelineRole.IMAGES) or ()
        thumbs = state.thumbnails
        images = tuple(_shown(thumbs.get(url, context.key)) if thumbs is not None else None for url in urls)
        return UserFacts(str(index.data(TimelineRole.TEXT) or ""), not state.busy and not state.read_only, images)

    def estimated(self, text: str, has_reasoning: bool) -> UserFacts:
        return UserFacts(text)

    def measure(self, facts: UserFacts, frame: Frame, fonts: Fonts, sizer: TextSizer) -> UserGeometry:
        m = METRICS.user
        widest = frame.width * m.max_ratio - 2 * m.pad_x
        laid: Text | None = None
        text_h, text_w = 0.0, 0.0
        if facts.text or not facts.images:
            laid = sizer("text", facts.text, widest, fonts.base)
            text_h, text_w = (laid, widest) if isinstance(laid, float) else (laid.height, min(laid.ideal_width, widest))
        slots, images_w, images_h = _image_slots(facts.images, widest, fonts)
        inner_w = max(text_w, images_w)
        gap = IMAGE_GAP if facts.text and facts.images else 0.0
        bubble = QRectF(frame.left + frame.width - inner_w - 2 * m.pad_x, frame.top + m.top, inner_w + 2 * m.pad_x,
                        text_h + gap + images_h + 2 * m.pad_y)
        origin_x, origin_y = bubble.left() + m.pad_x, bubble.top() + m.pad_y + text_h + gap
        slots = tuple(ImageSlot(slot.rect.translated(origin_x, origin_y), slot.shown) for slot in slots)
        names = (actions.COPY, actions.EDIT) if facts.editable else (actions.COPY,)
        over = bubble.left() - frame.left < actions.width(names, fonts) + actions.GAP
        return UserGeometry(bubble, laid, bubble.bottom() + METRICS.column.row_gap - frame.top, frame, names, over, slots)

    def draw(self, geometry: UserGeometry, canvas: Canvas) -> None:
        m, bubble = METRICS.user, geometry.bubble
        canvas.card(bubble, canvas.c.user_bubble, canvas.c.user_bubble, m.radius)
        canvas.place(geometry.text, bubble.left() + m.pad_x, bubble.top() + m.pad_y, canvas.c.user_text)
        for slot in geometry.images:
            _draw_slot(slot, canvas)
        if geometry.actions_over:
            right = bubble.left() + actions.width(geometry.actions, canvas.fonts) + 2 * actions.GAP
            actions.draw(canvas, geometry.actions, right, bubble.bottom() - actions.HEIGHT / 2 - 2, backdrop=True)
        else:
            actions.draw(canvas, geometry.actions, bubble.left() - actions.GAP, bubble.bottom() - actions.HEIGHT / 2)


def _shown(value: object) -> QPixmap | str | None:
    return value if isinstance(value, (QPixmap, str)) else None


def _image_slots(images: tuple[QPixmap | str | None, ...], widest: float, fonts: Fonts) -> tuple[tuple[ImageSlot, ...], float, float]:
    """Squares in rows for thumbnails (and loading ones), then one line per note; positions
    relative to the images' top left, with their total width and height."""
    per_row = max(1, int((widest + IMAGE_GAP) // (IMAGE_BOX + IMAGE_GAP)))
    boxes = [shown for shown in images if not isinstance(shown, str)]
    notes = [shown for shown in images if isinstance(shown, str)]
    slots: list[ImageSlot] = []
    for n, shown in enumerate(boxes):
        row, column = divmod(n, per_row)
        slots.append(ImageSlot(QRectF(column * (IMAGE_BOX + IMAGE_GAP), row * (IMAGE_BOX + IMAGE_GAP), IMAGE_BOX, IMAGE_BOX), shown))
    rows = -(-len(boxes) // per_row)
    width = min(len(boxes), per_row) * (IMAGE_BOX + IMAGE_GAP) - IMAGE_GAP if boxes else 0.0
    height = rows * (IMAGE_BOX + IMAGE_GAP) - IMAGE_GAP if boxes else 0.0
    metrics = QFontMetricsF(fonts.small)
    line = metrics.height() + 2
    for note in notes:
        top = height + (IMAGE_GAP if height else 0.0)
        slots.append(ImageSlot(QRectF(0, top, widest, line), note))
        height = top + line
    if notes:
        width = widest if not boxes else max(width, min(widest, max(metrics.horizontalAdvance("⚠ " + n) for n in notes)))
    return tuple(slots), width, height


def _draw_slot(slot: ImageSlot, canvas: Canvas) -> None:
    rect, shown = slot.rect, slot.shown
    if isinstance(shown, str):
        canvas.text(rect, "⚠ " + shown, canvas.fonts.small, canvas.c.user_text)
        return
    canvas.hit("image", rect)
    painter = canvas.painter
    if painter is None:
        return
    if shown is None or shown.isNull():
        canvas.card(rect, canvas.c.user_bubble.darker(108), canvas.c.user_bubble.darker(120), 6)
        return
    size = shown.size().scaled(int(rect.width()), int(rect.height()), Qt.AspectRatioMode.KeepAspectRatio)
    x = rect.left() + (rect.width() - size.width()) / 2
    y = rect.top() + (rect.height() - size.height()) / 2
    painter.drawPixmap(QRectF(x, y, size.width(), size.height()).toRect(), shown)
