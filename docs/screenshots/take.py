"""Take the README screenshots: the real app on a temporary data folder with the demo provider.

Run from the repository root (it needs a display; Xvfb is fine, ``offscreen`` works too but
draws with fewer fonts)::

    xvfb-run -a .venv/bin/python docs/screenshots/take.py
    QT_QPA_PLATFORM=offscreen .venv/bin/python docs/screenshots/take.py --out /tmp/shots

It drives the window the way a user would (through its widgets and the worker's signals),
waits for each state, grabs the window and writes ``NN-name.png``; ``optipng`` or ``pngquant``
shrink the files when they are installed. Nothing of the user's own data or settings is touched:
every folder the app uses points into a temporary directory.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SIZE = (1180, 760)
sys.path.insert(0, str(HERE))
from shots import EventWaiter, isolate, optimise  # noqa: E402


def _project_folder(base: Path) -> Path:
    folder = base / "Travel Guide"
    (folder / "artifacts").mkdir(parents=True)
    (folder / "README.md").write_text(
        "# Travel guide\n\nA small guide to Lisbon written with CrewAgent: neighbourhoods, food and day trips.\n",
        encoding="utf-8",
    )
    (folder / "notes.md").write_text("- Alfama at sunrise\n- Tram 28 before 9 am\n- Pastéis in Belém\n", encoding="utf-8")
    (folder / "artifacts" / "itinerary.md").write_text("# Three days in Lisbon\n\n## Day 1\nAlfama, Castelo, Baixa.\n", encoding="utf-8")
    (folder / "artifacts" / "budget.csv").write_text("item,eur\nhotel,360\nfood,150\n", encoding="utf-8")
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=HERE, help="where the PNGs go (default: docs/screenshots)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary data folder")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="crewagent-shots-"))
    isolate(base)
    sys.path.insert(0, str(ROOT / "desktop"))
    try:
        return _run(base, args.out)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


def _run(base: Path, out: Path) -> int:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QAbstractItemView, QApplication, QWidget

    from crewagent.ui import app as app_module
    from crewagent.ui.dialogs import NewProjectAnswer
    from crewagent.ui.i18n import LanguageManager
    from crewagent.ui.mainwindow import MainWindow
    from crewagent.ui.theme import ThemeManager
    from crewagent.ui.timeline import TimelineRole
    from crewagent.worker import start_worker

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app_module.setup_application(app)
    theme, languages = ThemeManager(app), LanguageManager(app)
    worker = start_worker(str(base / "data"))
    out.mkdir(parents=True, exist_ok=True)

    class Dialogs:
        """Answers the Start page's questions (no modal dialog in a script)."""

        def __init__(self) -> None:
            self.folder = ""

        def ask_new_project(self, parent: QWidget) -> NewProjectAnswer | None:
            return NewProjectAnswer(self.folder, "Travel Guide")

        def ask_project_folder(self, parent: QWidget) -> str | None:
            return self.folder

    dialogs = Dialogs()
    state = QSettings(str(base / "config" / "ui-state.ini"), QSettings.Format.IniFormat)
    window = MainWindow(worker.worker, dialogs=dialogs, state=state, theme=theme, languages=languages)
    window.resize(*SIZE)
    window.show()

    waiter = EventWaiter("take.py", timeout=15.0)
    spin, wait_until = waiter.spin, waiter.wait_until

    def settle(ms: int = 300) -> None:
        spin(ms)

    saved: list[Path] = []

    def shot(name: str, widget: QWidget | None = None) -> None:
        settle()
        path = out / f"{name}.png"
        (widget or window).grab().save(str(path), "PNG")
        saved.append(path)
        print(f"saved {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")

    conversation = window.project_view.conversation
    works = window.project_view.works

    def say(text: str) -> None:
        conversation.composer.input.setPlainText(text)
        conversation.composer.submit()
        wait_until(lambda: conversation.busy, f"the turn of {text!r} to start")
        wait_until(lambda: not conversation.busy, f"the turn of {text!r} to end", timeout=30)

    def new_conversation(kind: str) -> None:
        count = works.model.rowCount()
        window.project_view.request_new_conversation(kind)
        wait_until(lambda: works.model.rowCount() > count, "the new conversation")
        wait_until(lambda: conversation.loaded and bool(conversation.conversation_id), "the conversation to load")

    def rename_current(title: str) -> None:
        project = window.project_view.project
        assert project is not None
        window.project_view.rename_requested.emit(project.id, conversation.conversation_id, title)
        wait_until(lambda: conversation.header.title.text() == title, f"the title {title!r}")

    def expand(call_id: str) -> None:
        """Open a tool part and show the turn from its user message down."""
        conversation.timeline.set_tool_expanded(f"tool:{call_id}", True)
        settle(100)
        conversation.timeline.scrollTo(conversation.model.index(0, 0), QAbstractItemView.ScrollHint.PositionAtTop)

    def apply_settings(page: str, combo: str, value: str) -> None:
        dialog = window.settings_dialog
        window.show_settings()
        box = getattr(getattr(dialog, page), combo)
        box.setCurrentIndex(box.findData(value))
        dialog.apply_button.click()
        wait_until(lambda: window.settings is not None and getattr(window.settings.appearance, combo) == value, f"{combo} {value}")
        dialog.close()

    wait_until(lambda: window.settings is not None, "the settings")
    wait_until(lambda: window.status_provider.text() != "", "the provider")

    # A project with a few conversations in the Works list.
    dialogs.folder = str(_project_folder(base))
    window.start_page.prompt_new_project()
    wait_until(lambda: window.stack.currentWidget() is window.project_view and window.project_view.loaded, "the project")
    for kind, title, message in (
        ("chat", "Packing list", "What should I pack for three days in Lisbon?"),
        ("agent", "Review the itinerary", "read artifacts/itinerary.md"),
    ):
        new_conversation(kind)
        say(message)
        rename_current(title)

    # 1. the Start page, with the project in Recent Projects
    window.show_start_page()
    wait_until(lambda: window.start_page.view.model().rowCount() > 0, "the recent projects")
    shot("01-start-page")

    # 2. back in the project: the Works list and a tool turn with its part collapsed
    window.start_page.request_project(dialogs.folder)
    wait_until(lambda: window.stack.currentWidget() is window.project_view and window.project_view.loaded, "the project again")
    new_conversation("chat")
    say("list the files")
    rename_current("What is in the project?")
    wait_until(lambda: conversation.model.rowCount() >= 3, "the rows of the tool turn")
    shot("02-project-tool-collapsed")

    # 3. the same turn, the tool part expanded
    call_id = next(
        str(conversation.model.index(row, 0, top).data(TimelineRole.TOOL_CALL_ID))
        for top in conversation.model.iter_top()
        for row in range(conversation.model.rowCount(top))
    )
    expand(call_id)
    shot("03-tool-expanded")
    conversation.timeline.set_tool_expanded(f"tool:{call_id}", False)

    # 4. an error part with Retry and Continue
    new_conversation("chat")
    say("fail mid-stream")
    rename_current("A dropped connection")
    wait_until(lambda: bool(conversation.model.index(conversation.model.rowCount() - 1, 0).data(TimelineRole.IS_ERROR)), "the error part")
    shot("04-error-retry-continue")

    # 5. Agent mode: the agent's menu (Enter on an empty line)
    new_conversation("agent")
    rename_current("Ask Ada")
    conversation.composer.input.clear()
    conversation.composer.submit()
    wait_until(lambda: conversation.agent_menu.isVisible(), "the agent menu")
    shot("05-agent-menu")
    conversation.agent_menu.dismiss()

    # 6. Settings
    dialog = window.settings_dialog
    window.show_settings()
    dialog.resize(900, 620)
    wait_until(lambda: dialog.isVisible(), "the settings dialog")
    shot("06-settings", dialog)
    dialog.close()

    # 7. the dark theme, on the tool turn
    works.select(_conversation_titled(works, "What is in the project?"))
    wait_until(lambda: conversation.header.title.text() == "What is in the project?" and conversation.loaded, "the tool turn")
    apply_settings("appearance_page", "theme", "dark")
    expand(call_id)
    shot("07-dark-theme")
    conversation.timeline.set_tool_expanded(f"tool:{call_id}", False)

    # 8. the Chinese UI (light again), on the error part
    apply_settings("appearance_page", "theme", "light")
    apply_settings("appearance_page", "language", "zh_CN")
    works.select(_conversation_titled(works, "A dropped connection"))
    wait_until(lambda: conversation.header.title.text() == "A dropped connection" and conversation.loaded, "the error part")
    shot("08-chinese-ui")
    apply_settings("appearance_page", "language", "en")

    # 9. a delegated task (issue 6): the Task part with its type, status and summary
    new_conversation("chat")
    say("delegate: summarise the README")
    rename_current("Delegate the README")
    task = next(
        conversation.model.index(row, 0, top)
        for top in conversation.model.iter_top()
        for row in range(conversation.model.rowCount(top))
        if conversation.model.index(row, 0, top).data(TimelineRole.TOOL_NAME) == "task"
    )
    wait_until(lambda: getattr(task.data(TimelineRole.SUBAGENT), "status", "") == "completed", "the subagent to complete")
    shot("09-subagent-task")

    # 10. "Open subagent conversation": the child's own conversation, read-only, in a tab
    subagent = task.data(TimelineRole.SUBAGENT)
    conversation.timeline.action_requested.emit("open_subagent", str(task.data(TimelineRole.KEY)), subagent.session_id)
    tabs = window.project_view.subagent_tabs
    wait_until(lambda: (page := tabs.page_of(subagent.session_id)) is not None and page.loaded, "the subagent's tab")
    shot("10-subagent-tab")
    tabs.close_all()

    window.close()
    wait_until(lambda: not window.isVisible(), "the window to close")
    worker.stop()
    optimise(saved)
    for path in saved:
        print(f"{path.name}: {path.stat().st_size // 1024} KB")
    return 0


def _conversation_titled(works: object, title: str) -> str:
    from crewagent.ui.models import ConversationRole

    model = works.model  # type: ignore[attr-defined]
    for row in range(model.rowCount()):
        summary = model.index(row, 0).data(ConversationRole.SUMMARY)
        if summary is not None and summary.title == title:
            return str(summary.id)
    raise SystemExit(f"take.py: no conversation titled {title!r}")


if __name__ == "__main__":
    sys.exit(main())
