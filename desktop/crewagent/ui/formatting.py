"""Short user-facing texts shared by the views: relative times, mode names, counts."""

from __future__ import annotations

from datetime import datetime, timezone

from PySide6.QtCore import QCoreApplication, QDateTime, QLocale


def mode_label(mode: str) -> str:
    """The name users see for a conversation type (``run`` is called a Workflow in the UI)."""
    labels = {
        "chat": QCoreApplication.translate("formatting", "Chat"),
        "agent": QCoreApplication.translate("formatting", "Agent"),
        "run": QCoreApplication.translate("formatting", "Workflow"),
    }
    return labels.get(mode, mode)


def message_count(count: int) -> str:
    if count == 0:
        return QCoreApplication.translate("formatting", "No messages")
    if count == 1:
        return QCoreApplication.translate("formatting", "1 message")
    return QCoreApplication.translate("formatting", "{count} messages").format(count=count)


def streaming(detail: str) -> str:
    """A Works row's detail while a turn runs in its conversation."""
    return QCoreApplication.translate("formatting", "{detail} · streaming…").format(detail=detail)


def relative_time(moment: datetime, now: datetime | None = None) -> str:
    """``just now``, ``5 min ago``, ``3 h ago``, ``yesterday``, then a short local date."""
    now = now or datetime.now(timezone.utc)
    seconds = (now - moment).total_seconds()
    if seconds < 60:
        return QCoreApplication.translate("formatting", "just now")
    if seconds < 3600:
        return QCoreApplication.translate("formatting", "{minutes} min ago").format(minutes=int(seconds // 60))
    local = QDateTime.fromSecsSinceEpoch(int(moment.timestamp())).toLocalTime()
    today = QDateTime.fromSecsSinceEpoch(int(now.timestamp())).toLocalTime().date()
    if seconds < 6 * 3600 or local.date() == today:
        return QCoreApplication.translate("formatting", "{hours} h ago").format(hours=max(1, int(seconds // 3600)))
    if local.date().daysTo(today) == 1:
        return QCoreApplication.translate("formatting", "yesterday")
    fmt = "MMM d" if local.date().year() == today.year() else "MMM d, yyyy"
    return QLocale().toString(local.date(), fmt)


def full_time(moment: datetime) -> str:
    """A complete local date and time, for tooltips."""
    local = QDateTime.fromSecsSinceEpoch(int(moment.timestamp())).toLocalTime()
    return QLocale().toString(local, QLocale.FormatType.ShortFormat)
