"""TimelineView: the tree view that shows a TimelineModel, follows the newest row, opens ask-user forms."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, QPoint, Qt, QTimer, QUrl, Signal, Slot
from PySide6.QtGui import QDesktopServices, QGuiApplication, QKeyEvent, QKeySequence, QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QFrame, QTreeView, QWidget

from crewagent.ui.markdown import is_openable
from crewagent.ui.theme import theme_of
from crewagent.ui.timeline.colors import TimelineColors
from crewagent.ui.timeline.delegate import TimelineDelegate
from crewagent.ui.timeline.images import TimelineImages
from crewagent.ui.timeline.model import OPEN_ROWS, TimelineModel, TimelineRole
from crewagent.ui.timeline.state import TimelineViewState

#: Pixels from the bottom that still count as "at the bottom" (following new rows).
FOLLOW_SLACK = 24
#: Older rows shown at a time when the user scrolls to the first row shown (TimelineModel.show_older).
OLDER_BATCH = 100
#: Back at the end with more rows than this shown, the view keeps only the newest OPEN_ROWS
#: (each new message lays out every row shown again; see TimelineModel.OPEN_ROWS).
TRIM_ABOVE = 400
#: The most rows shown at once: on the way up (or down) the window slides rather than grows, so
#: showing another batch lays out at most this many rows (~10 ms).
MAX_ROWS = 600


class TimelineView(QTreeView):
    """Messages and their tool parts, newest at the bottom.

    While the user is at the bottom the view follows new rows and streamed text; scrolling up
    pauses that until they scroll back down (``following``). Expanded parts and opened full
    outputs are view state (:class:`TimelineViewState`), keyed by row key.
    """

    #: ``(action, key, message_id)``: Retry/Continue on an error part, "open_output" of a tool part,
    #: "edit_message" or "regenerate" (a message's hover actions; Copy is done here);
    #: for "open_subagent" (a Task part or a subagent notice) ``message_id`` is the subagent's session id.
    action_requested = Signal(str, str, str)

    #: ``(request_id, call_id, payload)``: an ask-user widget was answered (None: dismissed).
    widget_answered = Signal(str, str, object)

    #: ``(text)``: something worth a line in the status bar ("Copied").
    notice = Signal(str)

    #: ``(text)``: typed while the timeline had the keyboard (after selecting text; "" for Esc).
    typed = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        self._reserved_bottom = 0  # before the base class lays out (it calls updateGeometries)
        super().__init__(parent)
        self.setObjectName("timeline")
        self.view_state = TimelineViewState()
        self.timeline_delegate = TimelineDelegate(self.view_state, self.row_width, self)
        self.setItemDelegate(self.timeline_delegate)
        self.images = TimelineImages(self.timeline_delegate, self.view_state, lambda: self._model, self)  # MCP tool images
        self.setHeaderHidden(True)
        self.setRootIsDecorated(False)
        self.setIndentation(0)
        self.setItemsExpandable(False)
        self.setExpandsOnDoubleClick(False)
        self.setUniformRowHeights(False)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setMouseTracking(True)
        self.verticalScrollBar().setSingleStep(24)
        self._following = True
        self._width = -1
        self._model: TimelineModel | None = None
        # Following waits for the delayed layout; a child timer dies with the view (no late call).
        self._follow_timer = QTimer(self)
        self._follow_timer.setSingleShot(True)
        self._follow_timer.setInterval(0)
        self._follow_timer.timeout.connect(self._follow_if_following)
        # Older rows are shown and the window cut back after the scroll that asked for it.
        self._older_timer = QTimer(self)
        self._older_timer.setSingleShot(True)
        self._older_timer.setInterval(0)
        self._older_timer.timeout.connect(self._show_older)
        self._newer_timer = QTimer(self)
        self._newer_timer.setSingleShot(True)
        self._newer_timer.setInterval(0)
        self._newer_timer.timeout.connect(self._show_newer)
        self._trim_timer = QTimer(self)
        self._trim_timer.setSingleShot(True)
        self._trim_timer.setInterval(0)
        self._trim_timer.timeout.connect(self._trim_window)

        # A search hit is centred again after its neighbours were painted (and measured exactly).
        self._revealed = QPersistentModelIndex()
        self._reveal_timer = QTimer(self)
        self._reveal_timer.setSingleShot(True)
        self._reveal_timer.setInterval(30)
        self._reveal_timer.timeout.connect(self._center_revealed)

        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scrolled)
        bar.rangeChanged.connect(self._on_range_changed)
        delegate = self.timeline_delegate
        delegate.tool_toggled.connect(self._toggle_tool)
        delegate.reasoning_toggled.connect(self._toggle_reasoning)
        delegate.height_changed.connect(self._remeasure)
        delegate.action_triggered.connect(self._on_action)
        delegate.link_activated.connect(self._open_link)
        delegate.code_copied.connect(lambda _code: self.notice.emit(self.tr("Code copied to the clipboard.")))
        delegate.text_copied.connect(lambda _text: self.notice.emit(self.tr("Copied to the clipboard.")))
        delegate.widget_answered.connect(self.widget_answered)
        self._follow_theme()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Ctrl+C copies the text selected with the mouse (not the current row, as Qt's views do).
        if event.matches(QKeySequence.StandardKey.Copy):
            self.timeline_delegate.copy_selection()
            return
        typed = event.text() if not event.modifiers() & ~Qt.KeyboardModifier.ShiftModifier else ""
        if event.key() == Qt.Key.Key_Escape or (typed and typed.isprintable()):
            self.typed.emit(typed if event.key() != Qt.Key.Key_Escape else "")  # the keyboard goes back to writing
            return
        super().keyPressEvent(event)

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Leave and self.timeline_delegate.hover_row is not None:
            self.timeline_delegate.hover_row = None  # the hover actions go with the mouse
            self.viewport().update()
        return super().viewportEvent(event)

    # -- theme and language ------------------------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:
        kind = event.type()
        if kind in (QEvent.Type.PaletteChange, QEvent.Type.StyleChange):
            # The theme manager sets the application palette and stylesheet; the delegate paints
            # with the same theme's tokens (see theme.theme_of).
            self._follow_theme()
        elif kind == QEvent.Type.LanguageChange:
            # Labels and core messages are translated as rows are laid out: their heights change too
            # (a failed tool's translated error is a section of its own), and code blocks hold a "Copy" link.
            self.timeline_delegate.clear_caches()
            self.scheduleDelayedItemsLayout()
            self.viewport().update()
        super().changeEvent(event)

    def _follow_theme(self) -> None:
        colors = TimelineColors.of_theme(theme_of(QGuiApplication.palette()))
        if colors != self.timeline_delegate.colors:
            self.timeline_delegate.set_colors(colors)
            self.viewport().update()

    def row_width(self) -> int:
        """The width rows are laid out for: as if the scroll bar were shown, so that its
        appearing (the history grows past one page) does not lay out every row again."""
        bar = self.verticalScrollBar()
        return self.viewport().width() - (0 if bar.isVisible() else bar.sizeHint().width())

    def set_timeline(self, model: TimelineModel) -> None:
        self.setModel(model)
        self._model = model
        model.modelReset.connect(self._on_reset)
        model.rowsInserted.connect(self._on_rows_inserted)
        model.dataChanged.connect(self._on_data_changed)
        model.older_rows_added.connect(self._check_window)
        self._on_reset()

    def reserve_bottom(self, pixels: int) -> None:
        """Keep ``pixels`` below the rows free (for the "↓ Latest" pill), so that nothing covers text."""
        if self._reserved_bottom != pixels:
            self._reserved_bottom = pixels
            self.updateGeometries()

    def updateGeometries(self) -> None:
        # QTreeView sets the viewport margins here (for its header); the reserved strip goes on top.
        super().updateGeometries()
        margins = self.viewportMargins()
        if margins.bottom() != self._reserved_bottom:
            self.setViewportMargins(margins.left(), margins.top(), margins.right(), self._reserved_bottom)

    @property
    def following(self) -> bool:
        """True while new rows and streamed text scroll into view."""
        return self._following

    # -- following the end ---------------------------------------------------------------------------

    @Slot(int)
    def _on_scrolled(self, value: int) -> None:
        bar = self.verticalScrollBar()
        at_end = self._model is None or not self._model.newer_count  # the window shows the last row
        self._following = at_end and value >= bar.maximum() - FOLLOW_SLACK
        self._check_window()

    @Slot(int, int)
    def _on_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._following:
            self.verticalScrollBar().setValue(maximum)
        self._check_window()

    # -- the window over a long conversation ------------------------------------------------------------

    def _check_window(self) -> None:
        model = self._model
        if model is None:
            return
        bar, page = self.verticalScrollBar(), self.viewport().height()
        if model.older_count and bar.value() < page:
            self._older_timer.start()
        elif model.newer_count and bar.value() > bar.maximum() - page:
            self._newer_timer.start()
        elif self._following and model.rowCount() > TRIM_ABOVE:
            self._trim_timer.start()

    @Slot()
    def _show_older(self) -> None:
        """Show older rows above the first one, keeping what is on screen where it is."""
        model = self._model
        bar = self.verticalScrollBar()
        if model is None or not model.older_count or bar.value() >= self.viewport().height():
            return
        first = self.indexAt(QPoint(0, 0))
        top = self.visualRect(first).top()
        anchor = QPersistentModelIndex(first)
        following = self._following
        model.show_older(OLDER_BATCH)
        if model.rowCount() > MAX_ROWS:
            model.hide_newer(model.rowCount() - MAX_ROWS)
            following = self._following = False
        self._keep_on_screen(anchor, top, following)

    @Slot()
    def _show_newer(self) -> None:
        """Show the rows after the last one shown (the window had slid up), keeping what is on screen."""
        model = self._model
        bar = self.verticalScrollBar()
        if model is None or not model.newer_count or bar.value() <= bar.maximum() - self.viewport().height():
            return
        first = self.indexAt(QPoint(0, 0))
        top = self.visualRect(first).top()
        anchor = QPersistentModelIndex(first)
        model.show_newer(OLDER_BATCH)
        if model.rowCount() > MAX_ROWS:
            model.hide_older(MAX_ROWS)
        self._keep_on_screen(anchor, top, False)

    def _keep_on_screen(self, anchor: QPersistentModelIndex, top: int, following: bool) -> None:
        """Lay out now and scroll so that ``anchor`` is where it was (``top``) before rows came or went."""
        self.executeDelayedItemsLayout()
        if anchor.isValid() and not following and self._model is not None:
            bar = self.verticalScrollBar()
            moved = self.visualRect(self._model.index(anchor.row(), 0, anchor.parent())).top() - top
            bar.setValue(bar.value() + moved)

    @Slot()
    def _trim_window(self) -> None:
        if self._model is not None and self._following and self._model.rowCount() > TRIM_ABOVE:
            self._model.hide_older(OPEN_ROWS)

    def reveal(self, key: str, text: str) -> bool:
        """Show the row of ``key`` (a message id) in the middle of the view with ``text`` marked in it,
        and stop following the end; a tool result is opened. False when there is no such row."""
        model = self._model
        if model is None:
            return False
        index = model.show_around(key)
        if not index.isValid():
            return False
        self._following = False
        model.set_highlight(key, text)
        if index.data(TimelineRole.KIND) == "tool":
            self.set_tool_expanded(str(index.data(TimelineRole.KEY)), True)
        self._revealed = QPersistentModelIndex(index)
        self._center_revealed()
        self._reveal_timer.start()  # again once the rows just painted have their exact heights
        return True

    def clear_highlight(self) -> None:
        if self._model is not None:
            self._model.set_highlight("", "")
        self._revealed = QPersistentModelIndex()

    @Slot()
    def _center_revealed(self) -> None:
        if self._revealed.isValid() and not self._following:
            self.executeDelayedItemsLayout()
            self.scrollTo(self._model.index(self._revealed.row(), 0, self._revealed.parent()) if self._model is not None else QModelIndex(), QAbstractItemView.ScrollHint.PositionAtCenter)

    def scroll_to_end(self) -> None:
        """Jump to the newest row and follow again."""
        if self._model is not None and self._model.newer_count:
            self._model.show_latest()
            self.executeDelayedItemsLayout()
        self._following = True
        self.verticalScrollBar().setValue(self.verticalScrollBar().maximum())

    # -- model changes --------------------------------------------------------------------------------

    @Slot()
    def _on_reset(self) -> None:
        self.view_state.clear()
        self.timeline_delegate.clear_caches()
        self._following = True
        if self._model is not None:
            # Only rows with tool parts need expanding; expandAll would walk all 10,000 rows once more.
            for parent in self._model.parents():
                self.expand(parent)
        self._follow_timer.start()

    @Slot(QModelIndex, int, int)
    def _on_rows_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        if parent.isValid():
            self.expand(parent)
        elif self._model is not None:
            for row in range(first, last + 1):  # older rows shown again come with their tool parts
                index = self._model.index(row, 0)
                if self._model.hasChildren(index):
                    self.expand(index)
        if self._following:
            self._follow_timer.start()

    @Slot(QModelIndex, QModelIndex, "QList<int>")
    def _on_data_changed(self, top_left: QModelIndex, bottom_right: QModelIndex, roles: list[int]) -> None:
        if TimelineRole.WIDGET_REQUEST in roles:
            self._sync_editor(top_left)

    def _follow_if_following(self) -> None:
        if self._following:
            self.verticalScrollBar().setValue(self.verticalScrollBar().maximum())

    def _sync_editor(self, index: QModelIndex) -> None:
        waiting = bool(index.data(TimelineRole.WIDGET_REQUEST))
        if waiting and not self.isPersistentEditorOpen(index):
            self.openPersistentEditor(index)
            self._remeasure(QPersistentModelIndex(index))
        elif not waiting and self.isPersistentEditorOpen(index):
            self.closePersistentEditor(index)
            self._remeasure(QPersistentModelIndex(index))

    # -- view state -----------------------------------------------------------------------------------

    @Slot(str)
    def _toggle_tool(self, key: str) -> None:
        self.view_state.toggle_tool(key)
        self._remeasure_anchored(key)

    @Slot(str)
    def _toggle_reasoning(self, key: str) -> None:
        self.view_state.toggle_reasoning(key)
        self._remeasure_anchored(key)

    def _remeasure_anchored(self, key: str) -> None:
        """Re-measure a row the user opened or closed, keeping its top where it was on screen
        (following the end would otherwise scroll the part the user just opened away)."""
        if self._model is None:
            return
        index = self._model.index_of_key(key)
        if not index.isValid():
            return
        before = self.visualRect(index).top()
        self._following = False
        self._remeasure(QPersistentModelIndex(index))
        after = self.visualRect(index).top()
        bar = self.verticalScrollBar()
        bar.setValue(bar.value() + after - before)
        self._on_scrolled(bar.value())

    def set_tool_expanded(self, key: str, expanded: bool) -> None:
        if (key in self.view_state.expanded_tools) != expanded:
            self._toggle_tool(key)

    def set_busy(self, busy: bool) -> None:
        if self.view_state.busy != busy:
            self.view_state.busy = busy
            if self._model is not None and self._model.rowCount():
                self._remeasure(QPersistentModelIndex(self._model.index(self._model.rowCount() - 1, 0)))

    def remember_widget_answer(self, call_id: str, answer: dict[str, object]) -> None:
        """Show an ask-user widget as answered with ``answer`` (read-only) from now on."""
        self.view_state.widget_answers[call_id] = answer

    def _remeasure_key(self, key: str) -> None:
        if self._model is not None:
            index = self._model.index_of_key(key)
            if index.isValid():
                self._remeasure(QPersistentModelIndex(index))

    @Slot(QPersistentModelIndex)
    def _remeasure(self, index: QPersistentModelIndex) -> None:
        # The view re-asks this one row for its size (QTreeView re-measures a changed row only);
        # the model did not change, so this is the view telling itself, not a model signal.
        # QTreeView repaints the row, or the whole viewport when its height changed: the rest of
        # the rows are not painted again (the busy state at a send, bench_ui 2a).
        if index.isValid():
            model_index = self.model().index(index.row(), 0, index.parent())
            QTreeView.dataChanged(self, model_index, model_index, [])

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        width = self.row_width()
        if width != self._width:
            self._width = width
            # Every row's height depends on the width: lay them all out again (sizes are cached per width).
            self.scheduleDelayedItemsLayout()
            if self._following:
                self._follow_timer.start()

    # -- actions --------------------------------------------------------------------------------------

    @Slot(str, QPersistentModelIndex)
    def _on_action(self, action: str, index: QPersistentModelIndex) -> None:
        key = str(index.data(TimelineRole.KEY))
        message_id = str(index.data(TimelineRole.RESULT_MESSAGE_ID) or "") if action == "open_output" else key
        if action == "open_subagent":
            subagent = index.data(TimelineRole.SUBAGENT)
            message_id = subagent.session_id if subagent is not None else ""
        self.action_requested.emit(action, key, message_id)

    @Slot(str)
    def _open_link(self, href: str) -> None:
        if is_openable(href):
            QDesktopServices.openUrl(QUrl(href))
