"""Light and dark themes (palette + stylesheet from one token table each), and following the system.

``resources/styles/app.qss`` holds every rule once, with ``${token}`` colours; a theme is a
token table. The palette is built from the same table, so delegates that paint with
``option.palette`` match the stylesheet.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from importlib import resources
from pathlib import Path
from string import Template
from typing import Literal

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

log = logging.getLogger(__name__)

ThemeChoice = Literal["system", "light", "dark"]
ThemeName = Literal["light", "dark"]
THEME_CHOICES: tuple[ThemeChoice, ...] = ("system", "light", "dark")

LIGHT: dict[str, str] = {
    "window": "#f4f5f8",
    "surface": "#ffffff",
    "surface_alt": "#f1f3f9",
    "input_bg": "#ffffff",
    "border": "#e5e7eb",
    "border_strong": "#d1d5db",
    "text": "#111827",
    "text_soft": "#4b5563",
    "text_muted": "#6b7280",
    "text_faint": "#9ca3af",
    "title": "#1e1b4b",
    "accent": "#4f46e5",
    "accent_hover": "#4338ca",
    "accent_pressed": "#3730a3",
    "accent_text": "#ffffff",
    "hover": "#f3f4f6",
    "pressed": "#e5e7eb",
    "highlight": "#e0e7ff",
    "highlight_text": "#1e1b4b",
    "disabled_text": "#9ca3af",
    "disabled_bg": "#f9fafb",
    "scrollbar": "#d1d5db",
    "danger": "#dc2626",
    "error_bg": "#fef2f2",
    "error_border": "#fecaca",
    "error_text": "#991b1b",
    "info_bg": "#eff6ff",
    "info_border": "#bfdbfe",
    "info_text": "#1e3a8a",
    "warning_bg": "#fffbeb",
    "warning_border": "#fde68a",
    "warning_text": "#92400e",
    "success": "#047857",
    "success_bg": "#ecfdf5",
    "tooltip_bg": "#111827",
    "tooltip_text": "#f9fafb",
    "link": "#4f46e5",
    # the Conversation tab: timeline canvas, bubbles, tool cards, states, ask-user, code
    "canvas": "#fbfbfd",
    "user_bubble": "#eef2ff",
    "user_bubble_text": "#1e1b4b",
    "card": "#f9fafb",
    "card_hover": "#f3f4f6",
    "running": "#2563eb",
    "ok": "#16a34a",
    "warning": "#d97706",
    "interrupted": "#92400e",
    "synthetic": "#475569",
    "ask_bg": "#f5f3ff",
    "ask_border": "#ddd6fe",
    "ask_text": "#5b21b6",
    "code_bg": "#f6f8fa",
    "inline_code_bg": "#eef0f4",
    "table_border": "#d1d5db",
    "table_header": "#f3f4f6",
    "segment_checked": "#ffffff",
    # conversation-type badges in the lists (text on a faint tint of itself): WCAG AA, see badge_pairs()
    "badge_chat": "#1d4ed8",
    "badge_agent": "#6d28d9",
    "badge_run": "#115e59",
    "badge_missing": "#991b1b",
    "badge_error": "#991b1b",
}

DARK: dict[str, str] = {
    "window": "#0f1117",
    "surface": "#171a22",
    "surface_alt": "#1f232d",
    "input_bg": "#12151c",
    "border": "#2a2f3b",
    "border_strong": "#373d4b",
    "text": "#e6e8ee",
    "text_soft": "#c3c8d3",
    "text_muted": "#9aa1b0",
    "text_faint": "#6b7280",
    "title": "#e0e7ff",
    "accent": "#6366f1",
    "accent_hover": "#818cf8",
    "accent_pressed": "#4f46e5",
    "accent_text": "#ffffff",
    "hover": "#232834",
    "pressed": "#2b3140",
    "highlight": "#2e2a6b",
    "highlight_text": "#e0e7ff",
    "disabled_text": "#5f6675",
    "disabled_bg": "#191c24",
    "scrollbar": "#3a4050",
    "danger": "#f87171",
    "error_bg": "#2a1418",
    "error_border": "#5b2129",
    "error_text": "#fecaca",
    "info_bg": "#111d33",
    "info_border": "#1e3a8a",
    "info_text": "#bfdbfe",
    "warning_bg": "#2a2111",
    "warning_border": "#5c4514",
    "warning_text": "#fcd34d",
    "success": "#34d399",
    "success_bg": "#0f2a22",
    "tooltip_bg": "#e6e8ee",
    "tooltip_text": "#111827",
    "link": "#a5b4fc",
    # the Conversation tab: timeline canvas, bubbles, tool cards, states, ask-user, code
    "canvas": "#12151c",
    "user_bubble": "#262a4d",
    "user_bubble_text": "#e0e7ff",
    "card": "#1a1e27",
    "card_hover": "#222734",
    "running": "#60a5fa",
    "ok": "#34d399",
    "warning": "#fbbf24",
    "interrupted": "#fbbf24",
    "synthetic": "#b4bfcf",
    "ask_bg": "#1e1a30",
    "ask_border": "#4c3d84",
    "ask_text": "#c4b5fd",
    "code_bg": "#0d1117",
    "inline_code_bg": "#262b36",
    "table_border": "#3a4050",
    "table_header": "#1f232d",
    "segment_checked": "#2b3140",
    "badge_chat": "#93c5fd",
    "badge_agent": "#c4b5fd",
    "badge_run": "#5eead4",
    "badge_missing": "#fca5a5",
    "badge_error": "#fca5a5",
}

TOKENS: dict[ThemeName, dict[str, str]] = {"light": LIGHT, "dark": DARK}

#: How opaque a badge's tint of its own colour is (0-255), behind its text.
BADGE_ALPHA = 28
#: Badge colour tokens, and the backgrounds a list row can have under them (plain, hover, selected).
BADGE_TOKENS = ("badge_chat", "badge_agent", "badge_run", "badge_missing", "badge_error", "interrupted", "synthetic")
BADGE_BACKGROUNDS = ("surface", "surface_alt", "highlight", "canvas", "card")
#: WCAG 2.x AA minimum contrast for normal-size text.
AA_TEXT = 4.5


def _relative_luminance(color: QColor) -> float:
    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF()) + 0.0722 * channel(color.blueF())


def contrast_ratio(foreground: QColor | str, background: QColor | str) -> float:
    """The WCAG 2.x contrast ratio of two opaque colours, from 1.0 to 21.0."""
    lighter, darker = sorted((_relative_luminance(QColor(foreground)), _relative_luminance(QColor(background))), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def blend(color: QColor | str, alpha: int, background: QColor | str) -> QColor:
    """``color`` at ``alpha`` (0-255) painted over the opaque ``background``."""
    top, bottom, weight = QColor(color), QColor(background), alpha / 255
    return QColor.fromRgbF(*(t * weight + b * (1 - weight) for t, b in ((top.redF(), bottom.redF()), (top.greenF(), bottom.greenF()), (top.blueF(), bottom.blueF()))))


def badge_pairs(name: ThemeName, alpha: int = BADGE_ALPHA) -> list[tuple[str, str, float]]:
    """Every (badge token, background token, contrast) a theme paints: text on its own tint over the row."""
    tokens = TOKENS[name]
    return [
        (badge, ground, contrast_ratio(tokens[badge], blend(tokens[badge], alpha, tokens[ground])))
        for badge in BADGE_TOKENS
        for ground in BADGE_BACKGROUNDS
    ]


@lru_cache(maxsize=1)
def _template() -> Template:
    # A bundled resource read once (the first time a theme is applied, before the window shows).
    text = (resources.files("crewagent.resources") / "styles" / "app.qss").read_text(encoding="utf-8")
    return Template(text)


@lru_cache(maxsize=1)
def _styles_dir() -> str:
    # Icons the stylesheet refers to (chevrons, close buttons) live beside it.
    return Path(str(resources.files("crewagent.resources") / "styles")).as_posix()


def stylesheet(name: ThemeName) -> str:
    """The application stylesheet of a theme; an unknown token is a bug and raises ``KeyError``."""
    return _template().substitute(TOKENS[name], styles_dir=_styles_dir(), theme=name)


def palette(name: ThemeName) -> QPalette:
    """A Fusion palette in the theme's colours (item delegates paint with it)."""
    tokens = TOKENS[name]
    result = QPalette()
    roles = {
        QPalette.ColorRole.Window: "window",
        QPalette.ColorRole.WindowText: "text",
        QPalette.ColorRole.Base: "surface",
        QPalette.ColorRole.AlternateBase: "surface_alt",
        QPalette.ColorRole.Text: "text",
        QPalette.ColorRole.PlaceholderText: "text_muted",
        QPalette.ColorRole.Button: "surface",
        QPalette.ColorRole.ButtonText: "text",
        QPalette.ColorRole.BrightText: "accent_text",
        QPalette.ColorRole.Highlight: "highlight",
        QPalette.ColorRole.HighlightedText: "highlight_text",
        QPalette.ColorRole.ToolTipBase: "tooltip_bg",
        QPalette.ColorRole.ToolTipText: "tooltip_text",
        QPalette.ColorRole.Link: "link",
        QPalette.ColorRole.LinkVisited: "link",
        QPalette.ColorRole.Light: "surface_alt",
        QPalette.ColorRole.Midlight: "border",
        QPalette.ColorRole.Mid: "border_strong",
        QPalette.ColorRole.Dark: "text_faint",
        QPalette.ColorRole.Accent: "accent",
    }
    for role, token in roles.items():
        result.setColor(role, QColor(tokens[token]))
    for role in (QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText, QPalette.ColorRole.Text):
        result.setColor(QPalette.ColorGroup.Disabled, role, QColor(tokens["disabled_text"]))
    return result


