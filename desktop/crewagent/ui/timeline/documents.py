"""Laid-out text of timeline rows: QTextDocuments cached by text and width, and cheap estimates.

Laying out Markdown costs a fraction of a millisecond per message, which is too much for every
row of a 10,000-message history at once. So only rows that are painted (or near the end, where
the view opens) get a real document; the others get an estimate from the text's length and line
breaks, corrected when they first come into view.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass

from PySide6.QtGui import QColor, QFont, QFontDatabase, QFontMetricsF, QTextCharFormat, QTextDocument, QTextOption

from crewagent.ui import markdown

#: Documents kept laid out (the visible rows and some around them).
DOCUMENT_CACHE_SIZE = 400


@dataclass(frozen=True)
class LaidOut:
    document: QTextDocument
    code_blocks: tuple[str, ...] = ()
    #: The HTML the document was set from ("" for plain text).
    html: str = ""

    @property
    def height(self) -> float:
        return self.document.size().height()

    @property
    def ideal_width(self) -> float:
        return self.document.idealWidth()


def mono_font(base: QFont) -> QFont:
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setPointSizeF(max(7.0, base.pointSizeF() - 1.0))
    return font


class DocumentCache:
    """Documents by (part, text, width, font); least recently used ones are dropped."""

    def __init__(self, size: int = DOCUMENT_CACHE_SIZE):
        self._size = size
        self._docs: OrderedDict[tuple[object, ...], LaidOut] = OrderedDict()
        #: ``light`` or ``dark``: the colours of code blocks (clear the cache when it changes).
        self.code_theme = "light"

    def clear(self) -> None:
        self._docs.clear()

    def has(self, key: tuple[object, ...]) -> bool:
        return key in self._docs

    def markdown(
        self, key: tuple[object, ...], text: str, width: float, font: QFont, *, growing: bool = False, marked: Marked | None = None
    ) -> LaidOut:
        """``growing``: the text is still streaming in (see :func:`markdown.render_growing`);
        ``marked``: a searched text and the background its occurrences get."""
        rest = (text, round(width), font.key(), *_mark_key(marked))
        full = (*key, "md-growing" if growing else "md", *rest)
        cached = self._get(full)
        if cached is not None:
            return cached
        markdown.warm_up_later()
        rendered = (markdown.render_growing if growing else markdown.render)(text, self.code_theme)
        if not growing:
            # The end of a stream: the document laid out for its last update is most often the
            # stored form already; building it again cost the GUI thread ~15 ms of CPU for a
            # 6.5 KB answer (setHtml and layout), as the next turn's tool starts.
            grown = self._docs.get((*key, "md-growing", *rest))
            if grown is not None and grown.html == rendered.html:
                return self._put(full, grown)
        doc = _document(font, width)
        doc.setHtml(rendered.html)
        _mark(doc, marked)
        return self._put(full, LaidOut(doc, rendered.code_blocks, rendered.html))

    def plain(self, key: tuple[object, ...], text: str, width: float, font: QFont, *, marked: Marked | None = None) -> LaidOut:
        full = (*key, "plain", text, round(width), font.key(), *_mark_key(marked))
        cached = self._get(full)
        if cached is not None:
            return cached
        doc = _document(font, width)
        doc.setPlainText(text)
        _mark(doc, marked)
        return self._put(full, LaidOut(doc))

    def _get(self, key: tuple[object, ...]) -> LaidOut | None:
        found = self._docs.get(key)
        if found is not None:
            self._docs.move_to_end(key)
        return found

    def _put(self, key: tuple[object, ...], laid: LaidOut) -> LaidOut:
        self._docs[key] = laid
        while len(self._docs) > self._size:
            self._docs.popitem(last=False)
        return laid


#: A searched text to mark in a document, and the background of its occurrences.
Marked = tuple[str, QColor]


def _mark_key(marked: Marked | None) -> tuple[object, ...]:
    return () if marked is None else ("marked", marked[0], marked[1].rgba())


def _mark(doc: QTextDocument, marked: Marked | None) -> None:
    """Give every occurrence of the searched text a background (case-insensitive, as search is)."""
    if marked is None or not marked[0]:
        return
    needle, color = marked
    highlight = QTextCharFormat()
    highlight.setBackground(color)
    cursor = doc.find(needle)
    while not cursor.isNull():
        cursor.mergeCharFormat(highlight)
        cursor = doc.find(needle, cursor)


def _document(font: QFont, width: float) -> QTextDocument:
    doc = QTextDocument()
    doc.setDefaultFont(font)
    doc.setDocumentMargin(0)
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
    doc.setDefaultTextOption(option)
    doc.setTextWidth(max(20.0, width))
    return doc


def estimate_height(text: str, width: float, font: QFont | tuple[float, float], *, code: bool = False) -> float:
    """About how tall ``text`` lays out at ``width`` (no document is built).

    ``font`` may be given as its (average character width, line spacing), from :func:`font_metrics`.
    """
    if not text:
        return 0.0
    char, spacing = font if isinstance(font, tuple) else font_metrics(font)
    per_line = max(1, int(width / char))
    lines = 0
    fences = 0
    for line in text.split("\n"):
        if line.startswith("```"):
            fences += 1
            continue
        lines += max(1, math.ceil(len(line) / per_line))
    height = lines * spacing
    # a fenced block gets a header and padding; paragraphs get a little spacing
    height += (fences // 2) * (spacing + 22)
    if not code:
        height += text.count("\n\n") * spacing * 0.5
    return height


_METRICS: dict[str, tuple[float, float]] = {}


def font_metrics(font: QFont) -> tuple[float, float]:
    """(average character width, line spacing) of a font, computed once per font."""
    key = font.key()
    found = _METRICS.get(key)
    if found is None:
        metrics = QFontMetricsF(font)
        found = (max(1.0, metrics.averageCharWidth()), metrics.lineSpacing())
        _METRICS[key] = found
    return found
