"""The characters UTF-8 can encode, for hypothesis, without a pass over every code point.

``st.text()``, ``st.characters()`` and ``st.from_regex()`` draw from ``characters(codec="utf-8")``
by default. Hypothesis takes the surrogates out by category, then still intersects the result with
``intervals_from_codec("utf-8")``, which encodes and decodes each of the 1,114,112 code points
(about 2 CPU-s) unless its cache file (``.hypothesis/unicode_data/.../codec-v2-utf-8.json.gz``)
exists. A clean clone (``.ci/run``) has no ``.hypothesis`` folder, so every xdist worker paid it at
its first text strategy. UTF-8 encodes every code point but the surrogates (U+D800..U+DFFF), and
decodes each back to itself: the answer is two intervals. ``install()`` answers "utf-8" with them
and leaves any other codec to hypothesis; tests/test_hypothesis_utf8.py checks that the strategies
draw from the same characters as hypothesis's own answer.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

SURROGATES = (0xD800, 0xDFFF)
MAX_CODE_POINT = 0x10FFFF


def utf8_intervals() -> tuple[tuple[int, int], ...]:
    """The code points UTF-8 encodes (and decodes back to themselves): all but the surrogates."""
    return ((0, SURROGATES[0] - 1), (SURROGATES[1] + 1, MAX_CODE_POINT))


def install() -> None:
    """Answer ``intervals_from_codec("utf-8")`` without the pass; other codecs go to hypothesis."""
    from hypothesis.internal import charmap
    from hypothesis.internal.intervalsets import IntervalSet

    original: Callable[[str], Any] | None = getattr(charmap, "intervals_from_codec", None)
    if original is None or getattr(original, "_utf8_shortcut", False):
        return  # another hypothesis (nothing to replace), or installed already

    encodable = IntervalSet(utf8_intervals())
    none = IntervalSet(())

    @functools.wraps(original)
    def intervals_from_codec(codec_name: str) -> Any:
        return (encodable, none) if codec_name == "utf-8" else original(codec_name)

    intervals_from_codec._utf8_shortcut = True  # type: ignore[attr-defined]
    charmap.intervals_from_codec = intervals_from_codec  # type: ignore[assignment]
