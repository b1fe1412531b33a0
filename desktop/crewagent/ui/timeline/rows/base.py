"""The shape every row painter has: facts read from the model, geometry measured once, then drawn."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from PySide6.QtCore import QModelIndex, QPersistentModelIndex

from crewagent.ui.timeline.canvas import Canvas, Fonts, Frame, TextSizer
from crewagent.ui.timeline.state import TimelineViewState

Index = QModelIndex | QPersistentModelIndex


class Geometry(Protocol):
    """A row's measured geometry: its height and, per kind, the rectangles it is drawn in."""

    @property
    def height(self) -> float: ...


@dataclass(frozen=True)
class RowContext:
    """What a row's facts depend on besides the model: view state and open ask-user forms."""

    state: TimelineViewState
    key: str
    #: The height of the ask-user form open on a row (None: no form open).
    editor_height: Callable[[str], int | None]


F = TypeVar("F")
G = TypeVar("G", bound=Geometry)


class RowPainter(ABC, Generic[F, G]):
    """One row kind. ``measure`` is the only place its size and sub-rectangles are computed:
    the delegate's estimate (text heights estimated), its exact layout and its painting all use it."""

    @abstractmethod
    def facts(self, index: Index, context: RowContext) -> F:
        """What the row shows, read from the model and the view state."""

    @abstractmethod
    def estimated(self, text: str, has_reasoning: bool) -> F:
        """The facts of a plain row of this kind from the model's MEASURE tuple alone (no other role read).

        Rows whose other facts differ from these defaults are always measured exactly (the
        model marks them ``special``), so the estimate never needs them.
        """

    @abstractmethod
    def measure(self, facts: F, frame: Frame, fonts: Fonts, sizer: TextSizer) -> G:
        """The row's geometry inside ``frame``."""

    @abstractmethod
    def draw(self, geometry: G, canvas: Canvas) -> None:
        """Paint the measured row (or, on a canvas without a painter, record its hit areas)."""
