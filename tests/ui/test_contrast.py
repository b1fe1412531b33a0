"""Issue 18 item 17: badges and close icons are readable in both themes (WCAG AA)."""

from __future__ import annotations

import re

import pytest
from PySide6.QtGui import QColor

from crewagent.ui import theme
from crewagent.ui.delegates import badge_color
from crewagent.ui.theme import AA_TEXT, BADGE_ALPHA, BADGE_BACKGROUNDS, TOKENS, badge_pairs, blend, contrast_ratio
from crewagent.ui.timeline.metrics import METRICS


def test_contrast_ratio_matches_the_wcag_reference_values() -> None:
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast_ratio("#ffffff", "#ffffff") == pytest.approx(1.0)
    assert contrast_ratio("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
    assert contrast_ratio("#ffffff", "#777777") == contrast_ratio("#777777", "#ffffff")
    assert blend("#000000", 255, "#ffffff").name() == "#000000"
    assert blend("#000000", 0, "#ffffff").name() == "#ffffff"


@pytest.mark.parametrize("name", ["light", "dark"])
@pytest.mark.parametrize("alpha", [BADGE_ALPHA, METRICS.controls.pill_alpha])
def test_every_badge_colour_pair_meets_aa(name: theme.ThemeName, alpha: int) -> None:
    weak = [(badge, ground, round(ratio, 2)) for badge, ground, ratio in badge_pairs(name, alpha) if ratio < AA_TEXT]
    assert not weak


@pytest.mark.parametrize("name", ["light", "dark"])
@pytest.mark.parametrize("kind", ["chat", "agent", "run", "missing"])
def test_the_list_delegate_paints_its_badges_in_readable_colours(qapp: object, name: theme.ThemeName, kind: str) -> None:
    colors = theme.palette(name)
    color = badge_color(kind, colors)
    for ground in BADGE_BACKGROUNDS:
        background = blend(color, BADGE_ALPHA, TOKENS[name][ground])
        assert contrast_ratio(color, background) >= AA_TEXT, (kind, ground)


@pytest.mark.parametrize("name", ["light", "dark"])
def test_the_tab_close_icon_is_readable(name: theme.ThemeName) -> None:
    sheet = theme.stylesheet(name)
    match = re.search(r"QTabBar::close-button \{ image: url\(([^)]+)\)", sheet)
    assert match is not None
    with open(match.group(1), encoding="utf-8") as icon:
        stroke = re.search(r'stroke="(#[0-9a-fA-F]{6})"', icon.read())
    assert stroke is not None
    for ground in ("surface", "window", "surface_alt", "pressed"):
        assert contrast_ratio(QColor(stroke.group(1)), TOKENS[name][ground]) >= AA_TEXT, ground
