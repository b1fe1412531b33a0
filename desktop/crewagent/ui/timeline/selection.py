"""Text selected with the mouse in a message (issue 18 item 12), copied with Ctrl+C.

A selection lies within one laid-out document of one row (a message's text, a code block's
message, a tool's output): press in it and drag. Dragging past the row selects to the start or
the end of that document, as a text field does past its edge. It is view state, like an expanded
part: keyed by row key, painted by the delegate through the row's :class:`Canvas`.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QTextDocument

from crewagent.ui.timeline.canvas import RowLayout, TextRange

#: What Qt puts between paragraphs of a selection (QTextCursor.selectedText), and line separators.
_PARAGRAPH, _LINE = "\u2029", "\u2028"


def position_in(document: QTextDocument, local: QPointF) -> int:
    """The character position nearest to ``local`` (document coordinates), clamped to the document."""
    found = document.documentLayout().hitTest(local, Qt.HitTestAccuracy.FuzzyHit)
    return max(0, found) if found >= 0 else (0 if local.y() < 0 else document.characterCount() - 1)


class TextSelection:
    """The selection of the timeline (at most one), and the drag that is making it."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.doc = -1
        self.anchor = 0
        self.position = 0
        self.dragging = False
        self._document: QTextDocument | None = None

    def clear(self) -> bool:
        """Forget the selection; True when there was one to repaint."""
        had = self.key is not None and self.anchor != self.position
        self.key, self.doc, self._document, self.dragging = None, -1, None, False
        self.anchor = self.position = 0
        return had

    def press(self, key: str, layout: RowLayout, pos: QPointF) -> bool:
        """A press at ``pos`` (row coordinates): start a selection there when it is in a document."""
        for number, placed in enumerate(layout.docs):
            local = pos - placed.origin
            size = placed.laid.document.size()
            if 0 <= local.x() <= size.width() and 0 <= local.y() <= size.height():
                self.key, self.doc, self._document = key, number, placed.laid.document
                self.anchor = self.position = position_in(placed.laid.document, local)
                self.dragging = True
                return True
        return False

    def drag_to(self, key: str, layout: RowLayout, pos: QPointF, below: bool) -> None:
        """The mouse moved while dragging; ``below``: it is past the selection's row, downwards."""
        if self._document is None:
            return
        if key == self.key and self.doc < len(layout.docs):
            placed = layout.docs[self.doc]
            self._document = placed.laid.document
            self.position = position_in(placed.laid.document, pos - placed.origin)
        else:
            self.position = self._document.characterCount() - 1 if below else 0

    def release(self) -> None:
        self.dragging = False

    def range_for(self, key: str) -> TextRange | None:
        if key != self.key or self.anchor == self.position:
            return None
        return TextRange(self.doc, self.anchor, self.position)

    def text(self) -> str:
        """The selected text as plain text ("" when nothing is selected)."""
        if self._document is None or self.anchor == self.position:
            return ""
        selected = TextRange(self.doc, self.anchor, self.position).cursor(self._document).selectedText()
        return selected.replace(_PARAGRAPH, "\n").replace(_LINE, "\n")
