"""Building blocks of the settings pages: a titled card of labelled fields with inline errors."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QLayout, QScrollArea, QVBoxLayout, QWidget


def _repolish(widget: QWidget) -> None:
    widget.style().unpolish(widget)
    widget.style().polish(widget)


class Field:
    """One setting: its label, its editor, a hint and an error line (hidden until there is one)."""

    def __init__(self, label: QLabel, editor: QWidget, hint: QLabel, error: QLabel):
        self.label = label
        self.editor = editor
        self.hint = hint
        self.error = error

    def show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.setVisible(bool(message))
        self.editor.setProperty("invalid", bool(message))
        _repolish(self.editor)

    def clear_error(self) -> None:
        self.show_error("")

    def set_enabled(self, enabled: bool) -> None:
        self.label.setEnabled(enabled)
        self.editor.setEnabled(enabled)


class Group(QFrame):
    """A card with a title and a two-column grid of fields."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("settingsGroup")
        self.title = QLabel(self)
        self.title.setObjectName("groupTitle")
        self._grid = QGridLayout()
        self._grid.setHorizontalSpacing(16)
        self._grid.setVerticalSpacing(4)
        self._grid.setColumnStretch(1, 1)
        self._grid.setColumnMinimumWidth(0, 150)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(18, 14, 18, 16)
        layout.setSpacing(10)
        layout.addWidget(self.title)
        layout.addLayout(self._grid)
        self._row = 0

    def add_field(self, editor: QWidget | QLayout, *, wrapped: QWidget | None = None) -> Field:
        """Add a row; ``editor`` may be a layout, then ``wrapped`` is the widget errors are shown on."""
        label = QLabel(self)
        label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        hint = QLabel(self)
        hint.setObjectName("fieldHint")
        hint.setWordWrap(True)
        hint.hide()
        error = QLabel(self)
        error.setObjectName("fieldError")
        error.setWordWrap(True)
        error.hide()
        self._grid.addWidget(label, self._row, 0, Qt.AlignmentFlag.AlignTop)
        if isinstance(editor, QLayout):
            self._grid.addLayout(editor, self._row, 1)
            target = wrapped
            assert target is not None, "a layout row needs the widget that shows its errors"
        else:
            self._grid.addWidget(editor, self._row, 1)
            target = editor
        label.setBuddy(target)
        label.setMinimumHeight(target.sizeHint().height())
        self._grid.addWidget(hint, self._row + 1, 1)
        self._grid.addWidget(error, self._row + 2, 1)
        self._grid.setRowMinimumHeight(self._row + 2, 0)
        self._row += 3
        return Field(label, target, hint, error)

    def add_wide(self, widget: QWidget) -> None:
        """A widget across both columns (a result line, a warning)."""
        self._grid.addWidget(widget, self._row, 0, 1, 2)
        self._row += 1


def set_hint(field: Field, text: str) -> None:
    field.hint.setText(text)
    field.hint.setVisible(bool(text))


class PageFrame(QScrollArea):
    """A page: a title, an introduction and cards, scrolling when the dialog is small."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("settingsPage")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QWidget(self)
        body.setObjectName("settingsPage")
        self.title = QLabel(body)
        self.title.setObjectName("pageTitle")
        self.intro = QLabel(body)
        self.intro.setObjectName("pageIntro")
        self.intro.setWordWrap(True)
        self.body_layout = QVBoxLayout(body)
        self.body_layout.setContentsMargins(28, 24, 28, 24)
        self.body_layout.setSpacing(14)
        self.body_layout.addWidget(self.title)
        self.body_layout.addWidget(self.intro)
        self.setWidget(body)

    def add_group(self) -> Group:
        group = Group(self.widget())
        self.body_layout.addWidget(group)
        return group

    def finish(self) -> None:
        self.body_layout.addStretch(1)
