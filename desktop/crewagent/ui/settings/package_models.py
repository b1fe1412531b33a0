"""Item models of the Packages page: a package's validation problems, and the installed packages as a tree."""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from pathlib import Path
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QCoreApplication, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel

from crewagent.core.packages import PackageError, Problem
from crewagent.ui.core_texts import translate_core
from crewagent.worker.values import PackagesListing

_Index = QModelIndex | QPersistentModelIndex


class ProblemsModel(QAbstractTableModel):
    """One row per problem: the file, the field (a JSON pointer) and what is wrong."""

    FILE, FIELD, MESSAGE = range(3)

    def __init__(self, parent: Any = None):
        super().__init__(parent)
        self._problems: tuple[Problem, ...] = ()

    def set_problems(self, problems: Sequence[Problem]) -> None:
        self.beginResetModel()
        self._problems = tuple(problems)
        self.endResetModel()

    def problems(self) -> tuple[Problem, ...]:
        return self._problems

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self._problems)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else 3

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._problems):
            return None
        problem = self._problems[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            if index.column() == self.FILE:
                return problem.file
            if index.column() == self.FIELD:
                return problem.pointer or QCoreApplication.translate("PackageModels", "(the whole file)")
            return translate_core(problem.message)
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or role != Qt.ItemDataRole.DisplayRole or not 0 <= section < 3:
            return None
        return (QCoreApplication.translate("PackageModels", "File"), QCoreApplication.translate("PackageModels", "Field"), QCoreApplication.translate("PackageModels", "Problem"))[section]

    def text(self, rows: Sequence[int] | None = None) -> str:
        """The problems of ``rows`` (all when None) as ``file#/pointer: message`` lines, for the clipboard."""
        chosen = range(len(self._problems)) if rows is None else sorted(set(rows))
        return "\n".join(str(self._problems[row]) for row in chosen if 0 <= row < len(self._problems))


class PackageRole(IntEnum):
    # The package id (the folder name) on every row of a package, its children included.
    PACKAGE_ID = Qt.ItemDataRole.UserRole + 1
    # ``package``, ``broken``, ``workflow``, ``agent`` or ``problem``.
    KIND = Qt.ItemDataRole.UserRole + 2


class PackagesModel(QStandardItemModel):
    """Installed packages (name and version) with their workflows and agents; the broken ones with their problems.

    Two columns: the name, and a detail (the package id, a description, an agent's title, a problem).
    Replaced as a whole on each listing: it changes only when a package is installed or removed.
    """

    def __init__(self, parent: Any = None):
        super().__init__(parent)
        self._listing = PackagesListing(())
        self.set_listing(self._listing)

    def set_listing(self, listing: PackagesListing) -> None:
        self._listing = listing
        self.removeRows(0, self.rowCount())  # not clear(): the view's column settings stay
        self.setHorizontalHeaderLabels([QCoreApplication.translate("PackageModels", "Package"), QCoreApplication.translate("PackageModels", "Details")])
        for package in listing.packages:
            parent = self._row(self.invisibleRootItem(), package.id, "package", f"{package.name} {package.version}", package.id)
            for workflow in package.workflows:
                label = QCoreApplication.translate("PackageModels", "Workflow: {name}").format(name=workflow.display_name or workflow.id)
                self._row(parent, package.id, "workflow", label, workflow.description or workflow.id)
            for agent in package.agents:
                label = QCoreApplication.translate("PackageModels", "Agent: {name}").format(name=agent.metadata.name)
                self._row(parent, package.id, "agent", label, agent.metadata.title)
        for error in listing.broken:
            package_id = broken_package_id(error)
            label = QCoreApplication.translate("PackageModels", "{name} (cannot be loaded)").format(name=package_id)
            detail = QCoreApplication.translate("PackageModels", "{count} problem(s)").format(count=len(error.problems))
            parent = self._row(self.invisibleRootItem(), package_id, "broken", label, detail)
            for problem in error.problems:
                where = f"{problem.file}#{problem.pointer}" if problem.pointer else problem.file
                self._row(parent, package_id, "problem", where, translate_core(problem.message))

    def listing(self) -> PackagesListing:
        return self._listing

    def package_row(self, package_id: str) -> QModelIndex:
        """The top-level index of ``package_id`` (invalid when it is not listed)."""
        for row in range(self.rowCount()):
            index = self.index(row, 0)
            if index.data(PackageRole.PACKAGE_ID) == package_id:
                return index
        return QModelIndex()

    @staticmethod
    def _row(parent: QStandardItem, package_id: str, kind: str, label: str, detail: str) -> QStandardItem:
        first, second = QStandardItem(label), QStandardItem(detail)
        for item in (first, second):
            item.setEditable(False)
            item.setToolTip(item.text())
            item.setData(package_id, PackageRole.PACKAGE_ID)
            item.setData(kind, PackageRole.KIND)
        parent.appendRow([first, second])
        return first


def broken_package_id(error: PackageError) -> str:
    """The id (folder name) of an installed package that does not load: its error's ``source`` names the folder."""
    return Path(error.source).name if error.source else "?"
