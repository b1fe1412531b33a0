"""The Graph tab: the workflow laid out by the worker (grandalf), drawn in a QGraphicsView.

The scene is rebuilt only when the layout changes (another workflow); a progress update only
recolours the nodes. Ctrl+wheel and +/- zoom, a drag pans, a click on a node asks for its step file.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QKeyEvent, QMouseEvent, QPainter, QPainterPath, QPen, QPolygonF, QWheelEvent
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QWidget,
)

from crewagent.core.runs.layout import EdgePath, GraphLayout, NodeBox
from crewagent.core.runs.snapshot import StepView

#: Fill and border of a node by status (readable on the light and the dark theme).
STATUS_COLORS = {
    "completed": (QColor(46, 160, 67, 70), QColor(46, 160, 67)),
    "current": (QColor(47, 129, 247, 90), QColor(47, 129, 247)),
    "pending": (QColor(128, 128, 128, 30), QColor(128, 128, 128)),
}
ZOOM_STEP = 1.2
MIN_ZOOM, MAX_ZOOM = 0.1, 4.0
#: Pixels a press may move and still count as a click (more is a pan).
CLICK_SLOP = 4


class NodeItem(QGraphicsRectItem):
    """One node: a rounded box with its title and type; coloured by the step's status."""

    def __init__(self, box: NodeBox, step: StepView | None):
        super().__init__(0, 0, box.width, box.height)
        self.node_id = box.id
        self.status = ""
        self._step: StepView | None | bool = False  # False: never set
        self.setPos(box.x, box.y)
        self.setAcceptHoverEvents(True)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.title = QGraphicsSimpleTextItem(self)
        self.subtitle = QGraphicsSimpleTextItem(self)
        font = self.subtitle.font()
        font.setPointSizeF(max(6.0, font.pointSizeF() * 0.85))
        self.subtitle.setFont(font)
        self.set_step(step)

    def set_step(self, step: StepView | None) -> None:
        if step == self._step:
            return  # a progress update recolours only the nodes that changed
        self._step = step
        title = step.title if step is not None else self.node_id
        self.title.setText(_elide(title, 22))
        kind = step.type if step is not None else ""
        agent = (step.agent_name or step.agent_id) if step is not None else ""
        self.subtitle.setText(_elide(" · ".join(part for part in (kind, agent) if part), 28))
        self.setToolTip(f"{self.node_id}\n{step.description}" if step is not None and step.description else self.node_id)
        status = step.status if step is not None else "pending"
        if status != self.status:
            self.status = status
            fill, border = STATUS_COLORS.get(status, STATUS_COLORS["pending"])
            self.setBrush(QBrush(fill))
            self.setPen(QPen(border, 3.0 if status == "current" else 1.2))
        width = self.rect().width()
        for item, top in ((self.title, 7.0), (self.subtitle, 27.0)):
            item.setPos((width - item.boundingRect().width()) / 2, top)

    def paint(self, painter: QPainter, option: object, widget: QWidget | None = None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(self.pen())
        painter.setBrush(self.brush())
        painter.drawRoundedRect(self.rect(), 8, 8)


class EdgeItem(QGraphicsPathItem):
    """An edge: its polyline with an arrow head at the target and its label at the middle."""

    def __init__(self, edge: EdgePath, boxes: dict[str, NodeBox], color: QColor):
        super().__init__()
        self.edge = edge
        pen = QPen(color, 1.3)
        if not edge.is_default:
            pen.setStyle(Qt.PenStyle.DashLine)
        self.setPen(pen)
        self.setZValue(-1)
        path = QPainterPath()
        points = [QPointF(x, y) for x, y in edge.points]
        if not points:  # an edge of a node to itself: a loop on its right side
            box = boxes[edge.source]
            right, mid_y = box.x + box.width, box.y + box.height / 2
            points = [QPointF(right, mid_y - 10), QPointF(right + 28, mid_y - 10), QPointF(right + 28, mid_y + 10), QPointF(right, mid_y + 10)]
        path.moveTo(points[0])
        for point in points[1:]:
            path.lineTo(point)
        path.addPolygon(_arrow_head(points[-2], points[-1]))
        self.setPath(path)
        self.label = QGraphicsSimpleTextItem(edge.label, self)
        self.label.setBrush(QBrush(color))
        middle = points[len(points) // 2] if len(points) > 2 else QPointF((points[0].x() + points[-1].x()) / 2, (points[0].y() + points[-1].y()) / 2)
        self.label.setPos(middle.x() + 4, middle.y() - 8)


def _arrow_head(start: QPointF, end: QPointF, size: float = 8.0) -> QPolygonF:
    angle = math.atan2(end.y() - start.y(), end.x() - start.x())
    left = QPointF(end.x() - size * math.cos(angle - math.pi / 7), end.y() - size * math.sin(angle - math.pi / 7))
    right = QPointF(end.x() - size * math.cos(angle + math.pi / 7), end.y() - size * math.sin(angle + math.pi / 7))
    return QPolygonF([end, left, right, end])


def _elide(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class GraphView(QGraphicsView):
    """The workflow graph (see the module docstring)."""

    #: ``node_id``: the user clicked a node.
    node_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("runGraph")
        self.setScene(QGraphicsScene(self))
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self._layout: GraphLayout | None = None
        self._nodes: dict[str, NodeItem] = {}
        self._press: QPointF | None = None

    # -- content --------------------------------------------------------------------------------

    def show_graph(self, layout: GraphLayout | None, steps: tuple[StepView, ...]) -> None:
        """Draw ``layout`` (only when it changed) and colour its nodes from ``steps``."""
        if layout is not self._layout:
            self._build(layout)
        by_id = {step.node_id: step for step in steps}
        for node_id, item in self._nodes.items():
            item.set_step(by_id.get(node_id))

    def _build(self, layout: GraphLayout | None) -> None:
        scene = self.scene()
        scene.clear()
        self._nodes = {}
        self._layout = layout
        if layout is None:
            return
        color = self.palette().color(self.foregroundRole())
        boxes = {box.id: box for box in layout.nodes}
        for box in layout.nodes:
            item = NodeItem(box, None)
            item.title.setBrush(QBrush(color))
            item.subtitle.setBrush(QBrush(color))
            scene.addItem(item)
            self._nodes[box.id] = item
        for edge in layout.edges:
            scene.addItem(EdgeItem(edge, boxes, color))
        scene.setSceneRect(QRectF(-20, -20, layout.width + 80, layout.height + 40))

    def node_item(self, node_id: str) -> NodeItem | None:
        return self._nodes.get(node_id)

    def current_node(self) -> str:
        """The highlighted node ("" when none is current)."""
        return next((node_id for node_id, item in self._nodes.items() if item.status == "current"), "")

    def center_on_node(self, node_id: str) -> None:
        item = self._nodes.get(node_id)
        if item is not None:
            self.ensureVisible(item, 40, 40)

    # -- zoom and pan ---------------------------------------------------------------------------

    @property
    def zoom(self) -> float:
        return self.transform().m11()

    def zoom_by(self, factor: float) -> None:
        target = min(MAX_ZOOM, max(MIN_ZOOM, self.zoom * factor))
        if target != self.zoom:
            self.scale(target / self.zoom, target / self.zoom)

    def wheelEvent(self, event: QWheelEvent) -> None:
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.zoom_by(ZOOM_STEP if event.angleDelta().y() > 0 else 1 / ZOOM_STEP)
            event.accept()
            return
        super().wheelEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_by(ZOOM_STEP)
        elif event.key() == Qt.Key.Key_Minus:
            self.zoom_by(1 / ZOOM_STEP)
        elif event.key() == Qt.Key.Key_0:
            self.resetTransform()
        else:
            super().keyPressEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._press = event.position()
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        press, self._press = self._press, None
        super().mouseReleaseEvent(event)
        event.accept()  # the view handled it (a pan, or a click below)
        if press is None or event.button() != Qt.MouseButton.LeftButton:
            return
        if (event.position() - press).manhattanLength() > CLICK_SLOP:
            return  # a pan
        node = self._node_at(event.position().toPoint())
        if node is not None:
            self.node_clicked.emit(node.node_id)

    def _node_at(self, point: object) -> NodeItem | None:
        item: QGraphicsItem | None = self.itemAt(point)  # type: ignore[call-overload]
        while item is not None and not isinstance(item, NodeItem):
            item = item.parentItem()
        return item
