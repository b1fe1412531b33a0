"""Take the Run workspace screenshots (11-14): the example workflow on the demo provider, in the real app.

Run from the repository root, like take.py (shots.py holds what the two share)::

    QT_QPA_PLATFORM=offscreen .venv/bin/python docs/screenshots/take_run.py [--out DIR]

The run is started as the app does (a run of the built-in ``project-brief`` workflow in a Workflow
conversation), then driven by the user's answers: the first question is answered with its
defaults; at the review question the run waits, and the shots of a run in progress are taken
(Progress, Graph, Tool Calls); then the review is approved and the completed run is shot, with
the Logs panel open. Write tools are allowed for the conversation, as a user would.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SIZE = (1400, 820)
sys.path.insert(0, str(HERE))
from shots import EventWaiter, isolate, optimise  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=HERE, help="where the PNGs go (default: docs/screenshots)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="crewagent-run-shots-"))
    isolate(base)
    sys.path.insert(0, str(ROOT / "desktop"))
    try:
        return _run(base, args.out)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _run(base: Path, out: Path) -> int:
    from PySide6.QtCore import QObject, QSettings, Slot
    from PySide6.QtWidgets import QApplication, QWidget

    from crewagent.core.packages import PackageStore, ensure_builtin_packages
    from crewagent.core.runs import create_run
    from crewagent.core.store import RuntimeStore
    from crewagent.ui import app as app_module
    from crewagent.ui.mainwindow import MainWindow
    from crewagent.ui.theme import ThemeManager
    from crewagent.worker import start_worker
    from crewagent.worker.turn_values import ApprovalPrompt, AskUserPrompt

    data = base / "data"
    folder = base / "Launch Plan"
    folder.mkdir()
    (folder / "README.md").write_text("# Launch plan\n\nA small project to try a workflow.\n", encoding="utf-8")
    ensure_builtin_packages(data)
    package = next(p for p in PackageStore(data).list() if p.workflow("project-brief"))
    store = RuntimeStore(data)
    project = store.create_project(folder, "Launch Plan")
    meta = store.create_conversation(project.id, title="Project brief", entry_type="run")
    store.update_conversation(project.id, meta.id, activeType="run")
    create_run(store, project, meta.id, package, "project-brief")
    store.flush()

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app_module.setup_application(app)
    theme = ThemeManager(app)
    theme.set_choice("light")
    worker = start_worker(str(data))
    out.mkdir(parents=True, exist_ok=True)

    class Allow:
        def ask(self, parent: QWidget, prompt: ApprovalPrompt, answer: Callable[[str], None]) -> Callable[[], None]:
            answer("allow_conversation")
            return lambda: None

    state = QSettings(str(base / "config" / "ui-state.ini"), QSettings.Format.IniFormat)
    window = MainWindow(worker.worker, state=state, theme=theme, approvals=Allow())
    window.resize(*SIZE)
    window.show()
    waiter = EventWaiter("take_run.py", timeout=30.0)
    spin, wait_until = waiter.spin, waiter.wait_until

    saved: list[Path] = []

    def shot(name: str) -> None:
        spin(400)
        path = out / f"{name}.png"
        window.grab().save(str(path), "PNG")
        saved.append(path)
        print(f"saved {path}")

    class Answers(QObject):
        """The user's answers: the goals form with its defaults; the review held until released."""

        def __init__(self) -> None:
            super().__init__()
            self.held: AskUserPrompt | None = None

        @Slot(object)
        def on_ask(self, prompt: AskUserPrompt) -> None:
            if any(f.get("name") == "outcome" for f in prompt.widget.get("fields") or []):
                self.held = prompt
                return
            self.submit(prompt)

        def submit(self, prompt: AskUserPrompt) -> None:
            fields = prompt.widget.get("fields") or []
            values = {f["name"]: f.get("default", "") for f in fields}
            values.setdefault("projectName", "Launch Plan")
            window.project_view.conversation.ask_user_answered.emit(prompt.request_id, {"values": values})

    answers = Answers()
    worker.worker.turns.ask_user_requested.connect(answers.on_ask)

    window.open_project_folder(str(folder))
    wait_until(lambda: window.project_view.loaded, "the project")
    window.project_view.select_conversation(meta.id)
    view = window.project_view.conversation
    workspace = view.run_workspace
    wait_until(lambda: view.loaded and workspace.snapshot is not None, "the run")
    view.composer.input.setPlainText("Start: a brief for the launch of our new app.")
    view.composer.submit()
    wait_until(lambda: answers.held is not None, "the review question")
    wait_until(lambda: workspace.artifacts_model.rowCount() > 0 and workspace.calls_model.rowCount() >= 6, "the tool calls")
    view.timeline.scroll_to_end()
    workspace.tabs.setCurrentIndex(0)
    shot("11-run-progress")
    workspace.tabs.setCurrentIndex(1)
    shot("12-run-graph")
    workspace.tabs.setCurrentIndex(2)
    calls = workspace.calls_model
    patch = next((r for r in range(calls.rowCount()) if calls.index(r, 1).data() == "fs.apply_patch"), 0)
    workspace.calls_view.setCurrentIndex(calls.index(patch, 0))
    shot("13-run-tool-calls")

    assert answers.held is not None
    answers.submit(answers.held)
    wait_until(lambda: not view.busy and workspace.snapshot is not None and workspace.snapshot.phase == "completed", "the end of the run")
    view.run_layout.set_logs_visible(True)
    workspace.tabs.setCurrentIndex(0)
    view.timeline.scroll_to_end()
    shot("14-run-completed")
    window.close()
    worker.stop()
    optimise(saved)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
