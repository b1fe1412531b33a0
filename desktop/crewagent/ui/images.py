"""Image attachments on the UI side: thumbnails decoded off the GUI thread, and the timeline's cache of them.

Everything here that reads a file or decodes an image runs on an :class:`OffThread` pool thread
(QImage is safe there, QPixmap is not): the GUI thread only turns a finished QImage into a pixmap.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QCoreApplication, QIODevice, QObject, Qt, Signal
from PySide6.QtGui import QImage, QPixmap

from crewagent.core import paths, texts
from crewagent.core.attachments import MAX_IMAGE_BYTES, AttachmentError, check_image, parse_data_url, read_image_file, read_reference
from crewagent.core.errors import CrewAgentError
from crewagent.ui.core_texts import translate_core
from crewagent.ui.offthread import OffThread

#: The side of a thumbnail's square, in pixels (composer chips and timeline rows).
THUMB_PX = 72


def thumbnail(data: bytes, size: int = THUMB_PX) -> QImage:
    """``data`` decoded and scaled to fit ``size`` x ``size`` (a null image when it cannot be decoded)."""
    image = QImage.fromData(QByteArray(data))
    if image.isNull():
        return image
    return image.scaled(size, size, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation)


def png_of(image: QImage) -> bytes:
    """A pasted image encoded as PNG (off the GUI thread: large screenshots take a while)."""
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]  # the stubs say bytes; PySide6 takes only str
    return bytes(buffer.data().data())


class Attached:
    """An image ready to send: its encoded bytes and its thumbnail (or the one-line reason it was refused)."""

    def __init__(self, name: str, data: bytes = b"", image: QImage | None = None, error: str = ""):
        self.name = name
        self.data = data
        self.image = image if image is not None else QImage()
        self.error = error


def load_file(path: str) -> Attached:
    """Read and check an image file (blocking: a pool thread)."""
    name = Path(path).name
    try:
        data = read_image_file(path)
    except CrewAgentError as exc:
        return Attached(name, error=str(exc))
    return _decoded(name, data)


def load_pasted(image: QImage) -> Attached:
    """Encode a pasted image as PNG and check it (blocking: a pool thread)."""
    data = png_of(image)
    try:
        check_image(data)
    except AttachmentError as exc:
        return Attached("", error=str(exc))
    return _decoded("", data)


def _undecodable(name: str) -> str:
    # QCoreApplication.translate is thread-safe: this runs on a pool thread.
    return QCoreApplication.translate("Images", "{name} cannot be decoded as an image.").format(name=name)


def _decoded(name: str, data: bytes) -> Attached:
    image = thumbnail(data)
    if image.isNull():  # right magic bytes, damaged body
        return Attached(name, error=_undecodable(name or translate_core(texts.IMAGE_PASTED)))
    return Attached(name, data, image)


class ThumbnailCache(QObject):
    """The timeline's thumbnails by reference: loaded once, off the GUI thread; ``get`` never blocks.

    ``get`` gives a QPixmap when loaded, a one-line note when the image cannot be shown (missing,
    forged, changed, not decodable), and None while loading (``loaded`` follows, naming the rows
    that asked, whose height may change).
    """

    #: ``(keys)``: thumbnails (or notes) are ready for the rows with these keys: measure them again.
    loaded = Signal(object)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.jobs = OffThread(self)
        self._state_dir = ""
        self._cache: dict[str, QPixmap | str] = {}
        self._waiting: dict[str, set[str]] = {}  # url -> the row keys that asked for it

    def set_runtime_dir(self, runtime_dir: str) -> None:
        """The project whose ``@state`` references are shown ('': none); another project empties the cache."""
        state = str(paths.state_dir(Path(runtime_dir))) if runtime_dir else ""
        if state != self._state_dir:
            self._state_dir = state
            self._cache.clear()
            self._waiting.clear()

    def get(self, url: str, key: str = "") -> QPixmap | str | None:
        found = self._cache.get(url)
        if found is not None:
            return found
        waiting = self._waiting.get(url)
        if waiting is not None:
            waiting.add(key)
        elif self._state_dir:
            self._waiting[url] = {key}
            state = self._state_dir
            self.jobs.run(lambda: _load_thumbnail(state, url), lambda result: self._ready(state, url, result))
        return None

    def _ready(self, state: str, url: str, result: QImage | str) -> None:
        if state != self._state_dir:
            return  # another project since
        keys = self._waiting.pop(url, set())
        self._cache[url] = translate_core(result) if isinstance(result, str) else QPixmap.fromImage(result)
        self.loaded.emit(tuple(sorted(keys)))


def _load_thumbnail(state_dir: str, url: str) -> QImage | str:
    """A thumbnail of a stored image or a data URL, else a one-line note (blocking: a pool thread)."""
    try:
        data = parse_data_url(url)
        if data is None:
            if url.startswith(("http://", "https://")):
                return url
            data = read_reference(Path(state_dir), url)[1]
    except CrewAgentError as exc:
        return str(exc)
    if len(data) > MAX_IMAGE_BYTES:
        return url
    image = thumbnail(data)
    return image if not image.isNull() else _undecodable(url)
