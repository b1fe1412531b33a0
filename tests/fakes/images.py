"""Real image files for the attachment tests: tiny valid PNGs (no Qt, no Pillow) and the other formats' headers."""

from __future__ import annotations

import struct
import zlib


def png_bytes(width: int = 4, height: int = 3, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A valid truecolour PNG of one colour (any decoder reads it)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b"")


#: The smallest valid GIF (1x1, one colour).
GIF_BYTES = bytes.fromhex("47494638396101000100800000ffffff00000021f90401000000002c00000000010001000002024401003b")
#: A JPEG's and a WebP's magic bytes followed by filler: enough for the format check, not a picture.
JPEG_HEADER = b"\xff\xd8\xff\xe0" + b"\x00" * 60
WEBP_HEADER = b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\x00" * 40
