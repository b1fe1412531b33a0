"""The images an MCP tool result names (issue 12), read and scaled to thumbnails off the GUI thread.

A result names its images by ``@state/...`` path (core/mcp/results.py saved them there). The
timeline asks for them when it paints an opened tool part; the turn worker resolves each path
under the project's state folder (refusing any other), and decodes it here, in a thread of its
loop's pool, with QImageReader scaling while it decodes: a thumbnail never costs the full
image's memory. What the GUI gets is a QImage (safe to make off the GUI thread, unlike QPixmap)
or why not (a :class:`Problem` the timeline words in the UI's language), per image.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QImage, QImageReader

from crewagent.core.mcp.results import state_file

#: The thumbnail's largest width and height, in pixels (the timeline scales it down further to fit).
THUMBNAIL_SIDE = 320
#: Files larger than this are not decoded for a thumbnail (the full image still opens).
MAX_IMAGE_BYTES = 25 * 1024 * 1024
#: Images with more pixels than this are refused before decoding (a "decompression bomb").
MAX_IMAGE_PIXELS = 100_000_000


class Problem(StrEnum):
    """Why an image is not shown."""

    OUTSIDE = "outside"  # the path is not under the state folder: refused
    MISSING = "missing"  # the file is gone or cannot be read
    TOO_LARGE = "too_large"  # too many bytes or pixels for a preview
    DAMAGED = "damaged"  # not an image Qt can decode


@dataclass(frozen=True)
class ToolImage:
    """One image of a tool result: its thumbnail and its file, or why it cannot be shown."""

    shown: str  # the path as the result names it: @state/mcp/...
    path: str = ""  # the file on disk ("" when the path is refused)
    thumbnail: QImage | None = None
    problem: Problem | None = None


@dataclass(frozen=True)
class ToolImages:
    """The answer to ``TurnWorker.load_tool_images``: the images of one tool part (by row key)."""

    conversation_id: str
    key: str
    images: tuple[ToolImage, ...]


def read_images(state_dir: Path, shown: tuple[str, ...]) -> tuple[ToolImage, ...]:
    """Thumbnails of ``shown`` (blocking: call it in a thread)."""
    return tuple(_read(state_dir, one) for one in shown)


def _read(state_dir: Path, shown: str) -> ToolImage:
    path = state_file(state_dir, shown)
    if path is None:
        return ToolImage(shown, problem=Problem.OUTSIDE)
    try:
        size = path.stat().st_size
    except OSError:
        return ToolImage(shown, str(path), problem=Problem.MISSING)
    if size > MAX_IMAGE_BYTES:
        return ToolImage(shown, str(path), problem=Problem.TOO_LARGE)
    reader = QImageReader(str(path))
    reader.setAutoTransform(True)
    full = reader.size()
    if not full.isValid():  # not an image format Qt knows, or a header it cannot read
        return ToolImage(shown, str(path), problem=Problem.DAMAGED)
    if full.width() * full.height() > MAX_IMAGE_PIXELS:
        return ToolImage(shown, str(path), problem=Problem.TOO_LARGE)
    if full.width() > THUMBNAIL_SIDE or full.height() > THUMBNAIL_SIDE:
        reader.setScaledSize(full.scaled(QSize(THUMBNAIL_SIDE, THUMBNAIL_SIDE), Qt.AspectRatioMode.KeepAspectRatio))
    image = reader.read()
    if image.isNull():
        return ToolImage(shown, str(path), problem=Problem.DAMAGED)
    return ToolImage(shown, str(path), image)
