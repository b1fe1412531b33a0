"""Letting labels and pickers shrink, so that the window works from 800 px wide (issue 18 item 17).

A QLabel's minimum width is its whole text on one line, and a QComboBox's is its longest item; in
a row of the header or the status bar that pushes the window's minimum past the screen. An
explicit minimum width replaces that hint: the widget still gets its full width when there is
room, and is clipped when the window is narrow.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

#: What a shrinkable label or picker keeps when the window is at its narrowest.
LABEL_MIN = 24
PICKER_MIN = 140
TITLE_MIN = 80


def shrinkable(*widgets: QWidget, minimum: int = LABEL_MIN) -> None:
    """Let ``widgets`` shrink to ``minimum`` pixels (they keep their natural width when there is room)."""
    for widget in widgets:
        widget.setMinimumWidth(minimum)
