"""Workflow packages (``.bmad`` format 1.1): check, install, list, load and remove them.

``PackageStore(data_root)`` is the entry point; a loaded ``InstalledPackage`` exposes its
workflows (each with its graph and step files) and its agents. See PACKAGE-FORMAT.md.
"""

from crewagent.core.packages.archive import MAX_ENTRIES, MAX_UNPACKED_BYTES
from crewagent.core.packages.builtin import builtin_package_ids, ensure_builtin_packages, example_package_id
from crewagent.core.packages.model import (
    GraphEdge,
    GraphNode,
    InstalledPackage,
    PackageDefinition,
    Workflow,
    WorkflowGraph,
    package_id,
)
from crewagent.core.packages.problems import PackageError, PackageNotFound, Problem
from crewagent.core.packages.store import PackageStore, shared_store

__all__ = [
    "MAX_ENTRIES",
    "MAX_UNPACKED_BYTES",
    "GraphEdge",
    "GraphNode",
    "InstalledPackage",
    "PackageDefinition",
    "PackageError",
    "PackageNotFound",
    "PackageStore",
    "shared_store",
    "Problem",
    "Workflow",
    "WorkflowGraph",
    "builtin_package_ids",
    "ensure_builtin_packages",
    "example_package_id",
    "package_id",
]
