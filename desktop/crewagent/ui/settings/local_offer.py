"""The offer of the model servers found running on this computer (Ollama, LM Studio), in Settings → Model."""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from crewagent.ui.settings.labels import provider_label
from crewagent.worker.values import LocalServerFound


class LocalServerOffer(QFrame):
    """One row per server found: what it is, how many models, and a button to use it.

    Hidden while nothing was found (the usual case). Filled by :meth:`show_found` with the
    worker's answer to a probe; the page does the switching when :attr:`chosen` fires.
    """

    #: ``LocalServerFound``: the user wants this server as the provider.
    chosen = Signal(object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("localServerOffer")
        self._found: tuple[LocalServerFound, ...] = ()
        self._rows = QVBoxLayout(self)
        self._rows.setContentsMargins(0, 4, 0, 4)
        #: The rows' "Use" buttons, in the order of the servers found (for tests and focus order).
        self.buttons: list[QPushButton] = []
        self.labels: list[QLabel] = []
        self.hide()

    @Slot(object)
    def show_found(self, found: tuple[LocalServerFound, ...]) -> None:
        self._found = tuple(found)
        self._rebuild()

    def retranslate_ui(self) -> None:
        self._rebuild()

    def _rebuild(self) -> None:
        while self._rows.count():
            item = self._rows.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.buttons, self.labels = [], []
        for server in self._found:
            row = QWidget(self)
            layout = QHBoxLayout(row)
            layout.setContentsMargins(0, 0, 0, 0)
            label = QLabel(row)
            label.setWordWrap(True)
            label.setText(
                self.tr("Found running: {name} at {url} ({count} models)").format(
                    name=provider_label(server.provider), url=server.base_url, count=len(server.models)
                )
            )
            button = QPushButton(self.tr("Use it"), row)
            button.clicked.connect(lambda _checked=False, chosen=server: self.chosen.emit(chosen))
            layout.addWidget(label, 1)
            layout.addWidget(button)
            self._rows.addWidget(row)
            self.buttons.append(button)
            self.labels.append(label)
        self.setVisible(bool(self._found))
