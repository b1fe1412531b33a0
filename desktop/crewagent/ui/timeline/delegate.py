"""TimelineDelegate: sizes, paints and hit-tests timeline rows, and turns clicks into signals.

Each row kind has its painter (``rows/``), which computes the row's geometry in one place: the
estimate of a row not painted yet, its exact size, its painting and its hit areas all come from
that one measure, so what is clickable is exactly what is drawn and an estimate differs from the
exact size only by how its text was measured. Sizes are cached per row version, width and view
state; rows far from the end are estimated until painted (see ``documents``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QEvent, QModelIndex, QPersistentModelIndex, QPointF, QRectF, QSize, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QColor, QFont, QGuiApplication, QMouseEvent, QPainter
from PySide6.QtWidgets import QAbstractItemView, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from crewagent.ui.ask_user import AskUserForm
from crewagent.ui.images import ThumbnailCache
from crewagent.ui.markdown import COPY_SCHEME
from crewagent.ui.timeline.canvas import Canvas, Estimating, Fonts, Frame, LayingOut, RowLayout
from crewagent.ui.timeline.colors import TimelineColors
from crewagent.ui.timeline.documents import DocumentCache
from crewagent.ui.timeline.labels import robot_glyph, state_label  # noqa: F401  (importers know them from here)
from crewagent.ui.timeline.metrics import METRICS
from crewagent.ui.timeline.model import ASK_USER_TOOL, TimelineModel, TimelineRole
from crewagent.ui.timeline.rows import ASK_USER, ASSISTANT, PAINTERS, RowContext, RowPainter
from crewagent.ui.timeline.selection import TextSelection
from crewagent.ui.timeline.state import TimelineViewState

_Index = QModelIndex | QPersistentModelIndex

#: Rows within this many of the end are always measured exactly (the view opens there): enough
#: for a last page of short messages. Each costs a Markdown layout (~1 ms, more while the worker
#: competes for the GIL); a row above them is estimated until it is painted.
EXACT_TAIL = 16
#: Row sizes remembered (by row version, width and view state) before the cache starts again.
MAX_CACHED_SIZES = 60_000


def _mark_color(colors: TimelineColors) -> QColor:
    """The background of searched text in the hit shown: the theme's accent, light enough to read through."""
    mark = QColor(colors.accent)
    mark.setAlpha(90)
    return mark


