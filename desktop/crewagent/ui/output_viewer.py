"""The full-output viewer: a tool result's whole text in its own window, searchable, with Copy and Save as….

The text arrives decoded from the worker (read and decoded off the GUI thread, see
``turn_events.full_output``). Tens of megabytes cannot go into a QPlainTextEdit in one call
without freezing the window for seconds, so a zero-interval timer appends it piece by piece,
each tick stopping after ``FEED_BUDGET_MS``: the beginning shows at once and the window stays
responsive while the rest loads (``benchmarks/bench_output_viewer.py`` measures the longest stall).
"""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QFontDatabase, QGuiApplication, QKeyEvent, QKeySequence, QShortcut, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from crewagent.ui.core_texts import translate_core
from crewagent.ui.dialogs import ProjectDialogs, QtProjectDialogs
from crewagent.worker.turn_values import FullOutput
from crewagent.worker.values import SavedFile

#: Characters appended per step (cut after a newline where there is one, so lines arrive whole).
FEED_CHUNK = 16_384
#: A feeding tick stops once it has used this long, and lets the event loop run.
FEED_BUDGET_MS = 16.0
#: Characters lower-cased and counted per step of a match count.
COUNT_SLICE = 1_000_000
#: Typing in the find field waits this long for the next key before searching.
SEARCH_DELAY_MS = 150


