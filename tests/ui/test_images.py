"""Image attachments in the window (issue 17 item 4): paste, drop and pick into the composer, remove a
chip, send to the scripted server (the request carries the images as data URLs), thumbnails in the
timeline (again after a restart, a note for a missing file), and a model without vision refused
before anything is sent, the draft kept."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMimeData, Qt, QUrl
from PySide6.QtGui import QGuiApplication, QImage, QPixmap

from crewagent.core.attachments import image_urls
from crewagent.core.settings import SettingsStore
from crewagent.core.store import RuntimeStore
from crewagent.ui.composer import Composer
from crewagent.ui.images import Attached
from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.timeline import TimelineRole
from tests.fakes.images import GIF_BYTES, png_bytes
from tests.fakes.scripted_server import ScriptedServer, text
from tests.ui.conftest import ScriptedDialogs, drop_on
from tests.ui.test_conversation import approvals, host, make_window, open_conversation  # noqa: F401  (fixtures)


def _drop(composer: Composer, mime: QMimeData) -> None:
    drop_on(composer.input.viewport(), mime)  # the text box's viewport gets the drag events


def _files(mime_paths: list[Path]) -> QMimeData:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path)) for path in mime_paths])
    return mime


def test_paste_drop_and_pick_add_chips_that_the_keyboard_can_remove(qtbot: Any, tmp_path: Path) -> None:
    composer = Composer()
    qtbot.addWidget(composer)
    composer.show()
    dialogs = ScriptedDialogs()
    composer.dialogs = dialogs
    strip = composer.attachments
    shot, anim, bad = tmp_path / "shot.png", tmp_path / "anim.gif", tmp_path / "fake.png"
    shot.write_bytes(png_bytes(40, 30))
    anim.write_bytes(GIF_BYTES)
    bad.write_bytes(b"not an image at all")

    # Paste image data from the clipboard (a screenshot).
    QGuiApplication.clipboard().setImage(QImage.fromData(png_bytes(20, 10, (0, 128, 0))))
    composer.input.setFocus()
    composer.input.paste()
    qtbot.waitUntil(lambda: strip.count() == 1)
    assert composer.input.toPlainText() == ""  # the image is not pasted as text
    # Drop an image file.
    _drop(composer, _files([shot]))
    qtbot.waitUntil(lambda: strip.count() == 2)
    # "Attach image…" (the button, and Ctrl+Shift+I) picks through the dialogs.
    dialogs.image_files = [str(anim)]
    qtbot.mouseClick(composer.attach_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: strip.count() == 3)
    dialogs.image_files = [str(bad)]
    qtbot.keyClick(composer.input, Qt.Key.Key_I, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: composer.hint.text() != "")
    assert composer.hint.text() == "fake.png is not a PNG, JPEG, WebP or GIF image."
    assert dialogs.asked == ["image_files", "image_files"] and strip.count() == 3
    assert strip.isVisible() and [chip.attached.name for chip in strip.chips] == ["", "shot.png", "anim.gif"]
    assert not strip.chips[1].thumb.pixmap().isNull()

    # Remove the dropped one from the keyboard: Tab reaches its button, Space presses it.
    button = strip.chips[1].remove_button
    assert button.focusPolicy() & Qt.FocusPolicy.TabFocus
    button.setFocus()
    qtbot.keyClick(button, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: strip.count() == 2)
    assert [chip.attached.name for chip in strip.chips] == ["", "anim.gif"]
    assert strip.chips[1].remove_button.hasFocus()  # the keyboard stays in the strip
    assert strip.images()[1] == GIF_BYTES and strip.images()[0].startswith(b"\x89PNG")

    # Sent with no text: the images alone are a message; the strip empties.
    sent: list[str] = []
    composer.submitted.connect(sent.append)
    composer.submit()
    assert sent == [""]
    assert strip.take() and strip.count() == 0 and not strip.isVisible()


def test_chips_keep_the_order_the_images_were_given_in_whichever_is_read_first(qtbot: Any) -> None:
    """Two files of one drop are read on two pool threads: the second may be ready first."""
    composer = Composer()
    qtbot.addWidget(composer)
    strip = composer.attachments
    image = QImage.fromData(png_bytes())
    strip._loaded(1, Attached("second.png", b"2", image))
    strip._loaded(0, Attached("first.png", b"1", image))
    strip._loaded(2, Attached("third.png", b"3", image))
    assert [chip.attached.name for chip in strip.chips] == ["first.png", "second.png", "third.png"]
    assert strip.images() == (b"1", b"2", b"3")


@pytest.mark.slow
def test_a_model_without_vision_is_refused_before_sending_and_the_draft_stays(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow], dialogs: ScriptedDialogs  # noqa: F811
) -> None:
    SettingsStore().update(llm={"vision": False})
    main = make_window()
    open_conversation(qtbot, main, project.root)
    composer = main.project_view.conversation.composer
    shot = project.root / "shot.png"
    shot.write_bytes(png_bytes())
    qtbot.waitUntil(lambda: not composer._vision)  # the window learnt the provider's settings
    dialogs.image_files = [str(shot)]
    composer.attach_images()
    qtbot.waitUntil(lambda: composer.attachments.count() == 1)
    composer.input.setPlainText("what is this?")

    qtbot.keyClick(composer.input, Qt.Key.Key_Return)

    assert composer.hint.text().startswith("The model scripted-model does not accept images")
    assert composer.input.toPlainText() == "what is this?" and composer.attachments.count() == 1
    assert not main.project_view.conversation.busy
    assert scripted_llm.requests == []  # nothing was sent (the script is empty: a request would fail the test)


def test_a_send_the_core_refuses_gives_the_text_and_images_back(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow], dialogs: ScriptedDialogs  # noqa: F811
) -> None:
    """The composer had not heard of the settings' change yet: the worker refuses, nothing is stored or lost."""
    SettingsStore().update(llm={"vision": False})
    main = make_window()
    open_conversation(qtbot, main, project.root)
    conversation = main.project_view.conversation
    composer = conversation.composer
    qtbot.waitUntil(lambda: not composer._vision)
    composer.set_accepts_images(True, "scripted-model")  # as if the settings changed a moment ago
    shot = project.root / "shot.png"
    shot.write_bytes(png_bytes())
    dialogs.image_files = [str(shot)]
    composer.attach_images()
    qtbot.waitUntil(lambda: composer.attachments.count() == 1)
    composer.input.setPlainText("what is this?")

    qtbot.keyClick(composer.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: composer.attachments.count() == 1, timeout=10_000)

    assert composer.input.toPlainText() == "what is this?"
    assert composer.attachments.images() == (shot.read_bytes(),)
    qtbot.waitUntil(lambda: not conversation.busy)
    assert list(conversation.model.iter_top()) == [] and scripted_llm.requests == []


