"""Settings → Packages as a user meets it: import a broken package and a good one, see what is installed, remove."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QItemSelectionModel, QObject, Qt, Slot
from PySide6.QtWidgets import QApplication

from crewagent.core.packages import PackageStore
from crewagent.core.runs import RunIndex
from crewagent.core.store import RuntimeStore
from crewagent.ui.settings import SettingsDialog
from crewagent.ui.settings.package_models import PackageRole, PackagesModel, ProblemsModel
from crewagent.ui.settings.packages_page import PackagesPage
from crewagent.worker import Worker, WorkerThread
from crewagent.worker.values import PackagesListing
from tests.core.package_helpers import clone, flat_package, write_zip
from tests.core.run_helpers import install_notes, start_run, write_package
from tests.ui.conftest import ScriptedDialogs, SettingsOnly


class Heard(QObject):
    """The worker's package signals, received on the GUI thread (queued), in order: ``(name, value)``.

    qtbot.waitSignal on a worker signal would run its timer cleanup on the worker thread.
    """

    def __init__(self, worker: Worker):
        super().__init__()
        self.events: list[tuple[str, object]] = []
        worker.package_imported.connect(self._imported)
        worker.package_removal.connect(self._removal)
        worker.packages_loaded.connect(self._packages)
        worker.agents_loaded.connect(self._agents)

    @Slot(object)
    def _imported(self, value: object) -> None:
        self.events.append(("package_imported", value))

    @Slot(object)
    def _removal(self, value: object) -> None:
        self.events.append(("package_removal", value))

    @Slot(object)
    def _packages(self, value: object) -> None:
        self.events.append(("packages_loaded", value))

    @Slot(object)
    def _agents(self, value: object) -> None:
        self.events.append(("agents_loaded", value))

    def of(self, name: str) -> list[Any]:
        return [value for heard, value in self.events if heard == name]


@pytest.fixture
def heard(worker_thread: WorkerThread) -> Heard:
    return Heard(worker_thread.worker)


@pytest.fixture
def main(settings_only: SettingsOnly) -> SettingsOnly:
    """The dialog as the window wires it, without the window: these claims are the Packages page's."""
    return settings_only


def open_packages(qtbot: Any, main: SettingsOnly) -> PackagesPage:
    dialog: SettingsDialog = main.settings_dialog
    dialog.show_settings("packages")
    page = dialog.packages_page
    qtbot.waitUntil(lambda: page.isVisible() and page.packages.rowCount() > 0)  # the built-in example at least
    return page


def broken_package(tmp_path: Path) -> Path:
    """A .bmad with three problems in two files: a bad version, an unknown agent, a missing step file."""
    files = clone(flat_package(name="Broken", steps=2))
    files["bmad.json"]["version"] = "one"
    files["workflow.graph.json"]["nodes"][0]["agentId"] = "nobody"
    del files["steps/end.md"]
    return write_zip(files, tmp_path / "broken.bmad")


def listed_names(page: PackagesPage) -> list[str]:
    return [page.packages.index(row, 0).data() for row in range(page.packages.rowCount())]


