"""Settings → MCP: the global switch, the servers (add, edit, duplicate, delete, import), Test Connection.

The server list is part of the settings: the dialog saves it with the other pages' edits (only
when it changed). The servers' secret values never are: the page hands them to the worker
(``secrets_submitted``) when the dialog applies, and asks it to forget the secrets of the servers
a save removed (``secrets_removed``). Test Connection and reading an ``mcpServers`` file are
worker requests too (its background pool): nothing here touches the disk, the keyring or a process.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from crewagent.core.mcp import McpStatus, ServerState
from crewagent.core.mcp.config import server_id_from_name
from crewagent.core.settings import McpServerSettings, Settings
from crewagent.ui.dialogs import ProjectDialogs
from crewagent.ui.settings.mcp_form import McpServerForm, kept
from crewagent.ui.settings.mcp_log import McpLogFollower
from crewagent.ui.settings.page import SettingsPage
from crewagent.worker.mcp_ops import McpDraft, McpImport, McpSecretEdit, McpTestReport, McpToolLine

# A server's status as the page knows it: "stopped", "starting", "running", "error", or "tested"
# (Test Connection answered with its tools and stopped it again: it is not running).
STOPPED, STARTING, RUNNING, ERROR, TESTED = "stopped", "starting", "running", "error", "tested"


def unique_id(wanted: str, taken: set[str]) -> str:
    """``wanted``, or ``wanted-2``, ``wanted-3``… when that id is taken (ids are at most 40 characters)."""
    server_id, number = wanted, 1
    while server_id in taken:
        number += 1
        suffix = f"-{number}"
        server_id = wanted[: 40 - len(suffix)] + suffix
    return server_id


class McpPage(SettingsPage):
    """See the module docstring."""

    # ``McpDraft``: start this server, list its tools, stop it (``Worker.mcp.test_server``).
    test_requested = Signal(object)
    # ``path``: read the servers of this ``mcpServers`` JSON file (``Worker.mcp.import_file``).
    import_requested = Signal(str)
    # ``McpSecretEdit``: keep these secret values (``Worker.mcp.save_secrets``).
    secrets_submitted = Signal(object)
    # ``server_id``: forget its secret values (``Worker.mcp.delete_secrets``).
    secrets_removed = Signal(str)

    def __init__(self, dialogs: ProjectDialogs, parent: QWidget | None = None):
        super().__init__(parent)
        self._dialogs = dialogs
        self._servers: list[McpServerSettings] = []
        # The ids of the servers the settings had while the page showed them: their secrets may be stored.
        self._known_ids: set[str] = set()
        # Secret values typed (or imported) and not yet handed to the worker, by server id.
        self._pending: dict[str, McpSecretEdit] = {}
        self._status: dict[str, tuple[str, str]] = {}
        self._reports: dict[str, McpTestReport] = {}

        general = self.add_group()
        self.enabled = QCheckBox(general)
        self.fields["mcp.enabled"] = general.add_field(self.enabled)
        self._general = general

        servers = self.add_group()
        self.servers = QTreeWidget(servers)
        self.servers.setObjectName("mcpServers")
        self.servers.setColumnCount(4)
        self.servers.setRootIsDecorated(False)
        self.servers.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.servers.setMinimumHeight(150)
        buttons = QHBoxLayout()
        self.add_button, self.edit_button, self.duplicate_button, self.delete_button = (QPushButton(servers) for _ in range(4))
        self.import_button, self.test_button = QPushButton(servers), QPushButton(servers)
        self.delete_button.setObjectName("dangerButton")
        self.test_button.setObjectName("primaryButton")
        for button in (self.add_button, self.edit_button, self.duplicate_button, self.delete_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        more = QHBoxLayout()  # a second row: six buttons do not fit a narrow dialog
        more.addWidget(self.import_button)
        more.addStretch(1)
        more.addWidget(self.test_button)
        column = QVBoxLayout()
        column.addWidget(self.servers)
        column.addLayout(buttons)
        column.addLayout(more)
        self.fields["mcp.servers"] = servers.add_field(column, wrapped=self.servers)
        self.notice = QLabel(servers)
        self.notice.setObjectName("fieldHint")
        self.notice.setWordWrap(True)
        servers.add_wide(self.notice)
        self._servers_group = servers

        self.form = McpServerForm(self.widget())
        self.body_layout.addWidget(self.form)

        details = self.add_group()
        self.status = QLabel(details)
        self.status.setObjectName("mcpStatus")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tools = QTreeWidget(details)
        self.tools.setObjectName("mcpTools")
        self.tools.setColumnCount(2)
        self.tools.setRootIsDecorated(False)
        self.tools.setMaximumHeight(160)
        self.log = QPlainTextEdit(details)
        self.log.setObjectName("mcpLog")
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(500)  # bounded, like the server's own log
        self.log.setMaximumHeight(140)
        details.add_wide(self.status)
        self.fields["mcp.tools"] = details.add_field(self.tools)
        self.fields["mcp.log"] = details.add_field(self.log)
        # The live stderr of the servers the turns started (wired to ``TurnWorker.read_mcp_log`` by ui.wiring).
        self.live_log = McpLogFollower(self, self.log)
        self._details = details
        self.finish()

        self.add_button.clicked.connect(self._add)
        self.edit_button.clicked.connect(self._edit)
        self.duplicate_button.clicked.connect(self._duplicate)
        self.delete_button.clicked.connect(self._delete)
        self.import_button.clicked.connect(self._import)
        self.test_button.clicked.connect(self._test)
        self.servers.itemSelectionChanged.connect(self._selection_changed)
        self.servers.itemDoubleClicked.connect(lambda *_: self._edit())
        self.form.accepted.connect(self._form_accepted)
        self.retranslate_ui()
        self._update_buttons()

    def nav_title(self) -> str:
        return self.tr("MCP")

    # -- settings ----------------------------------------------------------------------------------

    def load(self, settings: Settings) -> None:
        self.enabled.setChecked(settings.mcp.enabled)
        self._servers = [server.model_copy(deep=True) for server in settings.mcp.servers]
        ids = {server.id for server in self._servers}
        self._known_ids |= ids  # not reset: a load that follows our own save must not hide what it removed
        self._pending = {sid: edit for sid, edit in self._pending.items() if sid in ids}
        self.form.hide()
        self._refill()

    def changes(self) -> dict[str, Any]:
        servers = [server.model_dump(mode="json") for server in self._servers]
        return {"mcp": {"enabled": self.enabled.isChecked(), "servers": servers}}

    def show_problem(self, field: str, message: str) -> bool:
        if field.startswith("mcp.servers"):
            field = "mcp.servers"
        return super().show_problem(field, message)

    def has_pending_secrets(self) -> bool:
        return bool(self._pending)

    def discard_secrets(self) -> None:
        """The dialog shows the saved settings again (opened, saved, or edits discarded)."""
        self._pending = {}

    def submit_secrets(self) -> None:
        """The dialog applies: hand the typed secret values to the worker (before the settings)."""
        ids = {server.id for server in self._servers}
        for server_id, edit in self._pending.items():
            if server_id in ids:
                self.secrets_submitted.emit(edit)
        self._pending = {}

    def saved(self, settings: Settings) -> None:
        """Our save is done: forget the secrets of the servers it removed."""
        ids = {server.id for server in settings.mcp.servers}
        for server_id in sorted(self._known_ids - ids):
            self.secrets_removed.emit(server_id)
        self._known_ids = ids

    # -- the list ----------------------------------------------------------------------------------

    def _refill(self, select: str = "") -> None:
        current = select or self.selected_id()
        self.servers.clear()
        for server in self._servers:
            item = QTreeWidgetItem([server.label, server.transport, "", ""])
            item.setData(0, Qt.ItemDataRole.UserRole, server.id)
            self.servers.addTopLevelItem(item)
            self._show_row(item, server)
            if server.id == current:
                item.setSelected(True)
                self.servers.setCurrentItem(item)
        self._selection_changed()

    def _show_row(self, item: QTreeWidgetItem, server: McpServerSettings) -> None:
        item.setText(2, self.tr("yes") if server.enabled else self.tr("no"))
        item.setText(3, self.status_text(server.id))
        item.setToolTip(3, item.text(3))  # an error is longer than its column

    def status_text(self, server_id: str) -> str:
        status, detail = self._status.get(server_id, (STOPPED, ""))
        if status == STARTING:
            return self.tr("starting…")
        if status == RUNNING:
            return self.tr("running · {count} tool(s)").format(count=detail)
        if status == TESTED:
            return self.tr("works · {count} tool(s) · stopped after the test").format(count=detail)
        if status == ERROR:
            return self.tr("error: {message}").format(message=detail)
        return self.tr("stopped")

    def selected_id(self) -> str:
        items = self.servers.selectedItems()
        return str(items[0].data(0, Qt.ItemDataRole.UserRole)) if items else ""

    def _selected(self) -> McpServerSettings | None:
        server_id = self.selected_id()
        return next((server for server in self._servers if server.id == server_id), None)

    def _secrets_of(self, server: McpServerSettings) -> McpSecretEdit:
        """Its secret values as last typed, or the stored ones (kept, not read)."""
        return self._pending.get(server.id) or McpSecretEdit(server.id, server.id, kept(server.envNames), kept(server.headerNames))

    @Slot()
    def _selection_changed(self) -> None:
        self._update_buttons()
        self._show_details(self.selected_id())

    def _show_details(self, server_id: str) -> None:
        """The status, tools and log of ``server_id`` (its last test)."""
        report = self._reports.get(server_id)
        self.status.setText(f"{server_id}: {self.status_text(server_id)}" if server_id else "")
        self.tools.clear()
        for tool in report.tools if report is not None else ():
            self.tools.addTopLevelItem(QTreeWidgetItem([tool.name, tool.description]))
        self.log.setPlainText("\n".join(report.log) if report is not None else "")
        if server_id != self.live_log.server_id:
            self.live_log.follow(server_id)

    def _update_buttons(self) -> None:
        chosen = self._selected() is not None
        for button in (self.edit_button, self.duplicate_button, self.delete_button):
            button.setEnabled(chosen)
        testing = self._status.get(self.selected_id(), (STOPPED, ""))[0] == STARTING
        self.test_button.setEnabled((chosen or self.form.isVisible()) and not testing)

    def _taken(self, but: str = "") -> set[str]:
        return {server.id for server in self._servers if server.id != but}

    @Slot()
    def _add(self) -> None:
        server_id = unique_id("server", self._taken())
        self.form.edit(McpServerSettings(id=server_id), McpSecretEdit(server_id), taken=self._taken(), new=True)
        self._update_buttons()

    @Slot()
    def _edit(self) -> None:
        server = self._selected()
        if server is not None:
            self.form.edit(server, self._secrets_of(server), taken=self._taken(but=server.id), new=False)
            self._update_buttons()

    @Slot()
    def _duplicate(self) -> None:
        server = self._selected()
        if server is None:
            return
        copy_id = unique_id(f"{server.id[:35]}-copy", self._taken())
        copy = server.model_copy(update={"id": copy_id, "name": self.tr("{name} (copy)").format(name=server.label)}, deep=True)
        self._servers.insert(self._servers.index(server) + 1, copy)
        secrets = self._secrets_of(server)
        self._pending[copy_id] = McpSecretEdit(copy_id, secrets.source_id, secrets.env, secrets.headers)
        self._refill(select=copy_id)

    @Slot()
    def _delete(self) -> None:
        server = self._selected()
        if server is not None:
            self._servers.remove(server)
            self._pending.pop(server.id, None)
            if self.form.isVisible() and self.form.editing == server.id:
                self.form.hide()
            self._refill()

    @Slot(object, object)
    def _form_accepted(self, server: McpServerSettings, secrets: McpSecretEdit) -> None:
        old_id = self.form.editing
        index = next((n for n, s in enumerate(self._servers) if s.id == old_id), None) if old_id else None
        if index is None:
            self._servers.append(server)
        else:
            self._servers[index] = server
            if old_id != server.id:
                self._pending.pop(old_id, None)
        self._pending[server.id] = secrets
        self._refill(select=server.id)

    # -- Test Connection and import ----------------------------------------------------------------

    @Slot()
    def _test(self) -> None:
        if self.form.isVisible():
            try:
                server, secrets = self.form.draft()
            except ValueError as exc:
                self.form.error.setText(str(exc))
                self.form.error.show()
                return
        else:
            chosen = self._selected()
            if chosen is None:
                return
            server, secrets = chosen, self._secrets_of(chosen)
        self._status[server.id] = (STARTING, "")
        self._reports.pop(server.id, None)
        self._refresh_status(server.id)
        self.test_requested.emit(McpDraft(server, secrets))

    @Slot(object)
    def show_test(self, report: McpTestReport) -> None:
        """The answer to Test Connection: its status, tools and log (the server is stopped again)."""
        self._reports[report.server_id] = report
        self._status[report.server_id] = (TESTED, str(len(report.tools))) if report.ok else (ERROR, report.error)
        self._refresh_status(report.server_id)

    @Slot(object)
    def show_state(self, state: ServerState) -> None:
        """The live status of a server the turns started (its tools when it runs; its log: ``live_log``)."""
        previous = self._reports.get(state.server_id)
        log = previous.log if previous is not None else ()
        if state.status == McpStatus.RUNNING:
            tools = tuple(McpToolLine(tool.name, " ".join(tool.description.split())) for tool in state.tools)
            self._reports[state.server_id] = McpTestReport(state.server_id, True, tools, log=log)
            self._status[state.server_id] = (RUNNING, str(len(tools)))
        elif state.status == McpStatus.ERROR:
            self._status[state.server_id] = (ERROR, state.error)
        else:
            self._status[state.server_id] = (STARTING if state.status == McpStatus.STARTING else STOPPED, "")
        self._refresh_status(state.server_id)
        self.live_log.changed(state.server_id)

    def _refresh_status(self, server_id: str) -> None:
        for row in range(self.servers.topLevelItemCount()):
            item = self.servers.topLevelItem(row)
            server = next((s for s in self._servers if item is not None and s.id == item.data(0, Qt.ItemDataRole.UserRole)), None)
            if item is not None and server is not None:
                self._show_row(item, server)
        if server_id == self.selected_id() or self.form.isVisible():
            self._show_details(server_id)
        self._update_buttons()

    @Slot()
    def _import(self) -> None:
        path = self._dialogs.ask_mcp_servers_file(self)
        if path:
            self.notice.setText(self.tr("Reading {path}…").format(path=path))
            self.import_requested.emit(path)

    @Slot(object)
    def show_import(self, result: McpImport) -> None:
        """The servers read from an ``mcpServers`` file join the list (saved with Apply, like any edit)."""
        if result.error:
            self.notice.setText(self.tr("Nothing was imported: {problem}").format(problem=result.error))
            return
        added = []
        for definition in result.servers:
            wanted = server_id_from_name(definition.settings.id)
            server_id = unique_id(wanted, self._taken())
            env, headers = dict(definition.secrets.env), dict(definition.secrets.headers)
            server = definition.settings.model_copy(update={"id": server_id, "envNames": sorted(env), "headerNames": sorted(headers)})
            self._servers.append(server)
            self._pending[server_id] = McpSecretEdit(server_id, "", tuple(env.items()), tuple(headers.items()))
            added.append(server_id)
        self._refill(select=added[0] if added else "")
        self.notice.setText(
            self.tr("Imported: {ids}. Apply or Save keeps them.").format(ids=", ".join(added))
        )

    # -- language ----------------------------------------------------------------------------------

    def retranslate_ui(self) -> None:
        self.title.setText(self.tr("MCP servers"))
        self.intro.setText(
            self.tr(
                "MCP servers give the model more tools (named mcp__server__tool). A server starts when a turn "
                "first needs its tools and stops when the app quits. Secret environment values and headers "
                "are kept in the keyring."
            )
        )
        self._general.title.setText(self.tr("MCP"))
        self.fields["mcp.enabled"].label.setText(self.tr("MCP servers"))
        self.enabled.setText(self.tr("Let the model use the tools of the enabled servers"))
        self._servers_group.title.setText(self.tr("Servers"))
        self.fields["mcp.servers"].label.setText(self.tr("Configured"))
        self.servers.setHeaderLabels([self.tr("Name"), self.tr("Transport"), self.tr("Enabled"), self.tr("Status")])
        self.add_button.setText(self.tr("Add…"))
        self.edit_button.setText(self.tr("Edit…"))
        self.duplicate_button.setText(self.tr("Duplicate"))
        self.delete_button.setText(self.tr("Delete"))
        self.import_button.setText(self.tr("Import…"))
        self.test_button.setText(self.tr("Test Connection"))
        self.import_button.setToolTip(self.tr('Add the servers of a Claude-Desktop-style {"mcpServers": …} JSON file'))
        self._details.title.setText(self.tr("Status"))
        self.fields["mcp.tools"].label.setText(self.tr("Tools"))
        self.fields["mcp.log"].label.setText(self.tr("Server log"))
        self.tools.setHeaderLabels([self.tr("Tool"), self.tr("Description")])
        self._refill()
