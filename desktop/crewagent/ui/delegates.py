"""Delegates that draw recent projects and conversations as two-line rows."""

from __future__ import annotations

import hashlib
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import QAbstractItemView, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from crewagent.ui import formatting
from crewagent.ui.theme import BADGE_ALPHA, tokens_of
from crewagent.ui.models import ConversationRole, RecentProjectRole
from crewagent.worker.values import ConversationSummary, RecentProjectEntry

_Index = QModelIndex | QPersistentModelIndex

PAD_X = 12
PAD_Y = 9
LINE_GAP = 3
RADIUS = 8.0

_AVATAR_COLORS = ("#4f46e5", "#0891b2", "#059669", "#d97706", "#db2777", "#7c3aed", "#2563eb")


def badge_color(kind: str, colors: QPalette) -> QColor:
    """The text colour of a ``chat``/``agent``/``run``/``missing`` badge in the palette's theme."""
    tokens = tokens_of(colors)
    return QColor(tokens.get(f"badge_{kind}", tokens["text_muted"]))


def _muted(option: QStyleOptionViewItem) -> QColor:
    return option.palette.color(QPalette.ColorGroup.Normal, QPalette.ColorRole.PlaceholderText)


def _text_color(option: QStyleOptionViewItem) -> QColor:
    role = QPalette.ColorRole.HighlightedText if _selected(option) else QPalette.ColorRole.Text
    return option.palette.color(QPalette.ColorGroup.Normal, role)


def _selected(option: QStyleOptionViewItem) -> bool:
    return bool(option.state & QStyle.StateFlag.State_Selected)


def _bold(font: QFont, delta: float = 0.0) -> QFont:
    bold = QFont(font)
    bold.setWeight(QFont.Weight.DemiBold)
    if delta:
        bold.setPointSizeF(font.pointSizeF() + delta)
    return bold


def _small(font: QFont) -> QFont:
    small = QFont(font)
    small.setPointSizeF(max(6.0, font.pointSizeF() - 1.0))
    return small


def _paint_background(painter: QPainter, option: QStyleOptionViewItem) -> None:
    """A rounded card behind the row: accent when selected, a light tint on hover."""
    rect = QRectF(option.rect).adjusted(4, 2, -4, -2)
    if _selected(option):
        color = option.palette.color(QPalette.ColorGroup.Normal, QPalette.ColorRole.Highlight)
    elif option.state & QStyle.StateFlag.State_MouseOver:
        color = option.palette.color(QPalette.ColorGroup.Normal, QPalette.ColorRole.AlternateBase)
    else:
        return
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(color)
    painter.drawRoundedRect(rect, RADIUS, RADIUS)


def _paint_pill(painter: QPainter, left: int, baseline_rect: QRect, text: str, color: QColor, font: QFont) -> int:
    """A small rounded label; returns the x just after it."""
    metrics = QFontMetrics(font)
    width = metrics.horizontalAdvance(text) + 12
    height = metrics.height() + 2
    rect = QRectF(left, baseline_rect.center().y() - height / 2 + 1, width, height)
    fill = QColor(color)
    fill.setAlpha(BADGE_ALPHA)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(fill)
    painter.drawRoundedRect(rect, height / 2, height / 2)
    painter.setPen(color)
    painter.setFont(font)
    painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
    return int(rect.right()) + 6


class _TwoLineDelegate(QStyledItemDelegate):
    """Common geometry: a bold first line and a smaller second line, on a card.

    A subclass names the role that holds its row's value and the value's type (``ROLE``,
    ``VALUE``) and paints the inside of the card (``paint_row``); a row without such a value is
    painted as Qt would.
    """

    ROLE: int
    VALUE: type

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        title = QFontMetrics(_bold(option.font, 0.5)).height()
        detail = QFontMetrics(_small(option.font)).height() + 2
        return QSize(200, PAD_Y * 2 + title + LINE_GAP + detail + 4)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        value = index.data(self.ROLE)
        if not isinstance(value, self.VALUE):
            super().paint(painter, option, index)
            return
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        _paint_background(painter, option)
        self.paint_row(painter, option, index, value, option.rect.adjusted(PAD_X, PAD_Y, -PAD_X, -PAD_Y))
        painter.restore()

    def paint_row(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index, value: Any, rect: QRect) -> None:
        raise NotImplementedError


def repaint_every_minute(view: QAbstractItemView) -> QTimer:
    """"5 min ago" must not stay "just now" forever: repaint the view's visible rows once a minute."""
    clock = QTimer(view)
    clock.setInterval(60_000)
    clock.timeout.connect(view.viewport().update)
    clock.start()
    return clock


