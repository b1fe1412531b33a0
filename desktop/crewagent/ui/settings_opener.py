"""The Settings dialog, built the first time the user opens it, and what it must know from before then.

Building the dialog (six pages, about 200 widgets) was 40 % of building the main window (25 of
57 ms of CPU, measured in session 8), paid at every start although most sessions never open it.
The worker announces a few things on its own, not in answer to the dialog: the settings in
force, the installed packages, the local model servers found, and the live state of the MCP
servers the turns started. :class:`SettingsOpener` keeps the last of each and hands them to the
dialog when it is built (and after that as they come), so a dialog opened late shows what one
built at start would show. The dialog then asks the worker for the rest as it opens (settings.json
changed on disk, the API key state, a fresh probe and listing: its ``show_settings`` and the
pages' ``showEvent``), never the disk from this thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QWidget

from crewagent.ui.dialogs import ProjectDialogs
from crewagent.worker import Worker

if TYPE_CHECKING:
    from crewagent.core.mcp.connection import ServerState
    from crewagent.core.settings import Settings
    from crewagent.ui.settings import SettingsDialog
    from crewagent.worker.values import LocalServerFound, PackagesListing


class SettingsOpener(QObject):
    """Owns the window's Settings dialog: :meth:`dialog` builds it once, wires it to the worker, feeds it."""

    def __init__(self, window: QWidget, worker: Worker, dialogs: ProjectDialogs):
        super().__init__(window)
        self._window = window
        self._worker = worker
        self._dialogs = dialogs
        self._dialog: SettingsDialog | None = None
        self._settings: Settings | None = None
        self._listing: PackagesListing | None = None
        self._local: tuple[LocalServerFound, ...] | None = None
        #: The last state of each MCP server the turns started, by server id (in the order first seen).
        self._mcp: dict[str, ServerState] = {}
        worker.settings_changed.connect(self._on_settings)
        worker.packages_loaded.connect(self._on_listing)
        worker.local_servers_found.connect(self._on_local_servers)
        worker.turns.mcp_state_changed.connect(self._on_mcp_state)

    @property
    def settings(self) -> Settings | None:
        """The settings in force, as last announced by the worker (None until the first answer)."""
        return self._settings

    @property
    def built(self) -> SettingsDialog | None:
        """The dialog if it was built, else None (nothing is built by asking)."""
        return self._dialog

    def is_open(self) -> bool:
        return self._dialog is not None and self._dialog.isVisible()

    def dialog(self) -> SettingsDialog:
        """The Settings dialog, built, wired and fed with what the worker announced so far on the first call."""
        if self._dialog is None:
            from crewagent.ui import wiring
            from crewagent.ui.settings import SettingsDialog

            dialog = SettingsDialog(self._window, dialogs=self._dialogs)
            wiring.connect_settings_dialog(dialog, self._worker)
            self._dialog = dialog
            if self._settings is not None:
                dialog.set_settings(self._settings)
            if self._listing is not None:
                dialog.packages_page.set_listing(self._listing)
            if self._local is not None:
                dialog.show_local_servers(self._local)
            for state in self._mcp.values():
                dialog.mcp_page.show_state(state)
        return self._dialog

    def close(self) -> None:
        """Close the dialog if it was built (as its Close button would)."""
        if self._dialog is not None:
            self._dialog.close()

    # -- what the worker announces, kept for a dialog built later ----------------------------------

    @Slot(object)
    def _on_settings(self, settings: Settings) -> None:
        self._settings = settings
        if self._dialog is not None:
            self._dialog.set_settings(settings)

    @Slot(object)
    def _on_listing(self, listing: PackagesListing) -> None:
        self._listing = listing
        if self._dialog is not None:
            self._dialog.packages_page.set_listing(listing)

    @Slot(object)
    def _on_local_servers(self, found: tuple[LocalServerFound, ...]) -> None:
        self._local = tuple(found)
        if self._dialog is not None:
            self._dialog.show_local_servers(self._local)

    @Slot(object)
    def _on_mcp_state(self, state: ServerState) -> None:
        self._mcp[state.server_id] = state
        if self._dialog is not None:
            self._dialog.mcp_page.show_state(state)
