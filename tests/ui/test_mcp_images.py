"""An MCP tool part shows the images its result names (issue 12): asked for once when the opened part is
painted, read and scaled off the GUI thread (the worker's read_images, here called as the worker would),
drawn as thumbnails that open the full image; a path outside the state folder, a missing file and a
damaged one are each a one-line note."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QColor, QDesktopServices, QImage

from crewagent.core.mcp.results import image_paths, state_file
from crewagent.ui.timeline import TimelineModel, TimelineRole
from crewagent.ui.timeline.view import TimelineView
from crewagent.worker.tool_images import THUMBNAIL_SIDE, Problem, ToolImages, read_images
from crewagent.worker.turn_values import LoadedConversation, TimelineMessage, ToolCallRef

KEY = "tool:c-1"
SHOWN = ("@state/mcp/conv/c-1/image-1.png", "@state/../outside.png", "@state/mcp/conv/c-1/gone.png", "@state/mcp/conv/c-1/image-2.png")


class Opened(QObject):
    """The desktop's "open this URL" for file URLs, recorded (QDesktopServices.setUrlHandler)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[QUrl] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url)


def _result(*shown: str) -> str:
    files = [{"type": "image", "mimeType": "image/png", "bytes": 10, "path": path} for path in shown]
    return json.dumps({"ok": True, "content": "", "files": files})


def _state(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    folder = state / "mcp" / "conv" / "c-1"
    folder.mkdir(parents=True)
    picture = QImage(1200, 600, QImage.Format.Format_RGB32)
    picture.fill(QColor("tomato"))
    assert picture.save(str(folder / "image-1.png"))
    (folder / "image-2.png").write_bytes(b"\x89PNG\r\n\x1a\n not really a picture")
    picture.save(str(tmp_path / "outside.png"))
    return state


def test_result_images_are_only_state_files(tmp_path: Path) -> None:
    assert image_paths(_result(*SHOWN)) == SHOWN
    assert image_paths('{"ok": true, "files": [{"type": "audio", "path": "@state/a.wav"}, {"type": "image", "path": "/etc/x.png"}]}') == ()
    assert image_paths("not json, has \"files\"") == () and image_paths('{"ok": false}') == ()
    state = _state(tmp_path)
    assert state_file(state, SHOWN[0]) == (state / "mcp/conv/c-1/image-1.png").resolve()
    (state / "link.png").symlink_to(tmp_path / "outside.png")
    for refused in ("@state/../outside.png", "@state/link.png", "@project/x.png", "@state/", "@state//etc/passwd"):
        assert state_file(state, refused) is None, refused


def test_thumbnails_are_scaled_and_problems_are_named(tmp_path: Path) -> None:
    images = read_images(_state(tmp_path), SHOWN)
    thumbnail = images[0].thumbnail
    assert thumbnail is not None and (thumbnail.width(), thumbnail.height()) == (THUMBNAIL_SIDE, THUMBNAIL_SIDE // 2)
    assert [image.problem for image in images] == [None, Problem.OUTSIDE, Problem.MISSING, Problem.DAMAGED]
    assert images[1].path == "" and images[3].thumbnail is None


def test_an_opened_mcp_part_asks_once_then_shows_its_thumbnails_and_a_click_opens_the_image(qtbot: Any, tmp_path: Path) -> None:
    loaded = LoadedConversation("proj", "conv", (
        TimelineMessage("a-1", "assistant", "2026-01-01T00:00:00.000Z", "", tool_calls=(ToolCallRef("c-1", "mcp__everything__get-tiny-image", "{}"),)),
        TimelineMessage("t-1", "tool", "2026-01-01T00:00:01.000Z", _result(*SHOWN), tool_call_id="c-1", tool_name="mcp__everything__get-tiny-image"),
    ))
    model = TimelineModel()
    model.load(loaded)
    view = TimelineView()
    qtbot.addWidget(view)
    view.set_timeline(model)
    view.resize(700, 900)
    asked: list[tuple[str, str, str, object]] = []
    view.images.ids = lambda: ("proj", "conv")
    view.images.requested.connect(lambda *args: asked.append(args))
    view.show()
    part = model.index_of_key(KEY)
    closed = view.visualRect(part).height()
    view.set_tool_expanded(KEY, True)
    qtbot.waitUntil(lambda: asked == [("proj", "conv", KEY, SHOWN)])  # asked when painted: "Loading image…"
    loading = view.visualRect(part).height()
    assert loading > closed
    view.viewport().repaint()
    assert len(asked) == 1  # once per part

    view.images.on_loaded(ToolImages("another-conversation", KEY, read_images(_state(tmp_path), SHOWN)))
    assert KEY not in view.view_state.images
    view.images.on_loaded(ToolImages("conv", KEY, read_images(tmp_path / "state", SHOWN)))
    qtbot.waitUntil(lambda: view.visualRect(model.index_of_key(KEY)).height() > loading + 100)  # the thumbnail, scaled to 240 wide

    delegate = view.timeline_delegate
    layout = delegate._layout(_option(view, model.index_of_key(KEY)), model.index_of_key(KEY), None)
    hits = {hit.name: hit.rect for hit in layout.hits}
    assert "open_image:0" in hits and round(hits["open_image:0"].width()) == 240 and round(hits["open_image:0"].height()) == 120
    assert "open_image:1" not in hits and "open_image:3" not in hits  # notes, not images
    assert layout.wanted_images == ()
    view.grab()  # paints the thumbnail and the notes

    opened = Opened()
    QDesktopServices.setUrlHandler("file", opened, "open")
    try:
        qtbot.mouseClick(view.viewport(), _left(), pos=hits["open_image:0"].center().toPoint())
        qtbot.waitUntil(lambda: len(opened.urls) == 1)
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert Path(opened.urls[0].toLocalFile()) == (tmp_path / "state/mcp/conv/c-1/image-1.png").resolve()
    assert model.index_of_key(KEY).data(TimelineRole.TOOL_STATE) == "ok"


def _left() -> Any:
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton


def _option(view: Any, index: Any) -> Any:
    from PySide6.QtWidgets import QStyleOptionViewItem

    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    option.rect = view.visualRect(index)
    return option
