"""The composer's attached images (issue 17 item 4): a row of thumbnail chips, each with a remove button.

Images come from a paste (clipboard image data, or copied image files), a drop, or "Attach
image…". Reading, checking (core/attachments.py: magic bytes, 20 MB) and scaling happen on a pool
thread; a refused image gives a one-line reason (``refused``) and is not added. Sending takes the
encoded bytes (:meth:`AttachmentStrip.take`); the worker stores them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QMimeData, Qt, QUrl, Signal, Slot
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from crewagent.core.attachments import FORMATS
from crewagent.ui.core_texts import translate_core
from crewagent.ui.images import THUMB_PX, Attached, load_file, load_pasted
from crewagent.ui.offthread import OffThread

#: File name endings taken as images when dropped or pasted as files (the bytes are checked anyway).
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".webp", ".gif"} | {f".{ext}" for ext in FORMATS.values()})
#: The most images one message takes.
MAX_IMAGES = 10


def image_paths(mime: QMimeData) -> list[str]:
    """The local image files among the URLs of ``mime`` (by name; their bytes are checked when read)."""
    return [url.toLocalFile() for url in mime.urls() if _is_image_url(url)]


def _is_image_url(url: QUrl) -> bool:
    return url.isLocalFile() and Path(url.toLocalFile()).suffix.lower() in IMAGE_SUFFIXES


def has_images(mime: QMimeData) -> bool:
    return mime.hasImage() or bool(image_paths(mime))


class _Chip(QFrame):
    """One attached image: its thumbnail and a remove button (reachable with Tab, pressed with Space)."""

    remove = Signal(object)

    def __init__(self, attached: Attached, order: int, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("attachmentChip")
        self.attached = attached
        #: When it was given: chips keep that order, whichever image was read first.
        self.order = order
        self.thumb = QLabel(self)
        self.thumb.setFixedSize(THUMB_PX, THUMB_PX)
        self.thumb.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.thumb.setPixmap(QPixmap.fromImage(attached.image))
        self.remove_button = QToolButton(self)
        self.remove_button.setObjectName("attachmentRemove")
        self.remove_button.setText("✕")
        self.remove_button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.remove_button.clicked.connect(lambda: self.remove.emit(self))
        row = QHBoxLayout(self)
        row.setContentsMargins(2, 2, 2, 2)
        row.setSpacing(2)
        row.addWidget(self.thumb)
        row.addWidget(self.remove_button, 0, Qt.AlignmentFlag.AlignTop)
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        name = self.attached.name or self.tr("pasted image")
        self.thumb.setToolTip(name)
        self.remove_button.setToolTip(self.tr("Remove {name}").format(name=name))
        self.remove_button.setAccessibleName(self.tr("Remove image {name}").format(name=name))


class AttachmentStrip(QFrame):
    """The images attached to the message being written; hidden while there is none."""

    #: The images attached changed (added, removed, taken).
    changed = Signal()
    #: ``(reason)``: an image was not attached (not an image, too large, unreadable), one line.
    refused = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("attachmentStrip")
        self.jobs = OffThread(self)
        self._chips: list[_Chip] = []
        self._given = 0  # images given so far (the order of the chips)
        #: The last message sent with images until its user message is stored: ``(conversation_id,
        #: text, images)``; a send refused before anything was stored gets them back (Composer).
        self.unsent: tuple[str, str, tuple[Attached, ...]] | None = None
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.setSpacing(6)
        self._row.addStretch(1)
        self.hide()

    # -- adding -----------------------------------------------------------------------------------

    def add_files(self, paths: list[str]) -> None:
        """Read, check and scale each file off the GUI thread; each good one becomes a chip."""
        for path in paths:
            self._load(functools.partial(load_file, path))

    def add_image(self, image: QImage) -> None:
        """A pasted image: encoded as PNG, checked and scaled off the GUI thread."""
        copy = QImage(image)  # the clipboard's image may change before the job runs
        self._load(functools.partial(load_pasted, copy))

    def _load(self, job: Callable[[], Attached]) -> None:
        order, self._given = self._given, self._given + 1
        self.jobs.run(job, functools.partial(self._loaded, order))

    def add_mime(self, mime: QMimeData) -> bool:
        """Attach the images of a paste or a drop: image files first, else image data; False when there is none."""
        paths = image_paths(mime)
        if paths:
            self.add_files(paths)
            return True
        if mime.hasImage():
            image = mime.imageData()
            if isinstance(image, QImage) and not image.isNull():
                self.add_image(image)
                return True
        return False

    def _loaded(self, order: int, attached: Attached) -> None:
        if attached.error:
            self.refused.emit(translate_core(attached.error))
            return
        if len(self._chips) >= MAX_IMAGES:
            self.refused.emit(self.tr("A message takes at most {count} images.").format(count=MAX_IMAGES))
            return
        chip = _Chip(attached, order, self)
        chip.remove.connect(self._remove)
        place = sum(1 for other in self._chips if other.order < order)  # jobs finish in any order
        self._row.insertWidget(place, chip)
        self._chips.insert(place, chip)
        self.show()
        self.changed.emit()

    # -- removing and sending ---------------------------------------------------------------------

    @Slot(object)
    def _remove(self, chip: _Chip) -> None:
        if chip not in self._chips:
            return
        index = self._chips.index(chip)
        self._chips.remove(chip)
        chip.hide()
        chip.deleteLater()
        if self._chips:  # the keyboard goes to the next remove button, not back to the window
            self._chips[min(index, len(self._chips) - 1)].remove_button.setFocus()
        self.setVisible(bool(self._chips))
        self.changed.emit()

    @property
    def chips(self) -> list[_Chip]:
        return list(self._chips)

    def count(self) -> int:
        return len(self._chips)

    def images(self) -> tuple[bytes, ...]:
        return tuple(chip.attached.data for chip in self._chips)

    def attached(self) -> tuple[Attached, ...]:
        return tuple(chip.attached for chip in self._chips)

    def put_back(self, attached: tuple[Attached, ...]) -> None:
        """Images taken for a send that was refused, as chips again (nothing to read: they were checked)."""
        for image in attached:
            order, self._given = self._given, self._given + 1
            self._loaded(order, image)

    def take(self) -> tuple[bytes, ...]:
        """The images, in the order attached; the strip is empty afterwards."""
        images = self.images()
        for chip in self._chips:
            chip.hide()
            chip.deleteLater()
        self._chips.clear()
        self.hide()
        if images:
            self.changed.emit()
        return images

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            for chip in self._chips:
                chip.retranslate_ui()
        super().changeEvent(event)
