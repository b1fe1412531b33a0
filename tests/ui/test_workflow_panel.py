"""The Workflow header's panel on its own: which run Resume offers, and the picker's model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crewagent.core.packages import PackageStore, ensure_builtin_packages
from crewagent.core.runs.conversation import RunOverview
from crewagent.ui.workflow_panel import WorkflowPanel
from crewagent.worker.values import PackagesListing
from tests.core.run_helpers import install_notes


def run(run_id: str, phase: str = "idle", *, installed: bool = True) -> RunOverview:
    return RunOverview(run_id, "conv", "notes-1.0.0", "notes", "1.0.0", "notes", "Notes", phase, "2026-01-01T00:00:00Z",  # type: ignore[arg-type]
                       package_installed=installed)


def test_resume_is_offered_for_a_run_that_can_go_on_and_the_users_pick_survives_a_refresh(qtbot: Any) -> None:
    panel = WorkflowPanel()
    qtbot.addWidget(panel)
    older, done, gone = run("run_a", "waiting-user"), run("run_b", "completed"), run("run_c", installed=False)
    panel.set_runs((older, done, gone), "run_b", 3)
    assert panel.runs.currentData() == "run_b" and not panel.resume_button.isEnabled()
    assert panel.count.text() == "3 runs started in this conversation"

    panel.runs.setCurrentIndex(0)
    assert panel.resume_button.isEnabled() and "Waiting for you" in panel.runs.currentText()
    with qtbot.waitSignal(panel.resume_requested) as resumed:
        panel.resume_button.click()
    assert resumed.args == ["run_a"]

    panel.set_runs((older, done, gone), "run_b", 3)  # a refresh: the pick stays
    assert panel.runs.currentData() == "run_a"
    panel.set_busy(True)
    assert not panel.resume_button.isEnabled() and not panel.start_button.isEnabled()
    panel.set_busy(False)
    panel.set_runs((older, done, gone, run("run_d")), "run_d", 4)  # a new active run is picked
    assert panel.runs.currentData() == "run_d" and panel.resume_button.isEnabled()
    panel.runs.setCurrentIndex(2)
    assert not panel.resume_button.isEnabled()  # its package is gone
    panel.set_runs((), None, 0)
    assert not panel.runs.isEnabled() and panel.count.text() == "No run started in this conversation yet"


def test_the_picker_lists_each_workflow_keeps_the_pick_and_starts_it(
    qtbot: Any, qtmodeltester: Any, tmp_path: Path, isolated_dirs: dict[str, Path]
) -> None:
    panel = WorkflowPanel()
    qtbot.addWidget(panel)
    assert not panel.start_button.isEnabled() and "import one" in panel.description.toolTip()
    ensure_builtin_packages(isolated_dirs["data"])
    store = PackageStore(isolated_dirs["data"])
    panel.set_listing(PackagesListing(tuple(store.list())))
    qtmodeltester.check(panel.model)
    builtin = store.list()[0]
    panel.want_workflow(None, None)
    assert panel.selected_workflow() == (builtin.id, "project-brief")

    notes = install_notes(isolated_dirs["data"], tmp_path)
    panel.want_workflow(notes.id, "notes")  # the conversation's workflow, not listed yet: the first one for now ...
    assert panel.selected_workflow() == (builtin.id, "project-brief")
    panel.set_listing(PackagesListing(tuple(store.list())))
    qtmodeltester.check(panel.model)
    assert panel.model.rowCount() == 2
    assert panel.selected_workflow() == (notes.id, "notes")  # ... and it once it is
    with qtbot.waitSignal(panel.start_requested) as started:
        panel.start_button.click()
    assert started.args == [notes.id, "notes"]

    row = panel.model.row_of(builtin.id, "project-brief")
    panel.picker.setCurrentIndex(row)  # type: ignore[arg-type]
    panel.picker.activated.emit(row)  # what a pick in the list sends
    panel.set_listing(PackagesListing(tuple(store.list())))  # e.g. after an import
    assert panel.selected_workflow() == (builtin.id, "project-brief")  # the user's pick is kept


def test_the_panel_and_the_card_speak_chinese(qtbot: Any, qapp: Any) -> None:
    from crewagent.ui.i18n import LanguageManager
    from crewagent.ui.missing_package import MissingPackageCard

    panel, card = WorkflowPanel(), MissingPackageCard()
    qtbot.addWidget(panel)
    qtbot.addWidget(card)
    panel.set_runs((run("run_a", "completed"),), "run_a", 1)
    card.show_run(run("run_a", installed=False))
    languages = LanguageManager(qapp)
    try:
        languages.set_language("zh_CN")
        qtbot.waitUntil(lambda: panel.start_button.text() == "开始工作流")
        assert panel.resume_button.text() == "继续运行" and "已完成" in panel.runs.currentText()
        assert panel.count.text() == "此会话已开始 1 次运行"
        assert card.reimport_button.text() == "重新导入工作流包…" and "notes 1.0.0" in card.details.text() and "已不再安装" in card.details.text()
    finally:
        languages.set_language("en")
    qtbot.waitUntil(lambda: panel.start_button.text() == "Start Workflow")
    assert "Completed" in panel.runs.currentText()
