"""Image attachments: stored as files under ``@state``, named in the log by reference, sent as data URLs.

Layout (contract addition)::

    <data>/projects/<projectId>/state/attachments/<conversation stem>/<sha256>.<ext>

``ext`` is ``png``, ``jpg``, ``webp`` or ``gif``, from the file's magic bytes (never from its
name). A user message with images holds list content, and the log holds the reference, never
base64::

    [{"type": "text", "text": "..."},
     {"type": "image_url", "image_url": {"url": "@state/attachments/<stem>/<sha256>.png"}}]

The request carries the image as ``data:image/png;base64,...`` (:func:`inline_images`), put in at
the last moment, off the event loop. A reference is resolved only inside the attachments folder
(pattern, realpath and prefix check, and the file's sha256 must match its name): a forged or
damaged one is sent as a one-line text note instead, never as the content of another file.
``http(s)`` and ``data:`` URLs (from an import) are passed on unchanged.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crewagent.core import texts
from crewagent.core.errors import CrewAgentError, StoreReadError
from crewagent.core.store._fsutil import atomic_write_bytes
from crewagent.core.store.offload import STATE_ALIAS, safe_file_stem

ATTACHMENTS_SUBDIR = "attachments"
REFERENCE_PREFIX = f"{STATE_ALIAS}{ATTACHMENTS_SUBDIR}/"
#: The largest image accepted (OpenAI's own limit per image is 20 MB).
MAX_IMAGE_BYTES = 20 * 1024 * 1024
#: Token estimate of one image in a request: OpenAI's rule for a high-detail image scaled to
#: 1024x1024 (85 base + 170 per 512-px tile, 4 tiles). Flat, because the log does not keep sizes
#: and a provider scales larger images down anyway.
IMAGE_TOKENS = 85 + 170 * 4
#: The MIME type and file extension of each accepted format.
FORMATS: dict[str, str] = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif"}
_MIME_OF_EXT = {ext: mime for mime, ext in FORMATS.items()}
_REFERENCE = re.compile(r"@state/attachments/([A-Za-z0-9_.-]{1,100})/([0-9a-f]{64})\.(png|jpg|webp|gif)")
_DATA_URL = re.compile(r"data:(image/[a-z0-9.+-]+);base64,(.*)", re.DOTALL)


class AttachmentError(CrewAgentError):
    """An image cannot be attached or sent (not an image, too large, unreadable, forged reference)."""


class ImagesNotSupported(CrewAgentError):
    """The model of the turn does not accept images (nothing was written)."""


def sniff(data: bytes) -> str | None:
    """The MIME type of an image from its magic bytes; None when it is none of the accepted formats."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    return None


def check_image(data: bytes, name: str = "") -> str:
    """The MIME type of ``data``; raises :class:`AttachmentError` (one line) when it is not an accepted image."""
    label = _short(name) if name else texts.IMAGE_PASTED
    if len(data) > MAX_IMAGE_BYTES:
        raise AttachmentError(texts.IMAGE_TOO_LARGE.format(name=label, size=_mb(len(data)), limit=_mb(MAX_IMAGE_BYTES)))
    mime = sniff(data)
    if mime is None:
        raise AttachmentError(texts.IMAGE_NOT_IMAGE.format(name=label))
    return mime


def read_image_file(path: str | Path) -> bytes:
    """An image file's bytes, checked (size before reading, then the magic bytes)."""
    source = Path(path)
    try:
        size = source.stat().st_size
        if size > MAX_IMAGE_BYTES:
            raise AttachmentError(texts.IMAGE_TOO_LARGE.format(name=_short(source.name), size=_mb(size), limit=_mb(MAX_IMAGE_BYTES)))
        data = source.read_bytes()
    except OSError as exc:
        raise AttachmentError(texts.IMAGE_UNREADABLE.format(name=_short(source.name), reason=exc.strerror or exc)) from exc
    check_image(data, source.name)
    return data


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"


