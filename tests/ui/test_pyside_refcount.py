"""The Qt binding keeps None alive: PySide6 6.12.0 on CPython 3.11 did not, and the app aborted.

Every call of a method returning void (``QPainter.translate``, ``save``, ``setPen``...) dropped a
reference to None that it never took, so after a few thousand calls -- a minute of scrolling the
timeline -- CPython aborted with "Fatal Python error: none_dealloc". From Python 3.12 on, None is
immortal and the count does not move; the check then passes trivially.
"""

from __future__ import annotations

import sys
from typing import Any

from PySide6.QtGui import QImage, QPainter


def test_void_method_calls_do_not_lose_references_to_none(qapp: Any) -> None:
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        before = sys.getrefcount(None)
        for _ in range(1000):
            painter.translate(0, 0)
        after = sys.getrefcount(None)
    finally:
        painter.end()
    assert after >= before - 50, f"1000 void calls took {before - after} references to None away"
