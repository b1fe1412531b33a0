"""Take the screenshots of a Markdown table, a search hit and the full-output viewer (17-19), in the real app.

Run from the repository root, like take.py::

    xvfb-run -a .venv/bin/python docs/screenshots/take_polish.py [--out DIR]

The worker talks to the scripted OpenAI-compatible server of the tests (tests/fakes/), over real
HTTP, so that an answer can hold a GFM table and a tool can return a large result. Shot 17: an
answer with a table. Shot 18: "tram 28" typed in the Works search box, the hit's conversation
open at the matching message, highlighted. Shot 19: "Open full output" on fs.read of a 200 KB
file, with Ctrl+F's find bar showing a match.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SIZE = (1180, 760)
sys.path.insert(0, str(HERE))
from shots import EventWaiter, isolate, optimise  # noqa: E402

TABLE_ANSWER = (
    "Here is a budget for three days in Lisbon, per person:\n\n"
    "| Item | Per day | Three days | Note |\n"
    "|:-----|--------:|-----------:|:-----|\n"
    "| Hotel in Alfama | €120 | €360 | double room, breakfast |\n"
    "| Food | €50 | €150 | pastéis de nata included |\n"
    "| Tram 28 and metro | €6.40 | €19.20 | a 24-hour Viva Viagem pass |\n"
    "| Museums | €15 | €45 | Gulbenkian, Azulejo |\n"
    "| **Total** | **€191.40** | **€574.20** | |\n\n"
    "The hotel is most of it; staying in Graça instead saves about €30 a night."
)
TRAM_ANSWER = (
    "Take **tram 28** from Martim Moniz before 9 am: it climbs through Graça and Alfama, past the "
    "cathedral, to Estrela. Later in the day it is packed with visitors."
)


def _timetable(folder: Path) -> None:
    """A 200 KB file for fs.read: too large for the tool part, so it has "Open full output"."""
    stops = ["Martim Moniz", "Graça", "Sé", "Baixa", "Chiado", "Estrela", "Prazeres"]
    lines = ["# Tram 28 timetable, all departures of the year"]
    n = 0
    while sum(len(line) + 1 for line in lines) < 200_000:
        day, minute = divmod(n * 12, 24 * 60)
        lines.append(f"day {day + 1:03d} {minute // 60:02d}:{minute % 60:02d}  {stops[n % len(stops)]:<13} -> {stops[(n + 3) % len(stops)]}")
        n += 1
    (folder / "tram28-timetable.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=HERE, help="where the PNGs go (default: docs/screenshots)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="crewagent-polish-shots-"))
    isolate(base)
    sys.path.insert(0, str(ROOT / "desktop"))
    sys.path.insert(0, str(ROOT))  # tests.fakes: the scripted server
    try:
        return _run(base, args.out)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _run(base: Path, out: Path) -> int:
    from PySide6.QtCore import QSettings, Qt
    from PySide6.QtWidgets import QAbstractItemView, QApplication, QWidget

    from crewagent.core.store import RuntimeStore
    from crewagent.ui import app as app_module
    from crewagent.ui.mainwindow import MainWindow
    from crewagent.ui.theme import ThemeManager
    from crewagent.ui.timeline import TimelineRole
    from tests.fakes.scripted_server import ScriptedServer, call, text, tool_calls
    from tests.worker.turns_support import scripted_worker

    data = base / "data"
    folder = base / "Travel Guide"
    folder.mkdir()
    _timetable(folder)
    store = RuntimeStore(data)
    project = store.create_project(folder, "Travel Guide")
    titles = ["Tram 28 timetable", "Lisbon budget", "Getting around", "Day trips"]
    ids = {title: store.create_conversation(project.id, title=title).id for title in reversed(titles)}
    store.flush()

    server = ScriptedServer().start()
    server.script(
        text("Sintra by train from Rossio (40 min), or Cascais along the coast."),
        text(TRAM_ANSWER),
        text(TABLE_ANSWER),
        tool_calls(call("call_read", "fs_read", json.dumps({"path": "@project/tram28-timetable.txt"}))),
        text("The file lists every departure of the year; the first tram leaves Martim Moniz at 00:00 on day 1."),
    )
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app_module.setup_application(app)
    theme = ThemeManager(app)
    theme.set_choice("light")
    out.mkdir(parents=True, exist_ok=True)
    with scripted_worker(data, server) as worker:
        state = QSettings(str(base / "config" / "ui-state.ini"), QSettings.Format.IniFormat)
        window = MainWindow(worker.worker, state=state, theme=theme)
        window.resize(*SIZE)
        window.show()
        waiter = EventWaiter("take_polish.py", timeout=30.0)
        spin, wait_until = waiter.spin, waiter.wait_until
        saved: list[Path] = []

        def shot(name: str, widget: QWidget | None = None) -> None:
            spin(400)
            path = out / f"{name}.png"
            (widget or window).grab().save(str(path), "PNG")
            saved.append(path)
            print(f"saved {path}")

        window.open_project_folder(str(folder))
        wait_until(lambda: window.project_view.loaded, "the project")
        conversation, works = window.project_view.conversation, window.project_view.works

        def open_and_say(title: str, question: str) -> None:
            window.project_view.select_conversation(ids[title])
            wait_until(lambda: conversation.loaded and conversation.conversation_id == ids[title], f"{title!r}")
            conversation.composer.input.setPlainText(question)
            conversation.composer.submit()
            wait_until(lambda: conversation.busy, f"the turn of {question!r} to start")
            wait_until(lambda: not conversation.busy, f"the turn of {question!r} to end")

        open_and_say("Day trips", "Which day trips are easy without a car?")
        open_and_say("Getting around", "What is the best way to see the old town?")
        open_and_say("Lisbon budget", "Make me a budget table for three days.")

        # 17: an answer with a GFM table.
        conversation.timeline.scrollToTop()
        shot("17-markdown-table")

        # 19 first (it needs its own turn): fs.read of a 200 KB file, the full output with a find.
        open_and_say("Tram 28 timetable", "Read tram28-timetable.txt and tell me when the first tram leaves.")
        part = conversation.model.index_of_call("call_read")
        message_id = str(part.data(TimelineRole.RESULT_MESSAGE_ID))
        conversation.timeline.set_tool_expanded("tool:call_read", True)
        conversation.timeline.action_requested.emit("open_output", "tool:call_read", message_id)
        viewer = conversation.outputs.viewer(conversation.conversation_id, message_id)
        assert viewer is not None
        viewer.resize(900, 600)
        wait_until(lambda: not viewer.loading, "the full output")
        viewer.activateWindow()
        viewer.focus_find()
        viewer.find_field.setText("Estrela")
        wait_until(lambda: viewer.match_label.text().startswith("1 of ") and not viewer.counting, "the match count")
        viewer.find_next()
        viewer.find_next()
        shot("19-full-output", viewer)
        viewer.close()

        # 18: a search in the Works list, the hit's conversation open at its message, marked.
        works.search.setText("tram 28")
        wait_until(lambda: works.search_status.text() != "Searching messages…" and works.proxy.text_hits > 0, "the search")
        proxy = works.proxy
        row = next(r for r in range(proxy.rowCount()) if proxy.index(r, 0).data() == "Getting around")
        works.view.setCurrentIndex(proxy.index(row, 0))
        timeline = conversation.timeline

        def marked() -> bool:
            model = timeline.model()
            return conversation.conversation_id == ids["Getting around"] and any(
                model.index(n, 0).data(TimelineRole.HIGHLIGHT) for n in range(model.rowCount())
            )

        wait_until(marked, "the highlighted hit")
        timeline.scrollTo(timeline.model().index(0, 0), QAbstractItemView.ScrollHint.PositionAtTop)
        works.search.setFocus(Qt.FocusReason.OtherFocusReason)
        shot("18-search-hit")

        window.close()
    server.stop()
    server.assert_all_used()
    optimise(sorted(saved))
    return 0


if __name__ == "__main__":
    sys.exit(main())