class RecentProjectDelegate(_TwoLineDelegate):
    """Avatar, name and last-opened time, then the folder; a missing folder is marked in red."""

    AVATAR = 34
    ROLE = RecentProjectRole.ENTRY
    VALUE = RecentProjectEntry

    def paint_row(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index, entry: RecentProjectEntry, rect: QRect) -> None:
        avatar = QRectF(rect.left(), rect.center().y() - self.AVATAR / 2 + 1, self.AVATAR, self.AVATAR)
        digest = hashlib.sha1(entry.project_id.encode()).digest()
        color = QColor(_AVATAR_COLORS[digest[0] % len(_AVATAR_COLORS)]) if entry.exists else QColor("#9ca3af")
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        painter.drawRoundedRect(avatar, 8, 8)
        painter.setPen(QColor("white"))
        painter.setFont(_bold(option.font, 2))
        painter.drawText(avatar, Qt.AlignmentFlag.AlignCenter, (entry.name[:1] or "?").upper())

        text_left = rect.left() + self.AVATAR + 12
        title_font, small_font = _bold(option.font, 0.5), _small(option.font)
        title_h = QFontMetrics(title_font).height()
        line1 = QRect(text_left, rect.top(), rect.right() - text_left, title_h)
        line2 = QRect(text_left, line1.bottom() + LINE_GAP, line1.width(), QFontMetrics(small_font).height() + 2)

        when = formatting.relative_time(entry.last_opened_at)
        painter.setFont(small_font)
        painter.setPen(_muted(option))
        when_width = QFontMetrics(small_font).horizontalAdvance(when)
        painter.drawText(line1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, when)

        painter.setFont(title_font)
        painter.setPen(_text_color(option) if entry.exists else _muted(option))
        name_room = line1.width() - when_width - 16
        missing_text = self.tr("Folder missing")
        if not entry.exists:
            name_room -= QFontMetrics(small_font).horizontalAdvance(missing_text) + 20
        name = QFontMetrics(title_font).elidedText(entry.name, Qt.TextElideMode.ElideRight, max(0, name_room))
        painter.drawText(line1, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, name)
        if not entry.exists:
            after_name = line1.left() + QFontMetrics(title_font).horizontalAdvance(name) + 8
            _paint_pill(painter, after_name, line1, missing_text, badge_color("missing", option.palette), small_font)

        painter.setFont(small_font)
        painter.setPen(_muted(option))
        path = QFontMetrics(small_font).elidedText(entry.root, Qt.TextElideMode.ElideMiddle, line2.width())
        painter.drawText(line2, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, path)


class ConversationDelegate(_TwoLineDelegate):
    """Title and last activity, then the type and the message count."""

    ROLE = ConversationRole.SUMMARY
    VALUE = ConversationSummary

    def paint_row(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index, item: ConversationSummary, rect: QRect) -> None:
        title_font, small_font = _bold(option.font, 0.5), _small(option.font)
        small_metrics = QFontMetrics(small_font)
        line1 = QRect(rect.left(), rect.top(), rect.width(), QFontMetrics(title_font).height())
        line2 = QRect(rect.left(), line1.bottom() + LINE_GAP, rect.width(), small_metrics.height() + 2)

        when = formatting.relative_time(item.last_active_at)
        painter.setFont(small_font)
        painter.setPen(_muted(option))
        painter.drawText(line1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, when)

        painter.setFont(title_font)
        painter.setPen(_text_color(option))
        room = line1.width() - small_metrics.horizontalAdvance(when) - 12
        title = QFontMetrics(title_font).elidedText(item.title, Qt.TextElideMode.ElideRight, max(0, room))
        painter.drawText(line1, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, title)

        color = badge_color(item.active_type, option.palette)
        after = _paint_pill(painter, line2.left(), line2, formatting.mode_label(item.active_type), color, small_font)
        painter.setFont(small_font)
        painter.setPen(_muted(option))
        count_rect = QRect(after, line2.top(), line2.right() - after, line2.height())
        detail = small_metrics.elidedText(self.detail_text(index, item), Qt.TextElideMode.ElideRight, count_rect.width())
        painter.drawText(count_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, detail)

    def detail_text(self, index: _Index, item: ConversationSummary) -> str:
        """The text after the type pill: the message count (the Works panel shows search snippets)."""
        count = formatting.message_count(item.message_count)
        return formatting.streaming(count) if index.data(ConversationRole.RUNNING) else count