def test_importing_a_broken_package_lists_every_problem_with_its_file_and_field(
    qtbot: Any, main: SettingsOnly, dialogs: ScriptedDialogs, tmp_path: Path, isolated_dirs: dict[str, Path]
) -> None:
    page = open_packages(qtbot, main)
    dialogs.package_file = str(broken_package(tmp_path))
    page.import_file_button.click()
    # Busy at once, naming the file, with the import buttons off until the answer.
    assert page.busy.isVisible() and "broken.bmad" in page.import_status.text()
    assert not page.import_file_button.isEnabled() and not page.import_folder_button.isEnabled()
    qtbot.waitUntil(lambda: page.problems_view.isVisible())

    assert not page.busy.isVisible() and page.import_file_button.isEnabled()
    assert "broken.bmad was not installed" in page.import_status.text() and "3 problem" in page.import_status.text()
    view = page.problems_view
    rows = [[view.model().index(row, column).data() for column in range(3)] for row in range(view.model().rowCount())]
    assert [row[:2] for row in rows] == [
        ["bmad.json", "/version"],
        ["workflow.graph.json", "/nodes/0/agentId"],
        ["workflow.graph.json", "/nodes/3/file"],
    ]
    assert "nobody" in rows[1][2] and "steps/end.md" in rows[2][2]
    assert not [p for p in (isolated_dirs["data"] / "packages").iterdir() if "roken" in p.name]  # nothing installed

    # Each problem is copyable: one selected row with Ctrl+C; all of them with Copy.
    view.selectionModel().select(view.model().index(1, 0), QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.clipboard().text() == "workflow.graph.json#/nodes/0/agentId: the agent 'nobody' is not in the package's agents"
    view.clearSelection()
    page.copy_problems.click()
    copied = QApplication.clipboard().text().splitlines()
    assert len(copied) == 3 and copied[0].startswith("bmad.json#/version: ")


def test_importing_a_good_package_lists_it_and_its_workflows_and_agents_without_a_restart(
    qtbot: Any, main: SettingsOnly, dialogs: ScriptedDialogs, heard: Heard, tmp_path: Path
) -> None:
    page = open_packages(qtbot, main)
    assert "notes 1.0.0" not in listed_names(page)
    dialogs.package_folder = str(write_package(tmp_path / "notes-src"))
    page.import_folder_button.click()
    qtbot.waitUntil(lambda: [name for name, _ in heard.events][-3:] == ["package_imported", "packages_loaded", "agents_loaded"])
    # The listing every view follows (the Workflow header's picker too) has the new workflow.
    listing = heard.of("packages_loaded")[-1]
    assert isinstance(listing, PackagesListing)
    assert ("notes", "notes") in [(package.name, workflow.id) for package, workflow in listing.workflows()]
    agents = heard.of("agents_loaded")[-1]
    assert {agent.name for agent in agents if agent.source == "notes-1.0.0"} == {"Wren", "Cato"}

    qtbot.waitUntil(lambda: "notes 1.0.0" in listed_names(page))
    assert page.import_status.text().startswith("✓ Installed notes 1.0.0: 1 workflow(s), 2 agent(s).")
    assert not page.problems_view.isVisible()
    assert page.selected_package() == "notes-1.0.0"  # the new package is shown selected, with its contents
    row = page.packages.package_row("notes-1.0.0")
    children = [page.packages.index(child, 0, row).data() for child in range(page.packages.rowCount(row))]
    assert children == ["Workflow: Notes", "Agent: Wren", "Agent: Cato"]
    assert page.tree.isExpanded(row)


def select_package(page: PackagesPage, package_id: str) -> None:
    index = page.packages.package_row(package_id)
    assert index.isValid(), listed_names(page)
    page.tree.selectionModel().setCurrentIndex(index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)


def test_removing_a_package_no_run_uses_asks_nothing(
    qtbot: Any, main: SettingsOnly, dialogs: ScriptedDialogs, heard: Heard, tmp_path: Path, isolated_dirs: dict[str, Path]
) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    page = open_packages(qtbot, main)
    qtbot.waitUntil(lambda: "notes 1.0.0" in listed_names(page))
    select_package(page, package.id)
    page.remove_button.click()
    qtbot.waitUntil(lambda: [name for name, _ in heard.events][-3:] == ["package_removal", "packages_loaded", "agents_loaded"])
    assert "confirm_remove_package" not in dialogs.asked
    assert not [agent for agent in heard.of("agents_loaded")[-1] if agent.source == package.id]
    assert not package.root.exists()
    qtbot.waitUntil(lambda: "notes 1.0.0" not in listed_names(page))
    assert page.remove_status.text() == "✓ Removed notes 1.0.0."


def test_removing_a_package_a_run_uses_names_the_run_and_asks_first(
    qtbot: Any, main: SettingsOnly, dialogs: ScriptedDialogs, tmp_path: Path, isolated_dirs: dict[str, Path]
) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    store = RuntimeStore(isolated_dirs["data"])
    project = store.create_project(tmp_path / "travel", "Travel Guide")
    run = start_run(store, project, package)
    page = open_packages(qtbot, main)
    qtbot.waitUntil(lambda: "notes 1.0.0" in listed_names(page))

    # Answered "Keep": nothing is removed.
    select_package(page, package.id)
    page.remove_button.click()
    qtbot.waitUntil(lambda: "kept" in page.remove_status.text())
    assert dialogs.removal_questions == [("notes 1.0.0", [f"Travel Guide: workflow notes (run {run.runId[:8]}, Idle)"])]
    assert package.root.exists() and page.remove_button.isEnabled()

    # Answered "Remove": removed; the run and its conversation are kept.
    dialogs.remove_package_anyway = True
    page.remove_button.click()
    qtbot.waitUntil(lambda: "notes 1.0.0" not in listed_names(page))
    assert len(dialogs.removal_questions) == 2
    assert not package.root.exists() and package.id not in PackageStore(isolated_dirs["data"]).ids()
    assert page.remove_status.text() == "✓ Removed notes 1.0.0."
    assert [r.runId for r in RunIndex(project.runtime_dir).list()] == [run.runId]


def test_a_broken_installed_package_is_listed_with_its_problems_and_can_be_removed(
    qtbot: Any, main: SettingsOnly, isolated_dirs: dict[str, Path]
) -> None:
    page = open_packages(qtbot, main)
    broken = isolated_dirs["data"] / "packages" / "broken-1.0.0"
    broken.mkdir()
    (broken / "bmad.json").write_text("{not json", encoding="utf-8")
    page.listing_requested.emit()
    qtbot.waitUntil(lambda: page.packages.package_row("broken-1.0.0").isValid())
    row = page.packages.package_row("broken-1.0.0")
    assert row.data() == "broken-1.0.0 (cannot be loaded)" and row.data(PackageRole.KIND) == "broken"
    assert page.packages.index(0, 0, row).data() == "bmad.json"
    select_package(page, "broken-1.0.0")
    page.remove_button.click()
    qtbot.waitUntil(lambda: not page.packages.package_row("broken-1.0.0").isValid())
    assert not broken.exists()


def test_the_models_pass_the_model_tester(qtmodeltester: Any, tmp_path: Path, isolated_dirs: dict[str, Path]) -> None:
    from crewagent.core.packages import PackageError

    problems = ProblemsModel()
    qtmodeltester.check(problems)
    try:
        PackageStore(isolated_dirs["data"]).import_package(broken_package(tmp_path))
    except PackageError as exc:
        problems.set_problems(exc.problems)
    assert problems.rowCount() == 3
    qtmodeltester.check(problems)
    problems.set_problems(())
    qtmodeltester.check(problems)

    packages = PackagesModel()
    qtmodeltester.check(packages)
    store = PackageStore(isolated_dirs["data"])
    install_notes(isolated_dirs["data"], tmp_path)
    (isolated_dirs["data"] / "packages" / "broken-2.0.0").mkdir()
    listed, broken = store.scan()
    packages.set_listing(PackagesListing(tuple(listed), tuple(broken)))
    assert packages.rowCount() == 2
    qtmodeltester.check(packages)
    packages.set_listing(PackagesListing(tuple(listed)))
    qtmodeltester.check(packages)