@pytest.mark.slow
def test_images_reach_the_model_as_data_urls_and_show_as_thumbnails_also_after_a_restart(
    qtbot: Any, qtmodeltester: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow], isolated_dirs: dict[str, Path]  # noqa: F811
) -> None:
    scripted_llm.script(text("A red square."))
    main = make_window()
    open_conversation(qtbot, main, project.root)
    conversation = main.project_view.conversation
    composer = conversation.composer
    shot, anim = project.root / "shot.png", project.root / "anim.gif"
    shot.write_bytes(png_bytes(30, 30))
    anim.write_bytes(GIF_BYTES)
    _drop(composer, _files([shot, anim]))
    qtbot.waitUntil(lambda: composer.attachments.count() == 2)
    composer.input.setPlainText("describe")
    qtbot.keyClick(composer.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: conversation.busy)
    qtbot.waitUntil(lambda: not conversation.busy, timeout=10_000)
    assert composer.attachments.count() == 0

    sent = scripted_llm.requests[0].body["messages"][-1]["content"]
    assert sent == [
        {"type": "text", "text": "describe"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(shot.read_bytes()).decode()}},
        {"type": "image_url", "image_url": {"url": "data:image/gif;base64," + base64.b64encode(GIF_BYTES).decode()}},
    ]
    store = RuntimeStore(isolated_dirs["data"])
    pid = store.open_project(project.root).id
    user = store.load_messages(pid, conversation.conversation_id).messages[0]
    refs = image_urls(user.content)
    assert len(refs) == 2 and all(ref.startswith("@state/attachments/") for ref in refs)

    def thumbnails(main: MainWindow) -> list[object]:
        view = main.project_view.conversation.timeline
        row = next(top for top in main.project_view.conversation.model.iter_top() if top.data(TimelineRole.KIND) == "user")
        assert list(row.data(TimelineRole.IMAGES)) == refs
        view.viewport().grab()  # painting asks for the thumbnails
        return [view.timeline_delegate.thumbnails.get(ref) for ref in refs]

    qtbot.waitUntil(lambda: all(isinstance(t, QPixmap) for t in thumbnails(main)))
    qtmodeltester.check(conversation.model)
    assert all(isinstance(t, QPixmap) and not t.isNull() for t in thumbnails(main))
    cid = conversation.conversation_id

    # A restart shows them again; a file gone meanwhile is a one-line note.
    main.close()
    (store.state_dir(pid) / refs[1].removeprefix("@state/")).unlink()
    again = make_window()
    restored = again.project_view.conversation
    qtbot.waitUntil(lambda: restored.conversation_id == cid and restored.loaded)
    qtbot.waitUntil(lambda: all(t is not None for t in thumbnails(again)))
    first, second = thumbnails(again)
    assert isinstance(first, QPixmap) and not first.isNull()
    assert second == f"The attached image {refs[1]} is missing."
