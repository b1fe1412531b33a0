"""What the Packages settings page asks of the worker: list, import and remove workflow packages.

Plain Python used by the Worker; imports and the scan for runs that use a package run in its
background pool (they read whole packages, or every project's run index). One PackageStore per
data folder (``core.turns.package_store``), so that what an import caches is what a turn loads.
"""

from __future__ import annotations

import logging
from pathlib import Path

from crewagent.core.errors import CrewAgentError
from crewagent.core.packages import PackageError, ensure_builtin_packages
from crewagent.core.runs.usage import runs_using
from crewagent.core.turns import package_store
from crewagent.worker.values import PackageImport, PackageRemoval, PackageRunUse, PackagesListing

log = logging.getLogger(__name__)


class PackageOps:
    """The installed packages of one data folder, as the UI sees them."""

    def __init__(self, data_dir: Path):
        self._data_dir = data_dir

    def listing(self) -> PackagesListing:
        """The installed packages, the built-in one installed on first use, the broken ones with their problems."""
        try:
            ensure_builtin_packages(self._data_dir)
        except (PackageError, OSError) as exc:  # the installed packages are still listed
            log.warning("the built-in packages could not be installed: %s", exc)
        packages, broken = package_store(self._data_dir).scan()
        return PackagesListing(tuple(packages), tuple(broken))

    def import_package(self, path: str) -> PackageImport:
        """Install a ``.bmad`` zip or a package folder; every problem is reported, nothing raised for bad input."""
        try:
            package = package_store(self._data_dir).import_package(path)
        except PackageError as exc:
            return PackageImport(path, problems=exc.problems)
        except CrewAgentError as exc:  # the disk, or another process holding the lock
            return PackageImport(path, message=str(exc))
        return PackageImport(path, package)

    def remove(self, package_id: str, *, confirmed: bool) -> PackageRemoval:
        """Remove ``package_id``, unless runs use it and ``confirmed`` is False: then name those runs."""
        if not confirmed:
            uses = tuple(
                PackageRunUse(use.project_name, use.run.runId, use.run.workflowId, use.run.phase)
                for use in runs_using(self._data_dir, package_id)
            )
            if uses:
                return PackageRemoval(package_id, removed=False, uses=uses)
        try:
            package_store(self._data_dir).remove(package_id)
        except CrewAgentError as exc:  # not installed any more, the disk, the lock
            return PackageRemoval(package_id, removed=False, message=str(exc))
        return PackageRemoval(package_id, removed=True)
