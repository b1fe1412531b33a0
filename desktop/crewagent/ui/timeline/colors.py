"""The colours the timeline delegate paints with, taken from a theme's token table."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from PySide6.QtGui import QColor

from crewagent.ui.theme import TOKENS, ThemeName
from crewagent.ui.timeline.model import FAILED, INTERRUPTED, OK, PENDING, RUNNING


@dataclass(frozen=True)
class TimelineColors:
    """What the delegate paints with, taken from a theme's token table (``ui/theme.py``)."""

    user_bubble: QColor
    user_text: QColor
    text: QColor
    muted: QColor
    accent: QColor
    accent_text: QColor
    card: QColor
    card_hover: QColor
    card_border: QColor
    button: QColor
    button_hover: QColor
    button_border: QColor
    error_fill: QColor
    error_border: QColor
    error_text: QColor
    ask_fill: QColor
    ask_border: QColor
    ask_text: QColor
    notice_fill: QColor
    notice_border: QColor
    notice_text: QColor
    states: Mapping[str, QColor]
    #: A subagent's status (running, completed, failed, cancelled) in its Task part and notice.
    subagent_states: Mapping[str, QColor]
    badges: Mapping[str, QColor]
    #: Code blocks in Markdown (``markdown.render``): ``light`` or ``dark``.
    code_theme: str

    @classmethod
    def from_tokens(cls, tokens: Mapping[str, str], code_theme: str = "light") -> TimelineColors:
        def c(name: str) -> QColor:
            return QColor(tokens[name])

        return cls(
            user_bubble=c("user_bubble"),
            user_text=c("user_bubble_text"),
            text=c("text"),
            muted=c("text_muted"),
            accent=c("accent"),
            accent_text=c("accent_text"),
            card=c("card"),
            card_hover=c("card_hover"),
            card_border=c("border"),
            button=c("surface"),
            button_hover=c("hover"),
            button_border=c("border_strong"),
            error_fill=c("error_bg"),
            error_border=c("error_border"),
            error_text=c("error_text"),
            ask_fill=c("ask_bg"),
            ask_border=c("ask_border"),
            ask_text=c("ask_text"),
            notice_fill=c("info_bg"),
            notice_border=c("info_border"),
            notice_text=c("info_text"),
            subagent_states={"running": c("running"), "completed": c("ok"), "failed": c("danger"), "cancelled": c("warning")},
            states={PENDING: c("text_muted"), RUNNING: c("running"), OK: c("ok"), FAILED: c("danger"), INTERRUPTED: c("warning")},
            badges={"interrupted": c("interrupted"), "synthetic": c("synthetic"), "error": c("badge_error")},
            code_theme=code_theme,
        )

    @classmethod
    def of_theme(cls, name: ThemeName) -> TimelineColors:
        return cls.from_tokens(TOKENS[name], name)