def attachments_dir(state_dir: Path) -> Path:
    return state_dir / ATTACHMENTS_SUBDIR


def store_image(state_dir: Path, conversation_id: str, data: bytes, name: str = "") -> str:
    """Write ``data`` (checked) under the conversation's attachments folder; its reference.

    The file is named by its sha256, so the same image attached twice is stored once.
    """
    ext = FORMATS[check_image(data, name)]
    digest = hashlib.sha256(data).hexdigest()
    stem = safe_file_stem(conversation_id)
    target = attachments_dir(state_dir) / stem / f"{digest}.{ext}"
    if not target.is_file():
        atomic_write_bytes(target, data)
    return f"{REFERENCE_PREFIX}{stem}/{digest}.{ext}"


def resolve_reference(state_dir: Path, reference: str) -> Path:
    """The file a reference names, inside the attachments folder only; AttachmentError otherwise."""
    match = _REFERENCE.fullmatch(reference)
    if match is None or match.group(1) in (".", ".."):
        raise AttachmentError(texts.IMAGE_FORGED.format(reference=_short(reference)))
    root = attachments_dir(state_dir).resolve()
    target = (root / match.group(1) / f"{match.group(2)}.{match.group(3)}").resolve()
    if not target.is_relative_to(root) or target.parent.parent != root:
        raise AttachmentError(texts.IMAGE_FORGED.format(reference=_short(reference)))
    return target


def read_reference(state_dir: Path, reference: str) -> tuple[str, bytes]:
    """``(mime, bytes)`` of a stored image, checked against the sha256 in its name."""
    path = resolve_reference(state_dir, reference)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise AttachmentError(texts.IMAGE_MISSING.format(reference=reference)) from None
    except OSError as exc:
        raise StoreReadError.from_os_error(path, exc) from exc
    if hashlib.sha256(data).hexdigest() != path.stem or sniff(data) != _MIME_OF_EXT[path.suffix[1:]]:
        raise AttachmentError(texts.IMAGE_CHANGED.format(reference=reference))
    return _MIME_OF_EXT[path.suffix[1:]], data