class OutputViewer(QWidget):
    """One tool result's complete output: monospace, wrap on or off, Ctrl+F with next/previous and a
    match count, Copy (the selection, else everything) and Save as… (written by the worker).

    A top-level window owned by the main window, deleted when closed.
    """

    #: ``(path, text)``: write the text there (``Worker.save_text``); ``saved`` answers.
    save_requested = Signal(str, str)

    #: The whole text is in the editor.
    finished_loading = Signal()

    def __init__(self, title: str, dialogs: ProjectDialogs, parent: QWidget | None = None):
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("outputViewer")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self._title = title
        self._dialogs = dialogs
        self._text = ""
        self._fed = 0
        self._loading = True
        self._error = ""
        self._status_shown = 0.0
        self._saving = ""
        self._matches = 0
        self._current = 0
        #: Counting the matches of ``_count_query`` from ``_count_at`` on (None: not counting).
        self._count_query: str | None = None
        self._count_at = 0

        self.find_field = QLineEdit(self)
        self.find_field.setClearButtonEnabled(True)
        self.previous_button = QPushButton(self)
        self.next_button = QPushButton(self)
        self.match_label = QLabel(self)
        self.match_label.setObjectName("hint")
        self.wrap_box = QCheckBox(self)
        self.wrap_box.setChecked(True)
        self.copy_button = QPushButton(self)
        self.save_button = QPushButton(self)
        self.editor = QPlainTextEdit(self)
        self.editor.setObjectName("outputText")
        self.editor.setReadOnly(True)
        self.editor.setUndoRedoEnabled(False)
        self.editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.editor.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.status_label = QLabel(self)
        self.status_label.setObjectName("hint")

        bar = QHBoxLayout()
        bar.addWidget(self.find_field, 1)
        bar.addWidget(self.previous_button)
        bar.addWidget(self.next_button)
        bar.addWidget(self.match_label)
        bar.addSpacing(12)
        bar.addWidget(self.wrap_box)
        bar.addWidget(self.copy_button)
        bar.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 8)
        layout.addLayout(bar)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.status_label)

        self._feeder = QTimer(self)
        self._feeder.setInterval(0)
        self._feeder.timeout.connect(self._feed)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self._search_from_top)
        self._counter = QTimer(self)
        self._counter.setInterval(0)
        self._counter.timeout.connect(self._count_step)
        for sequence, slot in (
            (QKeySequence.StandardKey.Find, self.focus_find),
            (QKeySequence.StandardKey.FindNext, self.find_next),
            (QKeySequence.StandardKey.FindPrevious, self.find_previous),
        ):
            QShortcut(QKeySequence(sequence), self).activated.connect(slot)
        self.find_field.installEventFilter(self)
        self.find_field.textChanged.connect(self._on_query_changed)
        self.next_button.clicked.connect(self.find_next)
        self.previous_button.clicked.connect(self.find_previous)
        self.wrap_box.toggled.connect(self._set_wrap)
        self.copy_button.clicked.connect(self.copy)
        self.save_button.clicked.connect(self.save_as)
        self._set_wrap(True)
        self.resize(900, 640)
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        self.setWindowTitle(self.tr("Output of {tool}").format(tool=self._title))
        self.find_field.setPlaceholderText(self.tr("Find (Ctrl+F)"))
        self.previous_button.setText(self.tr("Previous"))
        self.previous_button.setToolTip(self.tr("Previous match (Shift+Enter)"))
        self.next_button.setText(self.tr("Next"))
        self.next_button.setToolTip(self.tr("Next match (Enter)"))
        self.wrap_box.setText(self.tr("Wrap lines"))
        self.copy_button.setText(self.tr("Copy"))
        self.copy_button.setToolTip(self.tr("Copy the selection, or the whole output when nothing is selected"))
        self.save_button.setText(self.tr("Save as…"))
        self._show_matches()
        self._show_status()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    # -- the text --------------------------------------------------------------------------------

    @property
    def text(self) -> str:
        """The whole output (also the part not yet in the editor)."""
        return self._text

    @property
    def loading(self) -> bool:
        return self._loading

    def show_output(self, output: FullOutput) -> None:
        """The worker's answer: the text to show, or why it could not be read."""
        if output.error:
            self._loading = False
            self._error = translate_core(output.error)
            self.editor.clear()
            self._show_status()
            return
        self.set_text(output.text)

    def set_text(self, text: str) -> None:
        """Show ``text``; it is appended over the next event-loop turns, not in this call."""
        self._feeder.stop()
        self._text, self._fed, self._error = text, 0, ""
        self._loading = True
        self.editor.clear()
        self._show_status()
        if text:
            self._feeder.start()
        else:
            self._finish_loading()

    @Slot()
    def _feed(self) -> None:
        started = time.perf_counter()
        cursor = QTextCursor(self.editor.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        text, size = self._text, len(self._text)
        while self._fed < size:
            end = min(size, self._fed + FEED_CHUNK)
            if end < size:
                newline = text.rfind("\n", self._fed, end)
                if newline >= 0:
                    end = newline + 1
            cursor.insertText(text[self._fed:end])
            self._fed = end
            if (time.perf_counter() - started) * 1000 >= FEED_BUDGET_MS:
                break
        if self._fed >= size:
            self._finish_loading()
        elif time.perf_counter() - self._status_shown > 0.25:  # a relabel re-lays the window out: not every tick
            self._show_status()

    def _finish_loading(self) -> None:
        self._feeder.stop()
        self._loading = False
        self._show_status()
        self.finished_loading.emit()

    def _show_status(self) -> None:
        self._status_shown = time.perf_counter()
        if self._error:
            self.status_label.setText(self._error)
        elif self._saving:
            self.status_label.setText(self.tr("Saving to {path}…").format(path=self._saving))
        elif self._loading and not self._text:
            self.status_label.setText(self.tr("Loading the full output…"))
        elif self._loading:
            percent = int(100 * self._fed / max(1, len(self._text)))
            self.status_label.setText(self.tr("Loading… {percent}%").format(percent=percent))
        else:
            lines = self.editor.document().blockCount() if self._text else 0
            self.status_label.setText(self.tr("{chars} characters · {lines} lines").format(chars=f"{len(self._text):,}", lines=f"{lines:,}"))

    @Slot(bool)
    def _set_wrap(self, wrap: bool) -> None:
        mode = QPlainTextEdit.LineWrapMode.WidgetWidth if wrap else QPlainTextEdit.LineWrapMode.NoWrap
        self.editor.setLineWrapMode(mode)

    # -- Copy and Save as --------------------------------------------------------------------

    @Slot()
    def copy(self) -> None:
        selected = self.editor.textCursor().selectedText()
        # selectedText() marks line ends with U+2029; the clipboard wants newlines.
        QGuiApplication.clipboard().setText(selected.replace("\u2029", "\n") if selected else self._text)

    @Slot()
    def save_as(self) -> None:
        name = "".join(c if c.isalnum() or c in "-_." else "-" for c in self._title) or "output"
        path = self._dialogs.ask_save_path(self, self.tr("Save the output as"), f"{name}-output.txt")
        if path:
            self._saving = path
            self.save_button.setEnabled(False)
            self._show_status()
            self.save_requested.emit(path, self._text)

    def saved(self, result: SavedFile) -> None:
        """The worker's answer to ``save_requested``."""
        if result.path != self._saving:
            return
        self._saving = ""
        self.save_button.setEnabled(True)
        if result.error:
            self.status_label.setText(translate_core(result.error))
        else:
            self.status_label.setText(self.tr("Saved to {path}").format(path=result.path))

    # -- find ------------------------------------------------------------------------------------

    @Slot()
    def focus_find(self) -> None:
        self.find_field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.find_field.selectAll()

    @property
    def match_count(self) -> int:
        return self._matches

    @property
    def current_match(self) -> int:
        """1-based number of the selected match (0: none selected)."""
        return self._current

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # Enter in the find field: the next match; Shift+Enter: the previous one.
        if watched is self.find_field and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self._search_timer.stop()
                if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                    self.find_previous()
                else:
                    self.find_next()
                return True
        return super().eventFilter(watched, event)

    @Slot(str)
    def _on_query_changed(self, _query: str) -> None:
        self._search_timer.start()

    @Slot()
    def _search_from_top(self) -> None:
        self._search_timer.stop()
        self._start_count()
        cursor = self.editor.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.Start)
        self.editor.setTextCursor(cursor)
        self._current = 0
        self.find_next()

    def _start_count(self) -> None:
        """Count the matches a slice per timer tick: lower-casing 30 MB at once stalled the window."""
        query = self.find_field.text()
        self._matches = 0
        self._count_at = 0
        self._count_query = query.lower() if query else None
        if self._count_query is not None:
            self._counter.start()
        else:
            self._counter.stop()

    @Slot()
    def _count_step(self) -> None:
        query = self._count_query
        if query is None:
            self._counter.stop()
            return
        started = time.perf_counter()
        text, size = self._text, len(self._text)
        while self._count_at < size and (time.perf_counter() - started) * 1000 < FEED_BUDGET_MS:
            # The slice reaches len(query) - 1 past its step, so it counts the matches that start in it.
            end = self._count_at + COUNT_SLICE
            self._matches += text[self._count_at:end + len(query) - 1].lower().count(query)
            self._count_at = end
        if self._count_at >= size:
            self._count_query = None
            self._counter.stop()
            if self._matches and not self._current:
                self.find_next()  # the first match may have been past what was loaded
        self._show_matches()

    @property
    def counting(self) -> bool:
        return self._count_query is not None

    @Slot()
    def find_next(self) -> None:
        self._find(backward=False)

    @Slot()
    def find_previous(self) -> None:
        self._find(backward=True)

    def _find(self, *, backward: bool) -> None:
        if self._search_timer.isActive():  # typed and not yet searched
            self._search_from_top()
            if backward:
                self._find(backward=True)
            return
        query = self.find_field.text()
        if not query or (not self.counting and not self._matches):
            self._show_matches()
            return
        document = self.editor.document()

        def find(cursor: QTextCursor) -> QTextCursor:
            if backward:
                return document.find(query, cursor, QTextDocument.FindFlag.FindBackward)
            return document.find(query, cursor)

        found = find(self.editor.textCursor())
        wrapped = found.isNull()
        if wrapped:
            start = QTextCursor(document)
            start.movePosition(QTextCursor.MoveOperation.End if backward else QTextCursor.MoveOperation.Start)
            found = find(start)
        if found.isNull():
            self._show_matches()
            return
        known = 0 if self.counting else self._matches
        if backward:
            self._current = known if wrapped or self._current <= 1 else self._current - 1
        else:
            self._current = 1 if wrapped or (known and self._current >= known) else self._current + 1
        self.editor.setTextCursor(found)
        self.editor.centerCursor()
        self._show_matches()

    def _show_matches(self) -> None:
        if not self.find_field.text():
            self.match_label.clear()
        elif self.counting:
            self.match_label.setText(self.tr("Counting…"))
        elif not self._matches:
            self.match_label.setText(self.tr("No matches"))
        elif self._current:
            self.match_label.setText(self.tr("{current} of {total}").format(current=self._current, total=self._matches))
        else:
            self.match_label.setText(self.tr("{total} matches").format(total=self._matches))
        has = self.counting or bool(self._matches)
        self.next_button.setEnabled(has)
        self.previous_button.setEnabled(has)

