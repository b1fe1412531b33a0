"""The Settings dialog: a page list beside the pages; Save and Apply send changes to the worker."""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import QEvent, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractButton,
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from crewagent.core.settings import Settings
from crewagent.ui.core_texts import translate_core
from crewagent.ui.dialogs import ProjectDialogs, QtProjectDialogs
from crewagent.ui.settings import edits
from crewagent.ui.settings.llm_page import LlmPage
from crewagent.ui.settings.mcp_page import McpPage
from crewagent.ui.settings.packages_page import PackagesPage
from crewagent.ui.settings.page import SettingsPage
from crewagent.ui.settings.pages import AppearancePage, ContextPage, ToolsPage
from crewagent.worker.values import ApiKeyState, SettingsProblem

log = logging.getLogger(__name__)


#: While the dialog is open, how often it asks whether settings.json changed on disk ("Always
#: allow" in an approval, another process, a hand edit): a stat on the worker thread, nothing more.
REFRESH_MS = 1_000


class SettingsDialog(QDialog):
    """Non-modal: it never blocks the window (or a test). It asks; the worker validates and saves.

    Fed by the worker through ``set_settings``, ``confirm_saved``, ``show_problems``, ``set_key_state``,
    ``show_connection_report`` and ``set_model_list`` (wired in ui.wiring.connect_signals).
    """

    #: ``{section: {key: value}}``: save these settings (``Worker.save_settings``).
    save_requested = Signal(object)

    #: ``(provider, key)``: keep this API key ("" removes it) (``Worker.set_api_key``).
    api_key_submitted = Signal(str, str)

    #: ``provider``: tell whether that provider has a key stored (``Worker.load_api_key_state``).
    key_state_requested = Signal(str)

    #: ``LlmDraft``: test the connection as typed (``Worker.test_connection``).
    connection_test_requested = Signal(object)

    #: ``LlmDraft``: fetch the model list (``Worker.list_models``).
    models_requested = Signal(object)

    #: Re-read settings.json if it changed on disk (``Worker.refresh_settings``).
    refresh_requested = Signal()

    #: Look for model servers running on this computer (``Worker.probe_local_servers``).
    local_probe_requested = Signal()

    def __init__(self, parent: QWidget | None = None, *, dialogs: ProjectDialogs | None = None):
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self.setModal(False)
        self.resize(880, 680)
        self.setMinimumSize(680, 480)
        self._settings: Settings | None = None
        #: The settings the pages were loaded from (a JSON dump): edits are what differs from it.
        self._shown: dict[str, Any] | None = None
        self._awaiting_save = False
        self._dialogs = dialogs or QtProjectDialogs()
        self._close_after_save = False

        self.llm_page = LlmPage(self)
        self.tools_page = ToolsPage(self)
        self.context_page = ContextPage(self)
        self.appearance_page = AppearancePage(self)
        #: Installs and removes packages itself (its signals are wired to the worker by MainWindow).
        self.packages_page = PackagesPage(self._dialogs, self)
        #: MCP servers (issue 12): its secrets, tests and imports are wired to ``Worker.mcp`` by ui.wiring.
        self.mcp_page = McpPage(self._dialogs, self)
        self.pages: tuple[SettingsPage, ...] = (
            self.llm_page,
            self.tools_page,
            self.context_page,
            self.appearance_page,
            self.packages_page,
            self.mcp_page,
        )

        self.nav = QListWidget(self)
        self.nav.setObjectName("settingsNav")
        self.nav.setFixedWidth(190)
        self.stack = QStackedWidget(self)
        for page in self.pages:
            self.nav.addItem(page.nav_title())
            self.stack.addWidget(page)

        footer = QFrame(self)
        footer.setObjectName("settingsFooter")
        self.status = QLabel(footer)
        self.status.setObjectName("footerStatus")
        self.status.setWordWrap(True)
        # Own buttons, not standard ones: QDialogButtonBox retranslates standard buttons itself
        # (after our retranslate_ui, with Qt's wording), and gives them dated stock icons.
        self.buttons = QDialogButtonBox(footer)
        self.save_button = self.buttons.addButton("", QDialogButtonBox.ButtonRole.AcceptRole)
        self.apply_button = self.buttons.addButton("", QDialogButtonBox.ButtonRole.ApplyRole)
        self.close_button = self.buttons.addButton("", QDialogButtonBox.ButtonRole.RejectRole)
        self.save_button.setDefault(True)
        footer_layout = QHBoxLayout(footer)
        footer_layout.setContentsMargins(20, 12, 20, 12)
        footer_layout.addWidget(self.status, 1)
        footer_layout.addWidget(self.buttons)

        body = QHBoxLayout()
        body.setContentsMargins(0, 0, 0, 0)
        body.setSpacing(0)
        body.addWidget(self.nav)
        body.addWidget(self.stack, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(body, 1)
        layout.addWidget(footer)

        self.nav.currentRowChanged.connect(self.stack.setCurrentIndex)
        self.buttons.clicked.connect(self._on_button)
        self.llm_page.connection_test_requested.connect(self.connection_test_requested)
        self.llm_page.models_requested.connect(self.models_requested)
        self.llm_page.key_state_requested.connect(self.key_state_requested)
        self.llm_page.key_removal_requested.connect(self.api_key_submitted)
        self._apply_shortcut = QShortcut(QKeySequence("Ctrl+S"), self)
        self._apply_shortcut.activated.connect(self.apply)
        self.appearance_page.chosen.connect(self._apply_at_once)
        self._refresh = QTimer(self)
        self._refresh.setInterval(REFRESH_MS)
        self._refresh.timeout.connect(self.refresh_requested)
        self.nav.setCurrentRow(0)
        self.retranslate_ui()

    # -- showing -----------------------------------------------------------------------------

    def show_settings(self, page: str | None = None) -> None:
        """Show the dialog (non-modal) with the settings in force; ``page`` is ``llm``, ``tools``, ..."""
        if not self.isVisible():
            self._reload()
            self.status.clear()
        if page is not None:
            names = {
                "llm": self.llm_page,
                "tools": self.tools_page,
                "context": self.context_page,
                "appearance": self.appearance_page,
                "packages": self.packages_page,
                "mcp": self.mcp_page,
            }
            if page in names:
                self.nav.setCurrentRow(self.pages.index(names[page]))
        self.show()
        self.raise_()
        self.activateWindow()
        self.key_state_requested.emit(self.llm_page.current_provider())

    def _reload(self) -> None:
        if self._settings is None:
            return
        for page in self.pages:
            page.clear_problems()
            page.load(self._settings)
        self.mcp_page.discard_secrets()  # shown again as saved: typed secret values are dropped too
        self._shown = self._settings.model_dump(mode="json")

    def _follow(self, settings: Settings) -> None:
        """The settings changed on disk while the dialog is open: show them, keeping the user's edits."""
        old, new = self._shown, settings.model_dump(mode="json")
        if old is None:
            self._reload()
            return
        for page in self.pages:
            values = page.changes()
            if edits.shown(values, old) == edits.shown(values, new):
                continue  # nothing this page shows changed
            target = edits.merge(copy.deepcopy(new), edits.rebase(edits.edits(values, old), old, new))
            try:
                page.load(Settings.model_validate(target))
            except ValidationError:  # the edits do not fit the new settings: show the settings
                page.load(settings)
        self._shown = new

    # -- fed by the worker -------------------------------------------------------------------

    @Slot(object)
    def set_settings(self, settings: Settings) -> None:
        """The settings in force (loaded, saved, or changed on disk): shown, keeping unsaved edits."""
        self._settings = settings
        if not self.isVisible():
            self._reload()
        else:
            self._follow(settings)

    @Slot(object)
    def confirm_saved(self, settings: Settings) -> None:
        """Our save is done (``set_settings`` had the settings first): say so, and close after Save."""
        if not self._awaiting_save:
            return  # a choice applied at once, or another window's save
        self._settings = settings
        self._awaiting_save = False
        self._set_busy(False)
        self.mcp_page.saved(settings)
        self._reload()
        self.status.setText(self.tr("Saved. The changes are in effect."))
        if self._close_after_save:
            self.accept()

    @Slot(object)
    def show_problems(self, problems: Iterable[SettingsProblem]) -> None:
        """Show each problem under its field and go to the first page that has one."""
        if not self._awaiting_save and not self.isVisible():
            return
        self._awaiting_save = False
        self._close_after_save = False
        self._set_busy(False)
        first_page: SettingsPage | None = None
        unplaced: list[str] = []
        for problem in problems:
            message = translate_core(problem.message)
            placed = [page for page in self.pages if page.show_problem(problem.field, message)]
            if placed and first_page is None:
                first_page = placed[0]
            if not placed:
                unplaced.append(message)
        if first_page is not None:
            self.nav.setCurrentRow(self.pages.index(first_page))
        text = self.tr("Nothing was saved: fix the highlighted values.")
        self.status.setText(" ".join([text, *unplaced]))

    @Slot(object)
    def set_key_state(self, state: ApiKeyState) -> None:
        self.llm_page.set_key_state(state)

    @Slot(object)
    def show_connection_report(self, report: object) -> None:
        self.llm_page.show_connection_report(report)  # type: ignore[arg-type]

    @Slot(object)
    def set_model_list(self, listed: object) -> None:
        self.llm_page.set_model_list(listed)  # type: ignore[arg-type]

    @Slot(object)
    def show_local_servers(self, found: object) -> None:
        self.llm_page.local_offer.show_found(found)  # type: ignore[arg-type]

    # -- saving ------------------------------------------------------------------------------

    def values(self) -> dict[str, Any]:
        """What the pages show, as ``{section: {key: value}}``."""
        merged: dict[str, Any] = {}
        for page in self.pages:
            edits.merge(merged, page.changes())
        return merged

    def changes(self) -> dict[str, Any]:
        """What the user changed: only this is saved, so nothing the pages did not show is overwritten."""
        return edits.edits(self.values(), self._shown or {})

    def has_unsaved_changes(self) -> bool:
        if self._shown is None:
            return False  # the settings have not arrived yet: the pages show nothing of the user's
        return bool(self.changes()) or bool(self.llm_page.typed_key()) or self.mcp_page.has_pending_secrets()

    @Slot()
    def _apply_at_once(self) -> None:
        """Appearance applies a choice at once (its page says so): saved alone, other edits left pending."""
        changed = edits.edits(self.appearance_page.changes(), self._shown or {})
        if changed:
            self.save_requested.emit(changed)

    @Slot()
    def apply(self) -> None:
        """Send the changes to the worker; the answer is ``confirm_saved`` or ``show_problems``."""
        for page in self.pages:
            page.clear_problems()
        key = self.llm_page.typed_key()
        if key:
            self.api_key_submitted.emit(self.llm_page.current_provider(), key)
        self.mcp_page.submit_secrets()  # queued before the settings: a saved server finds its secrets
        self._awaiting_save = True
        self._set_busy(True)
        self.status.setText(self.tr("Saving…"))
        self.save_requested.emit(self.changes())

    def save_and_close(self) -> None:
        self._close_after_save = True
        self.apply()

    def _set_busy(self, busy: bool) -> None:
        for button in (self.save_button, self.apply_button):
            button.setEnabled(not busy)

    @Slot(QAbstractButton)
    def _on_button(self, button: QAbstractButton) -> None:
        if button is self.save_button:
            self.save_and_close()
        elif button is self.apply_button:
            self.apply()
        else:
            self.reject()

    def reject(self) -> None:
        """Close (the button, Escape, the title bar): unsaved changes are saved, discarded or kept open."""
        if not self._awaiting_save and self.has_unsaved_changes():
            answer = self._dialogs.ask_unsaved_settings(self)
            if answer == "cancel":
                return
            if answer == "save":
                self.save_and_close()
                return
            self._reload()  # discarded: the pages show the settings again
        self._close_after_save = False
        super().reject()

    def showEvent(self, event: Any) -> None:
        self._refresh.start()
        self.refresh_requested.emit()
        self.local_probe_requested.emit()
        super().showEvent(event)

    def hideEvent(self, event: Any) -> None:
        self._refresh.stop()
        super().hideEvent(event)

    # -- language ----------------------------------------------------------------------------

    def retranslate_ui(self) -> None:
        self.setWindowTitle(self.tr("Settings"))
        for row, page in enumerate(self.pages):
            self.nav.item(row).setText(page.nav_title())
        self.save_button.setText(self.tr("Save"))
        self.apply_button.setText(self.tr("Apply"))
        self.close_button.setText(self.tr("Close"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    def keyPressEvent(self, event: Any) -> None:
        # Enter in a field must not close the dialog (QDialog's default button behaviour).
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            event.accept()
            return
        super().keyPressEvent(event)
