"""The composer: where the user writes (Enter sends, Shift+Enter breaks the line), attaches images, stops, and sees the context meter."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from PySide6.QtCore import QEvent, QMimeData, QSize, Qt, Signal, Slot
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QFontMetrics, QKeyEvent, QKeySequence, QShortcut, QTextCursor
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QToolButton, QVBoxLayout, QWidget

from crewagent.core import texts
from crewagent.ui.composer_images import AttachmentStrip, has_images, image_paths
from crewagent.ui.core_texts import translate_core
from crewagent.ui.dialogs import ProjectDialogs

from crewagent.ui.timeline.labels import usage_label
from crewagent.worker.turn_values import ContextUsage, TimelineMessage, TokenUsage, TurnError

#: Cells of the context meter ``[●●●○○]``.
METER_CELLS = 5
#: The meter's ``status`` property: the stylesheet colours each (app.qss, ``#contextMeter[status=...]``).
METER_STATUSES = ("empty", "normal", "warning", "critical", "compressing")
MAX_INPUT_LINES = 8
#: "Attach image…" from the keyboard.
ATTACH_SHORTCUT = "Ctrl+Shift+I"


def meter_text(usage: ContextUsage) -> str:
    """``[●●●○○] 45%`` (rounded to the nearest cell; any use shows at least one)."""
    percent = max(0.0, usage.percent)
    filled = min(METER_CELLS, round(percent / 100 * METER_CELLS))
    if percent > 0 and filled == 0:
        filled = 1
    return f"[{'●' * filled}{'○' * (METER_CELLS - filled)}] {percent:.0f}%"


def project_reference(path: str, project_root: str) -> str | None:
    """``@project/relative/path`` for a file inside the project folder, None for one outside it."""
    try:
        root = Path(project_root).resolve()
        target = Path(path).resolve()
    except (OSError, ValueError):
        return None
    if not project_root or not target.is_relative_to(root) or target == root:
        return None
    return "@project/" + target.relative_to(root).as_posix()


class _Input(QPlainTextEdit):
    """The text box: Enter submits, Shift+Enter is a new line, Esc asks to stop; project files drop in as references."""

    submit = Signal()
    escape = Signal()
    #: Up in the empty box: the owner puts the user's last message back to edit (issue 18 item 18).
    recall = Signal()
    #: ``(mime)``: images were pasted or dropped (image data or image files); handled at once.
    images_given = Signal(QMimeData)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("composerInput")
        self.setTabChangesFocus(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.project_root = ""
        self.document().contentsChanged.connect(self._fit)
        self._fit()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
            elif not event.modifiers() & Qt.KeyboardModifier.AltModifier:
                self.submit.emit()
            return
        if key == Qt.Key.Key_Escape:
            self.escape.emit()
            return
        if key == Qt.Key.Key_Up and not event.modifiers() and not self.toPlainText():
            self.recall.emit()
            return
        super().keyPressEvent(event)

    # -- dropping project files ---------------------------------------------------------------------

    def _references(self, mime: QMimeData) -> list[str]:
        refs = []
        images = set(image_paths(mime))
        for url in mime.urls():
            if url.isLocalFile() and url.toLocalFile() not in images:
                ref = project_reference(url.toLocalFile(), self.project_root)
                if ref is not None:
                    refs.append(ref)
        if not refs and mime.hasText() and mime.text().startswith("@project/"):
            refs.append(mime.text().strip())
        return refs

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        return has_images(source) or bool(self._references(source)) or (source.hasText() and not source.hasUrls())

    def insertFromMimeData(self, source: QMimeData) -> None:
        if has_images(source):
            self.images_given.emit(source)
        refs = self._references(source)
        if refs:
            cursor = self.textCursor()
            before = self.toPlainText()[: cursor.position()]
            lead = "" if not before or before.endswith((" ", "\n")) else " "
            cursor.insertText(lead + " ".join(refs) + " ")
            return
        if not source.hasUrls() and not source.hasImage():
            super().insertFromMimeData(source)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if has_images(event.mimeData()) or self._references(event.mimeData()):
            event.acceptProposedAction()
            return
        super().dragEnterEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        if has_images(event.mimeData()) or self._references(event.mimeData()):
            self.setFocus()
            self.insertFromMimeData(event.mimeData())
            event.acceptProposedAction()
            return
        super().dropEvent(event)

    # -- height follows the text --------------------------------------------------------------------

    @Slot()
    def _fit(self) -> None:
        line = QFontMetrics(self.font()).lineSpacing()
        lines = max(2, min(MAX_INPUT_LINES, int(self.document().size().height())))
        margins = self.contentsMargins()
        self.setFixedHeight(lines * line + 2 * int(self.document().documentMargin()) + margins.top() + margins.bottom())

    def sizeHint(self) -> QSize:
        return QSize(400, self.height())


class Composer(QFrame):
    """Writes messages and stops turns; shows how full the context is.

    ``set_busy(True)`` while a turn runs: Send becomes Stop (Esc too). The owner resets it when the
    turn finishes, whatever happened.
    """

    #: ``(text)``: the user sent a message (empty only in Agent mode: the menu, see ``set_accepts_empty``).
    submitted = Signal(str)

    #: The user asked to stop the running turn (Stop button or Esc).
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("composer")
        self.input = _Input(self)
        self.send_button = QPushButton(self)
        self.send_button.setObjectName("primaryButton")
        self.stop_button = QPushButton(self)
        self.stop_button.setObjectName("stopButton")
        self.stop_button.hide()
        self.meter = QLabel(self)
        self.meter.setObjectName("contextMeter")
        self.meter.setProperty("status", "empty")
        self.hint = QLabel(self)
        self.hint.setObjectName("composerHint")
        #: The conversation's tokens (and cost) so far, as the provider reported them (issue 17).
        self.tokens = QLabel(self)
        self.tokens.setObjectName("composerHint")
        self.tokens.hide()
        self._tokens: dict[str, TokenUsage] = {}
        #: Images attached to the message (issue 17): paste, drop, or "Attach image…" (Ctrl+Shift+I).
        self.attachments = AttachmentStrip(self)
        self.attach_button = QToolButton(self)
        self.attach_button.setObjectName("attachButton")
        self.attach_button.setText("+")
        #: Asks which image files to attach (the window's dialogs; None: the button does nothing).
        self.dialogs: ProjectDialogs | None = None
        #: The model of the next turn takes images, and its name (for the refusal).
        self._vision, self._model = True, ""

        box = QFrame(self)
        box.setObjectName("composerBox")
        column = QVBoxLayout(box)
        column.setContentsMargins(12, 8, 8, 8)
        column.setSpacing(6)
        column.addWidget(self.attachments)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(8)
        column.addLayout(row)
        row.addWidget(self.attach_button, 0, Qt.AlignmentFlag.AlignBottom)
        row.addWidget(self.input, 1)
        row.addWidget(self.send_button, 0, Qt.AlignmentFlag.AlignBottom)
        row.addWidget(self.stop_button, 0, Qt.AlignmentFlag.AlignBottom)
        footer = QHBoxLayout()
        footer.setContentsMargins(4, 0, 4, 0)
        footer.addWidget(self.hint, 1)
        footer.addWidget(self.tokens, 0)
        footer.addWidget(self.meter, 0)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(20, 8, 20, 10)
        layout.setSpacing(4)
        layout.addWidget(box)
        layout.addLayout(footer)

        self._busy = False
        self._stopping = False
        self._usage: ContextUsage | None = None
        #: Agent mode: an empty Enter is sent too (it asks for the agent's menu).
        self._accepts_empty = False
        #: Gives the user's last message of the conversation, for Up in an empty box ("" when none).
        self.recall_source: Callable[[], str] = lambda: ""
        self.input.submit.connect(self.submit)
        self.input.recall.connect(self._recall)
        self.input.escape.connect(self._on_escape)
        self.send_button.clicked.connect(self.submit)
        self.stop_button.clicked.connect(self._request_stop)
        self.input.images_given.connect(self.attachments.add_mime)
        self.attachments.refused.connect(self.set_hint)
        self.attachments.changed.connect(lambda: self.set_hint(""))
        self.attach_button.clicked.connect(self.attach_images)
        shortcut = QShortcut(QKeySequence(ATTACH_SHORTCUT), self)
        shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        shortcut.activated.connect(self.attach_images)
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        """Every text the composer sets itself; called again on a language switch."""
        if self._accepts_empty:
            self.input.setPlaceholderText(self.tr("Message the agent, or press Enter on an empty line for its menu"))
        else:
            self.input.setPlaceholderText(self.tr("Message the assistant — Enter to send, Shift+Enter for a new line"))
        self.send_button.setText(self.tr("Send"))
        self.send_button.setToolTip(self.tr("Send (Enter)"))
        self.stop_button.setText(self.tr("■ Stop"))
        self.stop_button.setToolTip(self.tr("Stop the answer (Esc)"))
        self.attach_button.setToolTip(self.tr("Attach image… ({shortcut}); you can also paste or drop images").format(shortcut=ATTACH_SHORTCUT))
        self.attach_button.setAccessibleName(self.tr("Attach image"))
        if self._busy:
            self.hint.setText(self.tr("Stopping…") if self._stopping else self.tr("Answering… press Esc or Stop to interrupt."))
        self.set_usage(self._usage)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    @property
    def busy(self) -> bool:
        return self._busy

    def set_accepts_empty(self, accepts: bool) -> None:
        """Agent mode: Enter on an empty line is sent (as "", which shows the agent's menu)."""
        if accepts != self._accepts_empty:
            self._accepts_empty = accepts
            self.retranslate_ui()

    def set_project_root(self, root: str) -> None:
        """Files dropped from inside this folder become ``@project/...`` references."""
        self.input.project_root = root

    @Slot(bool)
    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        self._stopping = False
        self.send_button.setVisible(not busy)
        self.stop_button.setVisible(busy)
        self.stop_button.setEnabled(busy)
        self.hint.setText(self.tr("Answering… press Esc or Stop to interrupt.") if busy else "")

    def set_hint(self, text: str) -> None:
        self.hint.setText(text)

    @Slot()
    def submit(self) -> None:
        text = self.input.toPlainText().strip()
        images = self.attachments.count()
        if self._busy or not (text or images or self._accepts_empty) or not self.isEnabled():
            return
        if self.attachments.jobs.pending:
            self.set_hint(self.tr("The images are still being read; send again in a moment."))
            return
        if images and not self._vision:
            # Refused here, before anything is sent: the text and the images stay for another model.
            self.set_hint(translate_core(texts.IMAGES_NOT_SUPPORTED.format(model=self._model)))
            return
        self.input.clear()
        self.submitted.emit(text)

    @Slot()
    def attach_images(self) -> None:
        """"Attach image…": the chosen files are read and checked off the GUI thread."""
        if self.dialogs is not None and not self._busy:
            self.attachments.add_files(self.dialogs.ask_image_files(self))

    @Slot(object)
    def restore_unsent(self, error: TurnError) -> None:
        """A send with images was refused before anything was stored (the model takes no images,
        a command): its text and images come back, unless the user is writing something else."""
        unsent = self.attachments.unsent
        if unsent is None or unsent[0] != error.conversation_id or not error.request.starts_turn:
            return
        self.attachments.unsent = None
        if not self.input.toPlainText() and not self.attachments.count():
            self.input.setPlainText(unsent[1])
            self.attachments.put_back(unsent[2])

    @Slot(str, object)
    def forget_unsent(self, conversation_id: str, message: object) -> None:
        """The user message of the send was stored: nothing is given back any more."""
        unsent = self.attachments.unsent
        if unsent is not None and unsent[0] == conversation_id and getattr(message, "role", "") == "user":
            self.attachments.unsent = None

    def set_accepts_images(self, vision: bool, model: str) -> None:
        """Whether the model of the next turn takes images (Settings, the model picker)."""
        self._vision, self._model = vision, model

    @Slot()
    def _recall(self) -> None:
        text = self.recall_source()
        if text and not self._busy:
            self.input.setPlainText(text)
            self.input.moveCursor(QTextCursor.MoveOperation.End)

    @Slot()
    def _on_escape(self) -> None:
        if self._busy:
            self._request_stop()

    @Slot()
    def _request_stop(self) -> None:
        if self._busy:
            self.stop_button.setEnabled(False)  # once; re-enabled with the next busy state
            self._stopping = True
            self.hint.setText(self.tr("Stopping…"))
            self.stop_requested.emit()

    def set_usage(self, usage: ContextUsage | None) -> None:
        """The context meter: normal / warning / critical / compressing, or empty before the first call."""
        self._usage = usage
        if usage is None:
            self.meter.setText(f"[{'○' * METER_CELLS}] —")
            self.meter.setToolTip(self.tr("How full the model's context is; shown after the first answer."))
            status = "normal"
        else:
            self.meter.setText(meter_text(usage))
            self.meter.setToolTip(
                self.tr("Context: {used} of {total} tokens ({status})").format(
                    used=f"{usage.used_tokens:,}", total=f"{usage.total_budget:,}", status=self._status_label(usage.status)
                )
            )
            status = usage.status
        self._set_meter_status(status if usage is not None else "empty")

    def count_tokens(self, messages: Iterable[TimelineMessage], *, reset: bool = False) -> None:
        """Add the usage of ``messages`` to the conversation's total (by message id: a message
        stored again is not counted twice); ``reset`` starts a new total (another conversation)."""
        if reset:
            self._tokens = {}
        for message in messages:
            if message.usage is not None:
                self._tokens[message.id] = message.usage
        total = TokenUsage.total(self._tokens.values())
        self.tokens.setVisible(total is not None)
        if total is not None:
            self.tokens.setText(usage_label(total))
            self.tokens.setToolTip(self.tr("Tokens the provider reported for this conversation ({count} model calls)").format(count=len(self._tokens)))

    def _status_label(self, status: str) -> str:
        labels = {
            "normal": self.tr("normal"),
            "warning": self.tr("getting full"),
            "critical": self.tr("nearly full"),
            "compressing": self.tr("compressing"),
        }
        return labels.get(status, status)

    def _set_meter_status(self, status: str) -> None:
        status = status if status in METER_STATUSES else "normal"
        if self.meter.property("status") != status:
            self.meter.setProperty("status", status)
            # A dynamic property in a selector only takes effect once the widget is polished again.
            self.meter.style().unpolish(self.meter)
            self.meter.style().polish(self.meter)