class OutputViewers(QObject):
    """The open viewers, one per tool result (opening it again brings it forward), and the
    worker's answers routed to them."""

    #: ``(path, text)``: a viewer's Save as… (``Worker.save_text``).
    save_requested = Signal(str, str)

    def __init__(self, owner: QWidget):
        super().__init__(owner)
        self._owner = owner
        #: Asks where to save; the main window puts its own (scripted in tests) here.
        self.dialogs: ProjectDialogs = QtProjectDialogs()
        self._open: dict[tuple[str, str], OutputViewer] = {}

    def open(self, conversation_id: str, message_id: str, tool: str) -> bool:
        """Show the viewer of a result; True when it is new (its text must be asked for)."""
        key = (conversation_id, message_id)
        viewer = self._open.get(key)
        if viewer is not None:
            viewer.show()
            viewer.raise_()
            viewer.activateWindow()
            return False
        viewer = OutputViewer(tool, self.dialogs, self._owner.window())
        viewer.save_requested.connect(self.save_requested)
        viewer.destroyed.connect(lambda _obj=None, key=key: self._open.pop(key, None))
        self._open[key] = viewer
        viewer.show()
        return True

    def viewer(self, conversation_id: str, message_id: str) -> OutputViewer | None:
        return self._open.get((conversation_id, message_id))

    @Slot(object)
    def deliver(self, output: FullOutput) -> None:
        """The worker's answer to a viewer's load (dropped when that viewer was closed meanwhile)."""
        viewer = self._open.get((output.conversation_id, output.message_id))
        if viewer is not None:
            viewer.show_output(output)

    @Slot(object)
    def saved(self, result: SavedFile) -> None:
        for viewer in self._open.values():
            viewer.saved(result)

    def close_all(self) -> None:
        for viewer in list(self._open.values()):
            viewer.close()
