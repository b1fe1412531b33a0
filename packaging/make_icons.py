"""Render the app icon set from resources/icons/crewagent.svg (PNG sizes, .ico, .icns).

Run once after changing the SVG and commit the result (``packaging/icons/``):

    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/make_icons.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QGuiApplication, QImage, QImageWriter, QPainter
from PySide6.QtSvg import QSvgRenderer

ROOT = Path(__file__).resolve().parent.parent
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def render(renderer: QSvgRenderer, size: int) -> QImage:
    image = QImage(QSize(size, size), QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image


def main() -> int:
    _app = QGuiApplication(sys.argv)
    renderer = QSvgRenderer(str(ROOT / "resources" / "icons" / "crewagent.svg"))
    if not renderer.isValid():
        print("cannot read the SVG icon", file=sys.stderr)
        return 1
    out = ROOT / "packaging" / "icons"
    for size in SIZES:
        target = out / "hicolor" / f"{size}x{size}" / "apps" / "crewagent.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        render(renderer, size).save(str(target), "PNG")
    for fmt, size in (("ico", 256), ("icns", 512)):
        writer = QImageWriter(str(out / f"crewagent.{fmt}"), fmt.encode())
        if not writer.write(render(renderer, size)):
            print(f"could not write .{fmt}: {writer.errorString()}", file=sys.stderr)
            return 1
    print(f"icons written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