def data_url(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def parse_data_url(url: str) -> bytes | None:
    """The bytes of a base64 ``data:image/...`` URL (None when ``url`` is not one); AttachmentError when it is damaged."""
    match = _DATA_URL.fullmatch(url)
    if match is None:
        return None
    try:
        return base64.b64decode(match.group(2).strip(), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise AttachmentError(texts.IMAGE_BAD_DATA_URL.format(reason=exc)) from exc


def _short(reference: str) -> str:
    """A reference as a one-line error shows it: control characters escaped, at most 80 characters."""
    shown = "".join(char if char.isprintable() else repr(char)[1:-1] for char in reference)
    return shown if len(shown) <= 80 else shown[:77] + "..."


# -- content lists ------------------------------------------------------------------------------


def user_content(text: str, references: Iterable[str]) -> str | list[dict[str, Any]]:
    """A user message's content: ``text`` alone, or a text part followed by one image part per reference."""
    refs = list(references)
    if not refs:
        return text
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    parts.extend({"type": "image_url", "image_url": {"url": ref}} for ref in refs)
    return parts


def image_url_of(part: Any) -> str | None:
    """The URL of an ``image_url`` content part (None for any other part)."""
    if not isinstance(part, Mapping) or part.get("type") != "image_url":
        return None
    image = part.get("image_url")
    url = image.get("url") if isinstance(image, Mapping) else image
    return url if isinstance(url, str) else None


def image_urls(content: Any) -> list[str]:
    """The URLs of every image part of a content (none for a string)."""
    if not isinstance(content, list):
        return []
    return [url for url in map(image_url_of, content) if url is not None]


def count_images(content: Any) -> int:
    if not isinstance(content, list):
        return 0
    return sum(1 for part in content if isinstance(part, Mapping) and part.get("type") == "image_url")


def map_image_urls(content: Any, change: Callable[[str], str | dict[str, Any]]) -> Any:
    """``content`` with each image part's URL replaced by ``change(url)`` (a str), or the whole
    part by a returned dict (a text note). Other parts and string content are left as they are."""
    if not isinstance(content, list):
        return content
    out: list[Any] = []
    for part in content:
        url = image_url_of(part)
        if url is None:
            out.append(part)
            continue
        new = change(url)
        if isinstance(new, dict):
            out.append(new)
        else:
            image = part.get("image_url")
            extra = dict(image) if isinstance(image, Mapping) else {}
            out.append({**part, "image_url": {**extra, "url": new}})
    return out


def note_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": f"[{text}]"}


@dataclass(frozen=True, slots=True)
class Inlined:
    """The request with its images as data URLs, and what could not be sent (one line each)."""

    messages: list[dict[str, Any]]
    notes: tuple[str, ...] = ()


def inline_images(
    messages: list[dict[str, Any]], state_dir: Path, *, vision: bool = True, read: dict[str, str] | None = None
) -> Inlined:
    """The payload with every stored reference replaced by its data URL (blocking: call off the loop).

    ``vision=False``: every image becomes a text note (earlier turns' images, after a switch to a
    model without vision). A reference that cannot be read (missing, forged, changed) becomes a
    one-line note for the model and is reported in ``notes``. ``read`` keeps the data URLs made,
    by reference, for the next call (the model calls of one turn read each image once).
    """
    notes: list[str] = []
    cache: dict[str, str | dict[str, Any]] = {}
    made = read if read is not None else {}

    def change(url: str) -> str | dict[str, Any]:
        if url in cache:
            return cache[url]
        if vision and url in made:
            return made[url]
        result: str | dict[str, Any]
        if not vision:
            result = note_part(texts.IMAGE_NOT_SENT_NO_VISION)
        elif url.startswith(("data:", "http://", "https://")):
            result = url
        else:
            try:
                result = made[url] = data_url(*read_reference(state_dir, url))
            except CrewAgentError as exc:
                notes.append(str(exc))
                result = note_part(str(exc))
        cache[url] = result
        return result

    if not any(count_images(m.get("content")) for m in messages):
        return Inlined(messages)
    out = [{**m, "content": map_image_urls(m["content"], change)} if count_images(m.get("content")) else m for m in messages]
    return Inlined(out, tuple(notes))


def export_data_urls(messages: list[dict[str, Any]], state_dir: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """An OpenAI export's messages with stored images as data URLs; a reference that cannot be
    read stays as it is and gives a warning."""
    warnings: list[str] = []

    def change(url: str) -> str:
        if not url.startswith(REFERENCE_PREFIX):
            return url
        try:
            return data_url(*read_reference(state_dir, url))
        except CrewAgentError as exc:
            warnings.append(str(exc))
            return url

    out = [{**m, "content": map_image_urls(m["content"], change)} if count_images(m.get("content")) else m for m in messages]
    return out, warnings


def decode_imported_images(content: Any, where: str) -> list[bytes]:
    """The images of an imported message given as data URLs, decoded and checked (raises
    AttachmentError naming ``where`` before anything is stored)."""
    found: list[bytes] = []
    for index, url in enumerate(image_urls(content)):
        try:
            data = parse_data_url(url)
            if data is not None:
                check_image(data, f"{where} image {index + 1}")
                found.append(data)
        except AttachmentError as exc:
            raise AttachmentError(f"{where}: {exc}") from exc
    return found


def store_imported_images(content: Any, state_dir: Path, conversation_id: str) -> Any:
    """``content`` with each data-URL image stored as a file and named by its reference."""

    def change(url: str) -> str:
        data = parse_data_url(url)
        return url if data is None else store_image(state_dir, conversation_id, data)

    return map_image_urls(content, change)
