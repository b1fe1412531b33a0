"""The Settings dialog is built when the user first opens it, and then shows what a dialog built at start would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal

from crewagent.core.store._fsutil import atomic_write_json
from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.settings import SettingsDialog
from crewagent.worker import WorkerThread
from tests.core.package_helpers import flat_package, write_zip
from tests.ui.test_settings import main, no_system_keyring, open_settings  # noqa: F401  (fixtures)
from tests.ui.test_settings_packages import Heard, listed_names
from tests.worker.gui_thread import wait_signal


class _Saver(QObject):
    """Saves settings through the worker the way another part of the app does (the model picker, "Always allow")."""

    save = Signal(object)


def test_a_window_starts_without_a_settings_dialog_and_builds_one_on_first_use(qtbot: Any, main: MainWindow) -> None:  # noqa: F811
    assert main.findChildren(SettingsDialog) == []
    assert main.settings_opener.built is None and not main.settings_opener.is_open()

    dialog = open_settings(qtbot, main)  # Ctrl+,
    assert main.findChildren(SettingsDialog) == [dialog] and main.settings_opener.is_open()
    dialog.close()
    main.start_page.settings_button.click()  # the Start page's "Settings…": the same dialog again
    assert main.findChildren(SettingsDialog) == [dialog] and dialog.isVisible()


def test_a_dialog_opened_after_a_settings_change_and_a_package_import_shows_them(
    qtbot: Any, main: MainWindow, worker_thread: WorkerThread, tmp_path: Path  # noqa: F811
) -> None:
    worker = worker_thread.worker
    saver = _Saver()
    saver.save.connect(worker.save_settings, Qt.ConnectionType.QueuedConnection)
    heard = Heard(worker)
    saver.save.emit({"tools": {"timeoutSeconds": 42}})
    qtbot.waitUntil(lambda: main.settings is not None and main.settings.tools.timeoutSeconds == 42)
    with wait_signal(qtbot, worker.packages_loaded):  # the missing-package card's Re-import
        main.import_package_requested.emit(str(write_zip(flat_package(name="Later"), tmp_path / "later.bmad")))
    assert heard.of("package_imported")[-1].package is not None
    assert main.findChildren(SettingsDialog) == []

    main.show_settings()
    dialog = main.settings_dialog
    # At once, before any answer to what the opening asks the worker: what it had announced so far.
    assert dialog.tools_page.timeout.value() == 42
    dialog.show_settings("packages")
    assert "Later" in " ".join(listed_names(dialog.packages_page))
    assert not dialog.has_unsaved_changes()


def test_a_dialog_opened_after_settings_json_changed_on_disk_shows_the_file(
    qtbot: Any, main: MainWindow, isolated_dirs: dict[str, Path]  # noqa: F811
) -> None:
    # Another process (crewagent mcp add, a hand edit) writes the file while no dialog exists.
    atomic_write_json(isolated_dirs["config"] / "settings.json", {"tools": {"timeoutSeconds": 77}})
    dialog = open_settings(qtbot, main)
    qtbot.waitUntil(lambda: dialog.tools_page.timeout.value() == 77)  # the dialog asks the worker as it opens
    assert main.settings is not None and main.settings.tools.timeoutSeconds == 77
