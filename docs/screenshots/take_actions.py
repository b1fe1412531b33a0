"""Take the message-action screenshots (15-16): hover actions and a text selection, then an edit, in the real app.

Run from the repository root, like take.py (which it borrows its isolation from)::

    QT_QPA_PLATFORM=offscreen .venv/bin/python docs/screenshots/take_actions.py [--out DIR]

A Chat conversation of two exchanges with the demo provider. Shot 15: the mouse over the answer
(its Copy and Regenerate) with part of the answer selected for Ctrl+C. Shot 16: Edit clicked on
the first question, its text in the composer, the hint saying what Send will do.
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=HERE, help="where the PNGs go (default: docs/screenshots)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="crewagent-action-shots-"))
    isolate(base)
    sys.path.insert(0, str(ROOT / "desktop"))
    try:
        return _run(base, args.out)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _run(base: Path, out: Path) -> int:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from crewagent.core.store import RuntimeStore
    from crewagent.ui import app as app_module
    from crewagent.ui.mainwindow import MainWindow
    from crewagent.ui.theme import ThemeManager
    from crewagent.ui.timeline import TimelineRole
    from crewagent.worker import start_worker

    data = base / "data"
    folder = base / "Travel Guide"
    folder.mkdir()
    store = RuntimeStore(data)
    project = store.create_project(folder, "Travel Guide")
    meta = store.create_conversation(project.id, title="Lisbon in three days")
    store.flush()

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app_module.setup_application(app)
    theme = ThemeManager(app)
    theme.set_choice("light")
    worker = start_worker(str(data))
    out.mkdir(parents=True, exist_ok=True)
    state = QSettings(str(base / "config" / "ui-state.ini"), QSettings.Format.IniFormat)
    window = MainWindow(worker.worker, state=state, theme=theme)
    window.resize(*SIZE)
    window.show()
    waiter = EventWaiter("take_actions.py", timeout=30.0)
    spin, wait_until = waiter.spin, waiter.wait_until

    saved: list[Path] = []

    def shot(name: str) -> None:
        spin(400)
        path = out / f"{name}.png"
        window.grab().save(str(path), "PNG")
        saved.append(path)
        print(f"saved {path}")

    window.open_project_folder(str(folder))
    wait_until(lambda: window.project_view.loaded, "the project")
    window.project_view.select_conversation(meta.id)
    conversation = window.project_view.conversation
    wait_until(lambda: conversation.loaded, "the conversation")

    def say(text: str) -> None:
        conversation.composer.input.setPlainText(text)
        conversation.composer.submit()
        wait_until(lambda: conversation.busy, f"the turn of {text!r} to start")
        wait_until(lambda: not conversation.busy, f"the turn of {text!r} to end")

    say("What should I see first in Lisbon?")
    say("And where should I eat?")
    view, delegate = conversation.timeline, conversation.timeline.timeline_delegate
    answer = [i for i in conversation.model.iter_top() if i.data(TimelineRole.KIND) == "assistant"][-1]
    key = str(answer.data(TimelineRole.KEY))

    # 15: the mouse over the last answer, part of it selected (as a drag would leave it).
    delegate.hover_row = key
    delegate.selection.key, delegate.selection.doc = key, 0
    delegate.selection.anchor, delegate.selection.position = 0, 60
    view.viewport().update()
    shot("15-message-actions")

    # 16: Edit on the first question: its text in the composer, Send will replace it.
    delegate.selection.clear()
    question = next(i for i in conversation.model.iter_top() if i.data(TimelineRole.KIND) == "user")
    delegate.hover_row = str(question.data(TimelineRole.KEY))
    conversation.message_edit.start(str(question.data(TimelineRole.KEY)), str(question.data(TimelineRole.TEXT)))
    view.scrollToTop()
    view.viewport().update()
    shot("16-message-edit")

    window.close()
    worker.stop()
    optimise(saved)
    return 0


if __name__ == "__main__":
    sys.exit(main())
