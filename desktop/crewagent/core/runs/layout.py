"""A workflow graph laid out in layers (grandalf's Sugiyama layout), as plain coordinates for any canvas.

Blocking and CPU-bound (about 0.1 s for 200 nodes): call it off the GUI thread. Nodes get a fixed
box size (the canvas elides what does not fit); cycles (a "revise" edge back to an earlier step)
are broken by grandalf, and every edge path still runs from its source to its target. An edge of
a node to itself has no path (the canvas draws it as a loop).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from grandalf.graphs import Edge, Graph, Vertex
from grandalf.layouts import SugiyamaLayout

NODE_WIDTH = 168.0
NODE_HEIGHT = 48.0
X_SPACE = 36.0
Y_SPACE = 56.0
#: Gap between the laid-out parts of a graph that is not connected.
COMPONENT_GAP = 60.0


@dataclass(frozen=True, slots=True)
class NodeBox:
    """A node's box: ``x``, ``y`` its top-left corner."""

    id: str
    x: float
    y: float
    width: float = NODE_WIDTH
    height: float = NODE_HEIGHT

    @property
    def center(self) -> tuple[float, float]:
        return self.x + self.width / 2, self.y + self.height / 2


@dataclass(frozen=True, slots=True)
class EdgePath:
    """An edge's polyline, from the border of its source box to the border of its target box."""

    source: str
    target: str
    label: str
    points: tuple[tuple[float, float], ...]
    is_default: bool = False


@dataclass(frozen=True, slots=True)
class GraphLayout:
    nodes: tuple[NodeBox, ...]
    edges: tuple[EdgePath, ...]
    width: float
    height: float

    def node(self, node_id: str) -> NodeBox | None:
        return next((box for box in self.nodes if box.id == node_id), None)


class _View:
    """What grandalf needs of a vertex (its size; it sets ``xy``) or of an edge (``setpath``)."""

    def __init__(self, w: float = NODE_WIDTH, h: float = NODE_HEIGHT):
        self.w, self.h = w, h
        self.xy: tuple[float, float] = (0.0, 0.0)
        self.points: list[tuple[float, float]] = []

    def setpath(self, points: list[tuple[float, float]]) -> None:
        self.points = [(float(x), float(y)) for x, y in points]


def layout_graph(
    node_ids: Sequence[str],
    edges: Sequence[tuple[str, str, str, bool]],
    *,
    roots: Sequence[str] = (),
) -> GraphLayout:
    """Lay out ``node_ids`` with ``edges`` ``(source, target, label, is_default)``; ``roots`` go on top.

    Edges naming an unknown node are left out. Each connected part is laid out on its own and the
    parts are placed side by side, the one holding the first root first.
    """
    vertices = {node_id: Vertex(node_id) for node_id in dict.fromkeys(node_ids)}
    for vertex in vertices.values():
        vertex.view = _View()
    kept: list[tuple[Edge, tuple[str, str, str, bool]]] = []
    for spec in edges:
        source, target = spec[0], spec[1]
        if source in vertices and target in vertices and source != target:
            edge = Edge(vertices[source], vertices[target])
            edge.view = _View()
            kept.append((edge, spec))
    graph = Graph(list(vertices.values()), [edge for edge, _spec in kept])
    root_set = [vertices[r] for r in roots if r in vertices]
    boxes: dict[str, NodeBox] = {}
    offset = 0.0
    height = 0.0
    components = sorted(graph.C, key=lambda c: 0 if any(r in c.sV for r in root_set[:1]) else 1)
    for component in components:
        sugiyama = SugiyamaLayout(component)
        sugiyama.xspace, sugiyama.yspace = X_SPACE, Y_SPACE
        starts = [r for r in root_set if r in component.sV]
        starts += [v for v in component.sV if not v.e_in() and v not in starts]
        inverted = _feedback_edges(component, [*starts, *component.sV])
        sugiyama.init_all(roots=_roots(component, inverted), inverted_edges=inverted)
        sugiyama.draw()
        left = min(v.view.xy[0] - v.view.w / 2 for v in component.sV)
        top = min(v.view.xy[1] - v.view.h / 2 for v in component.sV)
        right = offset
        for v in component.sV:
            x = v.view.xy[0] - v.view.w / 2 - left + offset
            y = v.view.xy[1] - v.view.h / 2 - top
            boxes[v.data] = NodeBox(v.data, x, y)
            right = max(right, x + v.view.w)
            height = max(height, y + v.view.h)
        for edge in component.sE:
            view = edge.view
            view.points = [(x - left + offset, y - top) for x, y in view.points]
        offset = right + COMPONENT_GAP
    paths = []
    lanes: dict[str, int] = {}
    for edge, (source, target, label, is_default) in kept:
        a, b = boxes[source], boxes[target]
        if b.y < a.y:  # an edge back up (a "revise"): around the right side, so it never hides a forward edge
            lane = lanes[source] = lanes.get(source, 0) + 1
            points = _around(a, b, lane)
        else:
            points = _oriented(edge.view.points, a, b)
        paths.append(EdgePath(source, target, label, points, is_default))
    for source, target, label, is_default in edges:  # a node's edge to itself: drawn as a loop
        if source == target and source in vertices:
            paths.append(EdgePath(source, target, label, (), is_default))
    ordered = tuple(boxes[node_id] for node_id in vertices)
    return GraphLayout(ordered, tuple(paths), max(0.0, offset - COMPONENT_GAP), height)


