"""The main window's wiring: its pages, dialogs and menus connected to the worker and the turn worker.

Functions of the window (the composition root builds; these connect what it built). UI -> worker
connections are queued, so the slot runs on the worker thread; worker -> UI ones are queued by Qt
because the receivers live on the GUI thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt

from crewagent.ui.index_watcher import IndexWatcher

if TYPE_CHECKING:
    from crewagent.ui.mainwindow import MainWindow
    from crewagent.ui.settings import SettingsDialog
    from crewagent.worker import Worker


def connect_signals(window: MainWindow) -> None:
    """The pages, the settings and the menus, wired to the worker."""
    worker, start, project = window._worker, window.start_page, window.project_view
    # UI -> worker: always queued, so the slot runs on the worker thread, never here.
    queued = Qt.ConnectionType.QueuedConnection
    start.refresh_requested.connect(worker.load_recent_projects, queued)
    start.new_project_requested.connect(worker.create_project, queued)
    start.open_project_requested.connect(worker.open_project, queued)
    start.forget_project_requested.connect(worker.forget_project, queued)
    project.new_conversation_requested.connect(worker.create_conversation, queued)
    project.rename_requested.connect(worker.rename_conversation, queued)
    project.delete_requested.connect(worker.delete_conversation, queued)
    project.search_requested.connect(worker.search_conversations, queued)
    project.file_read_requested.connect(worker.read_project_file, queued)

    # worker -> UI (queued by Qt: the receivers live on the GUI thread).
    worker.recent_projects_changed.connect(start.set_recent_projects)
    worker.project_opened.connect(window._on_project_opened)
    worker.project_unavailable.connect(window._on_project_unavailable)
    worker.conversations_loaded.connect(project.set_conversations)
    worker.conversation_created.connect(project.show_new_conversation)
    worker.conversation_changed.connect(project.update_conversation)
    worker.conversation_deleted.connect(project.remove_conversation)
    worker.search_results.connect(project.set_search_results)
    worker.file_read.connect(project.show_file_preview)
    project.notice.connect(window.message_bar.show_info)
    window.search_action.triggered.connect(window._focus_search)
    worker.error.connect(window._on_worker_error)
    # The full-output viewers' Save as…: the worker writes the file.
    project.conversation.outputs.save_requested.connect(worker.save_text, queued)
    worker.text_saved.connect(project.conversation.outputs.saved)
    project.connect_runs(worker)  # the Run workspace (issue 11, part 2)
    # Works rows of running turns: "streaming…" and the count so far (issue 18, stale state).
    rows = project.works.model
    worker.turns.turn_started.connect(rows.on_turn_started)
    worker.turns.turn_finished.connect(rows.on_turn_finished)
    worker.turns.message_persisted.connect(rows.on_message_persisted)
    worker.turns.conversation_counted.connect(rows.on_counted)
    # Conversations other processes (crewagent chat, import) add to the index (issue 18, stale state).
    watcher = IndexWatcher(project)
    worker.project_opened.connect(watcher.watch_project)
    watcher.changed.connect(worker.load_conversations, queued)

    # Settings: the dialog asks, the worker validates, saves and announces; all of it applies live.
    # The dialog itself is built and wired when first opened (ui/settings_opener.py, connect_settings_dialog).
    window.load_settings_requested.connect(worker.load_settings, queued)
    window.local_probe_requested.connect(worker.probe_local_servers, queued)
    worker.local_servers_found.connect(start.show_local_servers)
    worker.settings_changed.connect(window._on_settings_changed)
    window.settings_action.triggered.connect(window.show_settings)
    start.settings_requested.connect(window.show_settings)
    project.settings_requested.connect(window.show_settings)

    # Page navigation and actions.
    project.exit_requested.connect(window.show_start_page)
    window.new_project_action.triggered.connect(start.prompt_new_project)
    window.open_project_action.triggered.connect(start.prompt_open_project)
    window.new_conversation_action.triggered.connect(project.ask_new_conversation)
    window.exit_project_action.triggered.connect(window.show_start_page)
    window.quit_action.triggered.connect(window.close)
    window.about_action.triggered.connect(window._show_about)
    connect_turns(window)
    window.load_settings_requested.emit()
    window.describe_provider_requested.emit()


def connect_turns(window: MainWindow) -> None:
    """The Conversation tab, the approval dialog and the status bar, wired to the turn worker."""
    turns, project = window._worker.turns, window.project_view
    queued = Qt.ConnectionType.QueuedConnection
    project.connect_turns(turns)
    window.approvals.answered.connect(turns.answer_approval, queued)
    window.stop_all_requested.connect(turns.stop_all, queued)
    window.describe_provider_requested.connect(turns.describe_provider, queued)
    window.load_agents_requested.connect(window._worker.load_agents, queued)
    # Signal to signal: a lambda would run on the worker's thread (PySide calls a plain function there).
    window._worker.settings_changed.connect(window.describe_provider_requested)

    turns.turn_finished.connect(window._on_turn_finished)
    turns.prompt_withdrawn.connect(window.approvals.withdraw)
    turns.approval_requested.connect(window.approvals.ask)
    turns.provider_changed.connect(window._on_provider_changed)
    turns.error.connect(window._on_turn_error)
    window._worker.agents_loaded.connect(project.set_agents)
    project.conversation_notice.connect(lambda text: window.statusBar().showMessage(text, 5000))
    project.current_conversation_changed.connect(window._remember_conversation)
    window._worker.conversations_loaded.connect(window._reopen_conversation)
    window.load_agents_requested.emit()
    connect_runs(window)


def connect_runs(window: MainWindow) -> None:
    """Run mode (issue 11, the Workflow header): the installed workflows, "Try a workflow", the open
    run in the status bar, and Re-import Package for a run whose package is gone."""
    worker, project = window._worker, window.project_view
    queued = Qt.ConnectionType.QueuedConnection
    window.load_packages_requested.connect(worker.load_packages, queued)
    window.import_package_requested.connect(worker.import_package, queued)
    project.try_workflow_requested.connect(worker.try_workflow, queued)
    worker.packages_loaded.connect(project.conversation.set_packages)
    project.conversation.run_shown.connect(window._show_run)
    project.conversation.reimport_requested.connect(window._reimport_package)
    worker.package_imported.connect(window._on_package_imported)
    window.load_packages_requested.emit()


def connect_settings_dialog(dialog: SettingsDialog, worker: Worker) -> None:
    """The Settings dialog, wired to the worker when it is built (on first use). What the worker
    announces unasked (settings, packages, local servers, MCP states) reaches it through the
    SettingsOpener; these are its requests and their answers."""
    queued = Qt.ConnectionType.QueuedConnection
    dialog.save_requested.connect(worker.save_settings, queued)
    dialog.refresh_requested.connect(worker.refresh_settings, queued)
    dialog.api_key_submitted.connect(worker.set_api_key, queued)
    dialog.key_state_requested.connect(worker.load_api_key_state, queued)
    dialog.connection_test_requested.connect(worker.test_connection, queued)
    dialog.models_requested.connect(worker.list_models, queued)
    dialog.local_probe_requested.connect(worker.probe_local_servers, queued)
    worker.settings_invalid.connect(dialog.show_problems)
    worker.settings_saved.connect(dialog.confirm_saved)
    worker.api_key_changed.connect(dialog.set_key_state)
    worker.connection_tested.connect(dialog.show_connection_report)
    worker.models_listed.connect(dialog.set_model_list)
    # Settings → Packages (issue 11, part 4): install and remove; the new listing reaches every view.
    packages = dialog.packages_page
    packages.listing_requested.connect(worker.load_packages, queued)
    packages.import_requested.connect(worker.import_package, queued)
    packages.removal_requested.connect(worker.remove_package, queued)
    worker.package_imported.connect(packages.show_import)
    worker.package_removal.connect(packages.show_removal)
    # Settings → MCP (issue 12): secret values, Test Connection and imports go through Worker.mcp.
    mcp = dialog.mcp_page
    mcp.secrets_submitted.connect(worker.mcp.save_secrets, queued)
    mcp.secrets_removed.connect(worker.mcp.delete_secrets, queued)
    mcp.test_requested.connect(worker.mcp.test_server, queued)
    mcp.import_requested.connect(worker.mcp.import_file, queued)
    worker.mcp.tested.connect(mcp.show_test)
    worker.mcp.imported.connect(mcp.show_import)
    mcp.live_log.requested.connect(worker.turns.read_mcp_log, queued)  # the stderr of the servers the turns started
    worker.turns.mcp_log_read.connect(mcp.live_log.show)
