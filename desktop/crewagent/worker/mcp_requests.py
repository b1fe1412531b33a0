"""The MCP requests of Settings → MCP, a child of the Worker (it lives on the worker thread).

Requests (slots): ``save_secrets(McpSecretEdit)``, ``delete_secrets(server_id)``,
``test_server(McpDraft)``, ``import_file(path)``. The keyring writes run on the worker thread, as
the API keys' do; a test (a process started, its tools listed, stopped) and a file read run in
the worker's background pool, and their answers are emitted from the worker thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from crewagent.worker.background import BackgroundJobs
from crewagent.worker.mcp_ops import McpDraft, McpOps, McpSecretEdit
from crewagent.worker.threads import on_own_thread


class McpRequests(QObject):
    """See the module docstring."""

    #: ``McpTestReport``: the answer to ``test_server``.
    tested = Signal(object)

    #: ``McpImport``: the answer to ``import_file``.
    imported = Signal(object)

    #: ``server_id``: its secret values were stored (``save_secrets``) or removed (``delete_secrets``).
    secrets_saved = Signal(str)

    def __init__(self, jobs: BackgroundJobs, parent: QObject | None = None, *, ops: McpOps | None = None):
        super().__init__(parent)
        self._jobs = jobs
        self._ops = ops or McpOps()

    def _submit(self, name: str, job: Callable[[], Any], done: Callable[[Any], None]) -> None:
        self._jobs.submit(name, job, done)

    @Slot(object)
    @on_own_thread
    def save_secrets(self, edit: object) -> None:
        if not isinstance(edit, McpSecretEdit):
            raise TypeError(f"save_secrets takes an McpSecretEdit, got {type(edit).__name__}")
        self._ops.save_secrets(edit)
        self.secrets_saved.emit(edit.server_id)

    @Slot(str)
    @on_own_thread
    def delete_secrets(self, server_id: str) -> None:
        self._ops.delete_secrets(server_id)
        self.secrets_saved.emit(server_id)

    @Slot(object)
    @on_own_thread
    def test_server(self, draft: object) -> None:
        if not isinstance(draft, McpDraft):
            raise TypeError(f"test_server takes an McpDraft, got {type(draft).__name__}")
        self._submit("test_mcp_server", lambda: self._ops.test(draft), self.tested.emit)

    def cancel_tests(self) -> None:
        """Quitting (any thread): cancel the Test Connections in flight, so that closing the pool does not wait for them."""
        self._ops.cancel_tests()

    @Slot(str)
    @on_own_thread
    def import_file(self, path: str) -> None:
        self._submit("import_mcp_servers", lambda: self._ops.read_import(path), self.imported.emit)
