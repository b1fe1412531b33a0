"""Theme changes apply live: the application palette and stylesheet switch without a restart."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from crewagent.ui.i18n import LanguageManager
from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.theme import DARK, LIGHT, ThemeManager, stylesheet, system_theme
from crewagent.ui.theme import palette as theme_palette
from crewagent.worker import WorkerThread
from tests.ui.conftest import ScriptedDialogs


@pytest.fixture
def styled(qtbot: Any, qapp: QApplication, worker_thread: WorkerThread, dialogs: ScriptedDialogs) -> Iterator[MainWindow]:
    """A window that applies the Appearance settings to the application; the look is restored after.

    The application shows the desktop's theme before the window is built, as the app's start does
    (``setup_application``): the first settings (theme "system") then change nothing, instead of
    restyling the whole window once more (~0.6 CPU-s) before the test switches the theme itself.
    """
    style, palette, sheet = qapp.style().name(), qapp.palette(), qapp.styleSheet()
    qapp.setPalette(theme_palette(system_theme()))
    qapp.setStyleSheet(stylesheet(system_theme()))
    languages = LanguageManager(qapp)
    window = MainWindow(worker_thread.worker, dialogs=dialogs, theme=ThemeManager(qapp), languages=languages)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.settings is not None)
    yield window
    window.settings_opener.close()  # the dialog, if the test opened it
    window.close()
    languages.set_language("en")
    qapp.setStyleSheet(sheet)
    qapp.setStyle(style)
    qapp.setPalette(palette)


def window_color(app: QApplication) -> str:
    return app.palette().color(QPalette.ColorRole.Window).name()


class StyleChanges(QObject):
    """Counts the style changes the application's widgets receive."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.StyleChange and isinstance(watched, QWidget):
            self.count += 1
        return False


def test_switching_to_dark_and_back_repaints_the_running_app(qtbot: Any, qapp: QApplication, styled: MainWindow) -> None:
    dialog = styled.settings_dialog
    styled.show_settings()
    appearance = dialog.appearance_page
    appearance.theme.setCurrentIndex(appearance.theme.findData("dark"))
    # Replacing the style sheet by the other theme's restyled every widget about ten times over
    # (0.6-1 s of GUI-thread CPU with Settings open); the old sheet is dropped first: twice (ui/theme.py).
    widgets, changes = len(QApplication.allWidgets()), StyleChanges()
    qapp.installEventFilter(changes)
    try:
        dialog.apply_button.click()
        qtbot.waitUntil(lambda: window_color(qapp) == DARK["window"])
    finally:
        qapp.removeEventFilter(changes)
    assert qapp.styleSheet() == stylesheet("dark")
    assert changes.count <= 3 * widgets, (changes.count, widgets)  # 2 a widget, and room for a few more
    # What a user sees: the sidebar-coloured start page hero is drawn dark.
    assert styled.start_page.grab().toImage().pixelColor(5, 5) == QColor(DARK["surface"])

    appearance.theme.setCurrentIndex(appearance.theme.findData("light"))
    dialog.apply_button.click()
    qtbot.waitUntil(lambda: window_color(qapp) == LIGHT["window"])
    assert styled.start_page.grab().toImage().pixelColor(5, 5) == QColor(LIGHT["surface"])


def test_both_themes_fill_every_token() -> None:
    assert set(LIGHT) == set(DARK)
    for name in ("light", "dark"):
        assert "${" not in stylesheet(name) and "#startPage" in stylesheet(name)
