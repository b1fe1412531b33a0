"""What every settings page offers the dialog: load, collect changes, show field errors, retranslate."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QWidget

from crewagent.core.settings import Settings
from crewagent.ui.settings.form import Field, PageFrame


class SettingsPage(PageFrame):
    """A page of the dialog. ``fields`` maps a dotted settings path (``llm.baseUrl``) to its field."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.fields: dict[str, Field] = {}

    def nav_title(self) -> str:
        raise NotImplementedError

    def load(self, settings: Settings) -> None:
        """Show ``settings`` (discarding unsaved edits)."""
        raise NotImplementedError

    def changes(self) -> dict[str, Any]:
        """This page's values as ``{section: {key: value}}`` for ``Worker.save_settings``."""
        raise NotImplementedError

    def retranslate_ui(self) -> None:
        raise NotImplementedError

    def show_problem(self, field: str, message: str) -> bool:
        """Show ``message`` under ``field`` if it is on this page; returns whether it was."""
        target = self.fields.get(field)
        if target is None:
            return False
        target.show_error(message)
        return True

    def clear_problems(self) -> None:
        for field in self.fields.values():
            field.clear_error()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)