class TimelineDelegate(QStyledItemDelegate):
    """Paints the rows of a :class:`~crewagent.ui.timeline.model.TimelineModel`."""

    #: ``(key)``: the user clicked a tool part's header.
    tool_toggled = Signal(str)

    #: ``(key)``: the user clicked "Thought for N s" (or a notice's header).
    reasoning_toggled = Signal(str)

    #: ``(action, index)``: a button of a row: "retry", "continue", "open_output", or a hover action
    #: of a message: "copy_message", "edit_message", "regenerate" (rows/actions.py).
    action_triggered = Signal(str, QPersistentModelIndex)

    #: ``(href)``: a link in a message was clicked (safe schemes only reach here).
    link_activated = Signal(str)

    #: ``(code)``: a code block's Copy link was clicked; the text is on the clipboard.
    code_copied = Signal(str)

    #: ``(text)``: a message's Copy action was clicked, or Ctrl+C copied selected text; it is on the clipboard.
    text_copied = Signal(str)

    #: ``(key, paths)``: an opened MCP tool part was painted without the thumbnails of these images.
    images_wanted = Signal(str, object)

    #: ``(key, number)``: the ``number``-th image of a tool part was clicked.
    image_activated = Signal(str, int)

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
        self._fonts: dict[str, Fonts] = {}
        #: The view's fonts and their metrics, taken once, for estimating rows (sizeHint of many rows).
        self._estimating: tuple[Fonts, Estimating] | None = None
        self._frames: dict[int, Frame] = {}
        self._exact: set[tuple[object, ...]] = set()
        self._editors: dict[str, AskUserForm] = {}
        self.hover: tuple[str, str] | None = None
        #: The row under the mouse: its hover actions (Copy, Edit, Regenerate) are shown.
        self.hover_row: str | None = None
        #: Text selected with the mouse, copied with Ctrl+C (selection.py).
        self.selection = TextSelection()
        self._press_index = QPersistentModelIndex()
        self._pending_remeasure: list[QPersistentModelIndex] = []
        self._remeasure_timer = QTimer(self)
        self._remeasure_timer.setSingleShot(True)
        self._remeasure_timer.setInterval(0)
        self._remeasure_timer.timeout.connect(self._flush_remeasure)
        #: Thumbnails of user rows' images (issue 17), decoded off the GUI thread; a row is measured
        #: again when its thumbnails or notes arrive.
        self.thumbnails = ThumbnailCache(self)
        state.thumbnails = self.thumbnails
        self.thumbnails.loaded.connect(self._on_thumbnails)

    def row_width(self, option: QStyleOptionViewItem | None = None) -> int:
        return max(METRICS.column.min_row_width, self._row_width())

    def set_colors(self, colors: TimelineColors) -> None:
        """Paint with another theme's colours (code blocks are laid out again in its highlighting)."""
        if colors == self.colors:
            return
        self.colors = colors
        self.documents.code_theme = colors.code_theme
        self.documents.clear()

    def clear_caches(self) -> None:
        """Another conversation (a model reset): nothing laid out, hovered or selected stays."""
        self.selection.clear()
        self.hover_row = None
        self.documents.clear()
        self._fonts.clear()
        self._estimating = None
        self._frames.clear()
        self._sizes.clear()
        self._exact.clear()

    def _fonts_of(self, font: QFont) -> Fonts:
        key = font.key()
        fonts = self._fonts.get(key)
        if fonts is None:
            fonts = self._fonts[key] = Fonts.of(font)
        return fonts

    # -- sizing ---------------------------------------------------------------------------------

    def _size_key(self, index: _Index, width: int | None = None) -> tuple[object, ...]:
        key, version, _kind, from_end, _text, _reasoning, _special = index.data(TimelineRole.MEASURE)
        return self._key_of(key, version, from_end, self.row_width() if width is None else width)

    def _key_of(self, key: str, version: int, from_end: int, width: int) -> tuple[object, ...]:
        editor = self._editors.get(key) if self._editors else None
        editor_h = editor.sizeHint().height() if editor is not None else 0
        state = self.state
        signature = state.signature(key) if (state.expanded_tools or state.expanded_reasoning) else None
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
            if len(self._sizes) > MAX_CACHED_SIZES:
                self._sizes.clear()
                self._exact.clear()
        return QSize(width, max(METRICS.column.min_row_height, round(height)))

    def _estimate(self, option: QStyleOptionViewItem, kind: str, text: str, has_reasoning: bool, width: int) -> float:
        """A row's height without building any document: its painter's geometry, with text heights estimated."""
        if self._estimating is None:
            fonts = self._fonts_of(option.font)
            self._estimating = (fonts, Estimating(fonts))
        fonts, sizer = self._estimating
        frame = self._frames.get(width)
        if frame is None:
            frame = self._frames[width] = Frame.of(width)
        painter = PAINTERS.get(kind, ASSISTANT)
        return painter.measure(painter.estimated(text, has_reasoning), frame, fonts, sizer).height

    def _painter_of(self, index: _Index) -> RowPainter[Any, Any]:
        kind = index.data(TimelineRole.KIND)
        if kind == "tool" and index.data(TimelineRole.TOOL_NAME) == ASK_USER_TOOL:
            return ASK_USER
        return PAINTERS.get(kind, ASSISTANT)

    def _layout(self, option: QStyleOptionViewItem, index: _Index, painter: QPainter | None, *, exact: bool = True) -> RowLayout:
        """Measure a row, then draw it with ``painter`` (None: only record its hit areas and documents)."""
        key = str(index.data(TimelineRole.KEY))
        rows = self._painter_of(index)
        fonts = self._fonts_of(option.font)
        frame = Frame.of(float(self.row_width(option)), float(option.rect.left()), float(option.rect.top()))
        facts = rows.facts(index, RowContext(self.state, key, self._editor_height))
        highlight = str(index.data(TimelineRole.HIGHLIGHT) or "")
        sizer = LayingOut(self.documents, highlight, _mark_color(self.colors)) if exact else Estimating(fonts)
        geometry = rows.measure(facts, frame, fonts, sizer)
        canvas = Canvas(painter, fonts, self.colors, key, self.hover, row_hovered=self.hover_row == key,
                        selection=self.selection.range_for(key))
        if highlight and painter is not None:  # the search hit shown: a bar at the row's left edge
            bar = METRICS.controls.card_border * 3
            painter.fillRect(QRectF(frame.left - 3 * bar, frame.top + bar, bar, geometry.height - 2 * bar), self.colors.accent)
        rows.draw(geometry, canvas)
        canvas.layout.height = geometry.height
        canvas.layout.exact = exact
        return canvas.layout

    def _editor_height(self, key: str) -> int | None:
        editor = self._editors.get(key)
        return editor.sizeHint().height() if editor is not None else None

    # -- painting -------------------------------------------------------------------------------

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        layout = self._layout(option, index, painter)
        painter.restore()
        if layout.wanted_images:
            self.images_wanted.emit(str(index.data(TimelineRole.KEY)), layout.wanted_images)
        key = self._size_key(index)
        if key not in self._exact:
            self._exact.add(key)
            if abs(self._sizes.get(key, -1) - layout.height) >= 1:
                self._sizes[key] = layout.height
                self._remeasure_later(QPersistentModelIndex(index))

    @Slot(object)
    def _on_thumbnails(self, keys: tuple[str, ...]) -> None:
        view = self.parent()
        model = view.model() if isinstance(view, QAbstractItemView) else None
        for key in keys:
            self._sizes = {size: height for size, height in self._sizes.items() if size[0] != key}
            self._exact = {size for size in self._exact if size[0] != key}
            index = model.index_of_key(key) if isinstance(model, TimelineModel) else QModelIndex()
            if index.isValid():
                self.height_changed.emit(QPersistentModelIndex(index))

    def _remeasure_later(self, index: QPersistentModelIndex) -> None:
        self._pending_remeasure.append(index)
        self._remeasure_timer.start()

    def _flush_remeasure(self) -> None:
        pending, self._pending_remeasure = self._pending_remeasure, []
        for index in pending:
            if index.isValid():
                self.height_changed.emit(index)

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
            if hover != self.hover or key != self.hover_row:
                self.hover, self.hover_row = hover, key
                self._repaint(option)
            if self.selection.dragging:
                self.selection.drag_to(key, layout, pos, self._below_press(option))
                self._repaint(option)
                return True
            self._set_cursor(option, hit is not None or bool(href))
            return False
        if event.button() != Qt.MouseButton.LeftButton:
            return False
        if event.type() == QEvent.Type.MouseButtonPress:
            if hit is not None or href:
                return True
            if self.selection.clear():
                self._repaint(option)
            if self.selection.press(key, layout, pos):
                self._press_index = QPersistentModelIndex(index)
                return True
            return False
        if self.selection.dragging:
            self.selection.release()
            if self.selection.text():
                self._take_keyboard(option)  # Ctrl+C goes to the timeline now (a plain click leaves the keyboard be)
            return True
        if hit is not None:
            self._activate(hit.name, key, index)
            return True
        if href:
            self._follow(layout, href)
            return True
        return False

    def copy_selection(self) -> str:
        """Put the selected text on the clipboard; returns it ("" when nothing is selected)."""
        text = self.selection.text()
        if text:
            QGuiApplication.clipboard().setText(text)
            self.text_copied.emit(text)
        return text

    def _below_press(self, option: QStyleOptionViewItem) -> bool:
        """The row being dragged over is below the row the selection was started in."""
        view = option.widget
        if view is None or not hasattr(view, "visualRect") or not self._press_index.isValid():
            return True
        return bool(option.rect.top() > view.visualRect(self._press_index).top())

    @staticmethod
    def _take_keyboard(option: QStyleOptionViewItem) -> None:
        if option.widget is not None:
            option.widget.setFocus(Qt.FocusReason.MouseFocusReason)

    def _activate(self, name: str, key: str, index: _Index) -> None:
        if name == "toggle_tool":
            self.tool_toggled.emit(key)
        elif name == "toggle_reasoning":
            self.reasoning_toggled.emit(key)
        elif name.startswith("open_image:"):
            self.image_activated.emit(key, int(name.partition(":")[2]))
        elif name == "copy_message":
            text = str(index.data(TimelineRole.TEXT) or "")
            QGuiApplication.clipboard().setText(text)
            self.text_copied.emit(text)
        else:
            self.action_triggered.emit(name, QPersistentModelIndex(index))

    @staticmethod
    def _anchor_at(layout: RowLayout, pos: QPointF) -> str:
        for doc in layout.docs:
            local = pos - doc.origin
            size = doc.laid.document.size()
            if 0 <= local.x() <= size.width() and 0 <= local.y() <= size.height():
                href = doc.laid.document.documentLayout().anchorAt(local)
                if href:
                    return str(href)
        return ""

    def _follow(self, layout: RowLayout, href: str) -> None:
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
