"""The Files panel and file tabs: artifacts first, dot-files and runtime data hidden, Markdown/text/other tabs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QTabBar

from crewagent.ui.file_tabs import FilePage
from crewagent.ui.files_panel import FilesPanel
from crewagent.ui.mainwindow import MainWindow
from crewagent.worker.search import PREVIEW_LIMIT_BYTES
from tests.ui.conftest import open_project


def listed(panel: FilesPanel) -> list[str]:
    root = panel.tree.rootIndex()
    return sorted(panel.proxy.index(row, 0, root).data() for row in range(panel.proxy.rowCount(root)))


def test_the_tree_starts_in_artifacts_and_hides_dot_files(qtbot: Any, project: Any, window: MainWindow) -> None:
    artifacts = Path(project.artifacts_dir)
    (artifacts / "report.md").write_text("# Report\n\nAll **good**.\n", encoding="utf-8")
    (artifacts / ".draft.md").write_text("secret", encoding="utf-8")
    (Path(project.root) / "README.md").write_text("hello", encoding="utf-8")
    open_project(qtbot, window, project.root)
    view = window.project_view
    view.sidebar_switch.setCurrentIndex(1)
    files = view.files
    assert files.isVisible()

    qtbot.waitUntil(lambda: listed(files) == ["report.md"])
    files.all_button.click()
    qtbot.waitUntil(lambda: listed(files) == ["README.md", "artifacts"])  # no .crewagent.json


def test_runtime_data_inside_the_project_is_not_listed(qtbot: Any, tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "artifacts").mkdir(parents=True)
    (root / "runtime" / "projects").mkdir(parents=True)
    (root / "notes.txt").write_text("n", encoding="utf-8")
    panel = FilesPanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.show_project(str(root), str(root / "artifacts"), excluded=[str(root / "runtime")])
    panel.all_button.click()
    qtbot.waitUntil(lambda: listed(panel) == ["artifacts", "notes.txt"])
    panel.artifacts_button.click()
    qtbot.waitUntil(panel.empty_label.isVisible)
    assert "Nothing in artifacts/" in panel.empty_label.text()


def test_files_open_in_tabs_as_markdown_text_or_open_in_system_app(
    qtbot: Any, project: Any, window: MainWindow
) -> None:
    artifacts = Path(project.artifacts_dir)
    (artifacts / "report.md").write_text("# Quarterly report\n\nAll **good**.\n", encoding="utf-8")
    (artifacts / "notes.txt").write_text("line one\nline two\n", encoding="utf-8")
    (artifacts / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (artifacts / "huge.log").write_bytes(b"x" * (PREVIEW_LIMIT_BYTES + 1))
    open_project(qtbot, window, project.root)
    view = window.project_view
    tabs, file_tabs = view.tabs, view.file_tabs
    opened: list[QUrl] = []
    file_tabs._open_externally = lambda url: opened.append(url) or True

    def open_and_wait(name: str) -> FilePage:
        view.files.file_open_requested.emit(str(artifacts / name))
        page = file_tabs.page_of(str(artifacts / name))
        assert page is not None and tabs.currentWidget() is page
        qtbot.waitUntil(lambda: page.kind != "loading")
        return page

    markdown = open_and_wait("report.md")
    assert markdown.kind == "markdown" and markdown.stack.currentWidget() is markdown.markdown
    assert markdown.markdown.toPlainText().startswith("Quarterly report")  # rendered, not "# ..."
    text = open_and_wait("notes.txt")
    assert text.stack.currentWidget() is text.text and text.text.toPlainText() == "line one\nline two\n"
    binary = open_and_wait("photo.png")
    assert binary.stack.currentWidget() is binary.notice and "not a text file" in binary.notice_text.text()
    binary.open_button.click()
    assert opened == [QUrl.fromLocalFile(str(artifacts / "photo.png"))]
    big = open_and_wait("huge.log")
    assert "too large" in big.notice_text.text()
    assert [tabs.tabText(i) for i in range(tabs.count())] == ["Conversation", "report.md", "notes.txt", "photo.png", "huge.log"]

    # Opening an open file switches to its tab; file tabs close, the Conversation tab cannot.
    view.files.file_open_requested.emit(str(artifacts / "report.md"))
    assert tabs.currentWidget() is markdown and tabs.count() == 5
    assert tabs.tabBar().tabButton(0, QTabBar.ButtonPosition.RightSide) is None
    assert tabs.tabBar().tabButton(1, QTabBar.ButtonPosition.RightSide) is not None
    tabs.tabCloseRequested.emit(0)
    tabs.tabCloseRequested.emit(1)
    assert tabs.count() == 4 and tabs.tabText(0) == "Conversation"

    window.exit_project_action.trigger()  # leaving the project closes its file tabs
    assert tabs.count() == 1


def test_the_files_filter_passes_the_model_tester(qtbot: Any, qtmodeltester: Any, tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "artifacts").mkdir(parents=True)
    (root / "runtime" / "projects").mkdir(parents=True)
    (root / "notes.txt").write_text("n", encoding="utf-8")
    panel = FilesPanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.show_project(str(root), str(root / "artifacts"), excluded=[])
    panel.all_button.click()
    qtbot.waitUntil(lambda: listed(panel) == ["artifacts", "notes.txt", "runtime"])
    qtmodeltester.check(panel.proxy)
    panel.proxy.set_excluded([str(root / "runtime")])  # the filter changes under the view
    qtbot.waitUntil(lambda: listed(panel) == ["artifacts", "notes.txt"])
    qtmodeltester.check(panel.proxy)