def theme_of(colors: QPalette) -> ThemeName:
    """Which theme a palette belongs to (by its window colour; a foreign palette by its lightness).

    Widgets that paint themselves (the timeline delegate) ask this on a palette or style change,
    so they follow the theme the same way the stylesheet does, with no extra wiring.
    """
    window = colors.color(QPalette.ColorRole.Window)
    for name, tokens in TOKENS.items():
        if window == QColor(tokens["window"]):
            return name
    return "dark" if window.lightness() < 128 else "light"


def tokens_of(colors: QPalette) -> dict[str, str]:
    """The token table of the theme ``colors`` belongs to (see :func:`theme_of`)."""
    return TOKENS[theme_of(colors)]


def system_theme() -> ThemeName:
    """What the desktop prefers (Qt 6.5+ reports it); light when it does not say."""
    hints = QGuiApplication.styleHints()
    return "dark" if hints.colorScheme() == Qt.ColorScheme.Dark else "light"


class ThemeManager(QObject):
    """Applies the user's theme choice to the application, and follows the desktop for "system"."""

    #: ``"light"`` or ``"dark"``: the theme now in effect (emitted only on a real change).
    theme_applied = Signal(str)

    def __init__(self, app: QApplication, parent: QObject | None = None):
        super().__init__(parent)
        self._app = app
        self._choice: ThemeChoice = "system"
        self._applied: ThemeName | None = self._shown_by(app)
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._on_system_changed)

    @property
    def choice(self) -> ThemeChoice:
        return self._choice

    @property
    def applied(self) -> ThemeName | None:
        return self._applied

    @staticmethod
    def _shown_by(app: QApplication) -> ThemeName | None:
        """The theme ``app`` already shows (``setup_application`` applied it before the window
        existed), so that the first settings do not apply it again: setting the stylesheet once the
        window exists restyles every widget, about a second of CPU at each start of the app."""
        name = theme_of(app.palette())
        return name if app.styleSheet() == stylesheet(name) else None

    def set_choice(self, choice: str) -> None:
        """Apply ``system``, ``light`` or ``dark`` (anything else is treated as ``system``)."""
        self._choice = choice if choice in THEME_CHOICES else "system"
        self._apply(system_theme() if self._choice == "system" else self._choice)

    def _apply(self, name: ThemeName) -> None:
        if name == self._applied:
            return
        self._app.setPalette(palette(name))
        if self._app.styleSheet():
            # Replacing a style sheet by another restyles every widget about ten times over (7,000
            # style changes for the 712 widgets of the window with Settings open: 0.6-1 s of
            # GUI-thread CPU); with the old one dropped first, twice: the same pixels in a fifth
            # of the time. Nothing is painted in between (paints wait for the event loop).
            self._app.setStyleSheet("")
        self._app.setStyleSheet(stylesheet(name))
        self._applied = name
        log.debug("theme %s applied", name)
        self.theme_applied.emit(name)

    @Slot(Qt.ColorScheme)
    def _on_system_changed(self, _scheme: Qt.ColorScheme) -> None:
        if self._choice == "system":
            self._apply(system_theme())