def _feedback_edges(component: Any, starts: Sequence[Vertex]) -> list[Edge]:
    """The edges that close a cycle, found depth-first from ``starts`` in order (iterative: a long
    chain must not hit the recursion limit). Reversing them leaves a DAG that grandalf can rank."""
    state: dict[Vertex, int] = {}  # 1: on the path, 2: done
    inverted: list[Edge] = []
    for start in starts:
        if start in state:
            continue
        state[start] = 1
        stack = [(start, iter(start.e_out()))]
        while stack:
            vertex, out = stack[-1]
            edge = next(out, None)
            if edge is None:
                state[vertex] = 2
                stack.pop()
                continue
            target = edge.v[1]
            seen = state.get(target)
            if seen == 1:
                inverted.append(edge)
            elif seen is None:
                state[target] = 1
                stack.append((target, iter(target.e_out())))
    return inverted


def _roots(component: Any, inverted: list[Edge]) -> list[Vertex]:
    """The vertices with no incoming edge once ``inverted`` are reversed (layer 0)."""
    flipped = set(inverted)
    has_in = set()
    for edge in component.sE:
        has_in.add(edge.v[0] if edge in flipped else edge.v[1])
    return [v for v in component.sV if v not in has_in]


def _oriented(points: list[tuple[float, float]], source: NodeBox, target: NodeBox) -> tuple[tuple[float, float], ...]:
    """The path from source to target (grandalf reverses the edges it inverted to break cycles),
    clipped to the boxes' borders so that an arrow head shows at the target."""
    if not points:
        points = [source.center, target.center]
    if _distance(points[0], source.center) > _distance(points[-1], source.center):
        points = points[::-1]
    if len(points) >= 2:
        points = [_clip(points[1], points[0], source), *points[1:-1], _clip(points[-2], points[-1], target)]
    return tuple(points)


def _around(source: NodeBox, target: NodeBox, lane: int) -> tuple[tuple[float, float], ...]:
    """From the source's right side out, up, and into the target's right side (``lane``: 1, 2... per source)."""
    out = max(source.x + source.width, target.x + target.width) + 18.0 * lane
    start_y, end_y = source.y + source.height / 2, target.y + target.height / 2
    return ((source.x + source.width, start_y), (out, start_y), (out, end_y), (target.x + target.width, end_y))


def _distance(a: tuple[float, float], b: tuple[float, float]) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


def _clip(outside: tuple[float, float], inside: tuple[float, float], box: NodeBox) -> tuple[float, float]:
    """Where the segment from ``outside`` to the box's center ``inside`` meets the box's border."""
    cx, cy = box.center
    dx, dy = outside[0] - cx, outside[1] - cy
    if dx == 0 and dy == 0:
        return inside
    scale = min(
        (box.width / 2) / abs(dx) if dx else math.inf,
        (box.height / 2) / abs(dy) if dy else math.inf,
    )
    if scale >= 1:  # the other end is inside the box: keep the point
        return inside
    return cx + dx * scale, cy + dy * scale
