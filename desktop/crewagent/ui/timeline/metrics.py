"""The timeline's measures: column, paddings, radii and gaps of every row kind, in pixels."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ColumnMetrics:
    """The column rows are laid out in, centred in the view."""

    max_width: float = 860
    min_width: float = 200
    #: The narrowest row width laid out (a narrower view is scrolled, not squeezed).
    min_row_width: int = 240
    side: float = 20
    avatar: float = 26
    avatar_gap: float = 12
    #: Below every top-level row (user bubble, assistant message, error card).
    row_gap: float = 6
    #: A row is never laid out shorter than this (Qt treats a zero height as "not measured").
    min_row_height: int = 2


@dataclass(frozen=True)
class ControlMetrics:
    """Cards, buttons, pills and one-line labels shared by all row kinds."""

    card_radius: float = 10
    card_border: float = 1.0
    card_pad: float = 12
    button_height: float = 28
    button_pad_x: float = 24
    button_radius: float = 7
    button_gap: float = 8
    #: How much darker a hovered primary button is (``QColor.darker``).
    button_hover_darker: int = 115
    pill_pad_x: float = 12
    pill_pad_y: float = 1
    pill_gap: float = 6
    pill_alpha: int = 30
    #: Point size of the small font: the view's font minus this, but never below ``small_min``.
    small_delta: float = 1.0
    small_min: float = 7.0


@dataclass(frozen=True)
class UserMetrics:
    top: float = 12
    #: The widest a bubble gets, as a part of the column.
    max_ratio: float = 0.78
    pad_x: float = 14
    pad_y: float = 10
    radius: float = 14


@dataclass(frozen=True)
class AssistantMetrics:
    top: float = 10
    header_gap: float = 4
    name_gap: float = 10
    text_gap: float = 4
    typing_width: float = 60
    typing_height: float = 20
    typing_advance: float = 22
    buttons_gap: float = 4
    # reasoning ("Thought for N s"), under the header
    toggle_height: float = 22
    toggle_pad: float = 8
    toggle_gap: float = 2
    reasoning_indent: float = 12
    reasoning_bar: float = 3
    reasoning_inset: float = 14
    reasoning_gap: float = 8


@dataclass(frozen=True)
class ErrorMetrics:
    title_height: float = 22
    title_gap: float = 4
    block_gap: float = 6


@dataclass(frozen=True)
class ToolMetrics:
    top: float = 3
    header: float = 34
    radius: float = 9
    bottom: float = 4
    dot_x: float = 12
    dot_radius: float = 4
    dot_advance: float = 16
    icon_width: float = 24
    icon_gap: float = 6
    label_ratio: float = 0.5
    label_gap: float = 8
    separator_width: float = 14
    separator_gap: float = 6
    kind_ratio: float = 0.3
    kind_gap: float = 6
    status_width: float = 200
    status_gap: float = 6
    details_reserve: float = 40
    synthetic_from_right: float = 120
    chevron_from_right: float = 28
    chevron_width: float = 20
    #: The line between the header and the expanded body, inset from the card's border.
    rule: float = 1
    body_top: float = 6
    section_label: float = 18
    section_label_advance: float = 20
    section_gap: float = 8
    offload_gap: float = 6
    # a Task part's body, under its header
    task_indent: float = 28
    task_line: float = 20
    task_line_advance: float = 22
    task_note: float = 18
    task_note_advance: float = 20
    task_summary_gap: float = 2
    task_button_gap: float = 4
    task_bottom: float = 10


@dataclass(frozen=True)
class AskUserMetrics:
    title_top: float = 4
    title_height: float = 24
    header: float = 30
    line: float = 20
    lines_pad: float = 8
    bottom_pad: float = 6
    editor_inset: float = 2


@dataclass(frozen=True)
class NoticeMetrics:
    """A summary of the earlier conversation, and a finished background subagent's notice."""

    top: float = 8
    header: float = 22
    header_advance: float = 24
    indent: float = 20
    text_gap: float = 6
    bottom: float = 4
    subagent_top: float = 6
    subagent_pad_top: float = 8
    subagent_title: float = 22
    subagent_summary: float = 18
    subagent_button_gap: float = 4
    subagent_button_bottom: float = 6
    subagent_pad_bottom: float = 6
    subagent_radius: float = 8
    subagent_dot: tuple[float, float] = (3, 11)
    subagent_dot_radius: float = 3.5
    subagent_dot_advance: float = 12
    subagent_title_gap: float = 6
    subagent_summary_chars: int = 200


@dataclass(frozen=True)
class TimelineMetrics:
    column: ColumnMetrics = field(default_factory=ColumnMetrics)
    controls: ControlMetrics = field(default_factory=ControlMetrics)
    user: UserMetrics = field(default_factory=UserMetrics)
    assistant: AssistantMetrics = field(default_factory=AssistantMetrics)
    error: ErrorMetrics = field(default_factory=ErrorMetrics)
    tool: ToolMetrics = field(default_factory=ToolMetrics)
    ask_user: AskUserMetrics = field(default_factory=AskUserMetrics)
    notice: NoticeMetrics = field(default_factory=NoticeMetrics)


METRICS = TimelineMetrics()
