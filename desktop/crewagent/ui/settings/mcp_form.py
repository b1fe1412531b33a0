"""The edit form of Settings → MCP: one server's fields, checked with core/mcp's own rules.

Environment variables (stdio) and headers (HTTP) are ``NAME=value`` lines. Their values are
secrets: they go to the keyring through the worker (``McpSecretEdit``), never to settings.json,
and a stored value is never read back into the form: it shows as :data:`KEEP`, which keeps it.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QWidget,
)

from crewagent.core.mcp.config import McpConfigError, make_server
from crewagent.core.settings import McpServerSettings
from crewagent.ui.settings.form import Field, Group
from crewagent.worker.mcp_ops import McpSecretEdit, SecretPairs

# Shown for a value kept in the keyring; leaving it as it is keeps that value.
KEEP = "••••••"
TRANSPORTS = ("stdio", "http", "sse")


def pairs_text(pairs: SecretPairs) -> str:
    return "\n".join(f"{name}={KEEP if value is None else value}" for name, value in pairs)


def kept(names: Collection[str]) -> SecretPairs:
    """The pairs of values stored in the keyring (shown as :data:`KEEP`)."""
    return tuple((name, None) for name in names)


class McpServerForm(Group):
    """Add or edit a server: ``accepted(McpServerSettings, McpSecretEdit)`` once its fields are valid."""

    accepted = Signal(object, object)
    cancelled = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("mcpServerForm")
        self._base = McpServerSettings(id="server")
        self._source_id = ""
        self._taken: frozenset[str] = frozenset()
        self._new = True
        self.server_id = QLineEdit(self)
        self.name = QLineEdit(self)
        self.enabled = QCheckBox(self)
        self.transport = QComboBox(self)
        for transport in TRANSPORTS:
            self.transport.addItem("", transport)
        self.command = QLineEdit(self)
        self.args = QLineEdit(self)
        self.cwd = QLineEdit(self)
        self.url = QLineEdit(self)
        self.env = QPlainTextEdit(self)
        self.headers = QPlainTextEdit(self)
        for box in (self.env, self.headers):
            box.setMaximumHeight(80)
            box.setTabChangesFocus(True)
        self.timeout = QDoubleSpinBox(self)
        self.timeout.setRange(1, 86_400)
        self.timeout.setDecimals(0)
        # How long the server may take to start and answer initialize (a first npx/uvx run downloads it).
        self.start_timeout = QDoubleSpinBox(self)
        self.start_timeout.setRange(1, 3_600)
        self.start_timeout.setDecimals(0)
        self.trusted = QCheckBox(self)
        self.rows: dict[str, Field] = {
            name: self.add_field(editor)
            for name, editor in (
                ("id", self.server_id),
                ("name", self.name),
                ("enabled", self.enabled),
                ("transport", self.transport),
                ("command", self.command),
                ("args", self.args),
                ("cwd", self.cwd),
                ("env", self.env),
                ("url", self.url),
                ("headers", self.headers),
                ("timeout", self.timeout),
                ("start_timeout", self.start_timeout),
                ("trusted", self.trusted),
            )
        }
        self.error = QLabel(self)
        self.error.setObjectName("fieldError")
        self.error.setWordWrap(True)
        self.error.hide()
        self.add_wide(self.error)
        self.done_button = QPushButton(self)
        self.done_button.setObjectName("primaryButton")
        self.cancel_button = QPushButton(self)
        buttons = QWidget(self)
        row = QHBoxLayout(buttons)
        row.setContentsMargins(0, 0, 0, 0)
        row.addStretch(1)
        row.addWidget(self.cancel_button)
        row.addWidget(self.done_button)
        self.add_wide(buttons)
        self.transport.currentIndexChanged.connect(self._show_transport)
        self.done_button.clicked.connect(self._accept)
        self.cancel_button.clicked.connect(self._cancel)
        self.retranslate_ui()
        self.hide()

    # -- showing a server --------------------------------------------------------------------------

    def edit(self, server: McpServerSettings, secrets: McpSecretEdit, *, taken: Collection[str], new: bool) -> None:
        """Show ``server`` for editing; ``taken``: the ids of the other servers."""
        self._base, self._source_id, self._taken = server, secrets.source_id, frozenset(taken)
        self.server_id.setText(server.id)
        self.name.setText(server.name)
        self.enabled.setChecked(server.enabled)
        self.transport.setCurrentIndex(TRANSPORTS.index(server.transport))
        self.command.setText(server.command)
        self.args.setText(shlex.join(server.args))
        self.cwd.setText(server.cwd)
        self.url.setText(server.url)
        self.env.setPlainText(pairs_text(secrets.env))
        self.headers.setPlainText(pairs_text(secrets.headers))
        self.timeout.setValue(server.timeoutSeconds)
        self.start_timeout.setValue(server.startTimeoutSeconds)
        self.trusted.setChecked(server.trusted)
        self._new = new
        self._retitle()
        self._show_error("")
        self._show_transport()
        self.show()
        self.server_id.setFocus()

    @property
    def editing(self) -> str:
        """The id the server had when its editing began ("" for a new one)."""
        return "" if self._new else self._base.id

    @Slot()
    def _show_transport(self) -> None:
        stdio = self.transport.currentData() == "stdio"
        for name in ("command", "args", "cwd", "env"):
            self._set_row_visible(name, stdio)
        for name in ("url", "headers"):
            self._set_row_visible(name, not stdio)

    def _set_row_visible(self, name: str, visible: bool) -> None:
        field = self.rows[name]
        field.label.setVisible(visible)
        field.editor.setVisible(visible)
        if not visible:
            field.hint.hide()

    # -- reading it back ---------------------------------------------------------------------------

    def draft(self) -> tuple[McpServerSettings, McpSecretEdit]:
        """The server and its secret values as typed; ValueError with a one-line message when invalid."""
        server_id = self.server_id.text().strip()
        if server_id in self._taken:
            raise ValueError(self.tr("Another server already has the id {id}.").format(id=server_id))
        try:
            args = shlex.split(self.args.text())
        except ValueError as exc:
            raise ValueError(self.tr("Arguments: {problem}").format(problem=exc)) from None
        stdio = self.transport.currentData() == "stdio"
        env = self._pairs(self.env, self.tr("Environment")) if stdio else ()
        headers = () if stdio else self._pairs(self.headers, self.tr("Headers"))
        fields = self._base.model_dump(mode="json")
        fields.update(
            name=self.name.text().strip(),
            enabled=self.enabled.isChecked(),
            transport=self.transport.currentData(),
            command=self.command.text().strip() if stdio else "",
            args=args if stdio else [],
            cwd=self.cwd.text().strip() if stdio else "",
            url=self.url.text().strip() if not stdio else "",
            envNames=sorted(name for name, _ in env),
            headerNames=sorted(name for name, _ in headers),
            timeoutSeconds=self.timeout.value(),
            startTimeoutSeconds=self.start_timeout.value(),
            trusted=self.trusted.isChecked(),
        )
        del fields["id"]
        try:
            server = make_server(server_id, **fields)
        except McpConfigError as exc:
            raise ValueError(str(exc)) from None
        return server, McpSecretEdit(server.id, self._source_id, env, headers)

    def _pairs(self, box: QPlainTextEdit, what: str) -> SecretPairs:
        pairs: dict[str, str | None] = {}
        for number, line in enumerate(box.toPlainText().splitlines(), 1):
            if not line.strip():
                continue
            name, sep, value = line.partition("=")
            if not sep or not name.strip():
                raise ValueError(self.tr("{what}, line {number}: write NAME=value.").format(what=what, number=number))
            pairs[name.strip()] = None if value == KEEP else value
        return tuple(pairs.items())

    @Slot()
    def _accept(self) -> None:
        try:
            server, secrets = self.draft()
        except ValueError as exc:
            self._show_error(str(exc))
            return
        self.hide()
        self.accepted.emit(server, secrets)

    @Slot()
    def _cancel(self) -> None:
        self.hide()
        self.cancelled.emit()

    def _show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.setVisible(bool(message))

    # -- language ----------------------------------------------------------------------------------

    def _retitle(self) -> None:
        self.title.setText(self.tr("New MCP server") if self._new else self.tr("Edit MCP server"))

    def retranslate_ui(self) -> None:
        self._retitle()
        labels = {
            "id": self.tr("Id"),
            "name": self.tr("Name"),
            "enabled": self.tr("Enabled"),
            "transport": self.tr("Transport"),
            "command": self.tr("Command"),
            "args": self.tr("Arguments"),
            "cwd": self.tr("Working folder"),
            "env": self.tr("Environment"),
            "url": self.tr("URL"),
            "headers": self.tr("Headers"),
            "timeout": self.tr("Tool timeout"),
            "start_timeout": self.tr("Start timeout"),
            "trusted": self.tr("Trusted"),
        }
        for name, text in labels.items():
            self.rows[name].label.setText(text)
        for index, text in enumerate((self.tr("stdio (a command)"), self.tr("Streamable HTTP"), self.tr("HTTP + SSE (legacy)"))):
            self.transport.setItemText(index, text)
        self.enabled.setText(self.tr("Offer this server's tools to the model"))
        self.trusted.setText(self.tr("Run its tools without asking for approval"))
        self.timeout.setSuffix(self.tr(" s"))
        self.start_timeout.setSuffix(self.tr(" s"))
        self.start_timeout.setToolTip(self.tr("How long the server may take to start and answer initialize"))
        self.server_id.setPlaceholderText(self.tr("letters, digits, - and _ (its tools are mcp__id__tool)"))
        self.command.setPlaceholderText("uvx")
        self.args.setPlaceholderText("mcp-server-time --local-timezone UTC")
        self.url.setPlaceholderText("https://example.com/mcp")
        secret_hint = self.tr("NAME=value, one a line; the values are kept in the keyring, never in settings.json.")
        self.env.setPlaceholderText(secret_hint)
        self.headers.setPlaceholderText(secret_hint)
        self.done_button.setText(self.tr("Done"))
        self.cancel_button.setText(self.tr("Cancel"))
