"""``crewagent packages import|list|remove``: workflow packages from the command line (no Qt here)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from crewagent.cli_output import listing_done

if TYPE_CHECKING:
    from crewagent.core.packages import InstalledPackage, PackageStore

# crewagent.core.packages (and jsonschema) are imported by the handlers, not here: building the
# parser must not cost every other command 0.1 s of start-up.

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_subcommand(subparsers: Any, common: argparse.ArgumentParser) -> None:
    packages = subparsers.add_parser("packages", parents=[common], help="install, list and remove workflow packages")
    commands = packages.add_subparsers(dest="packages_command", required=True, parser_class=type(packages))
    imp = commands.add_parser("import", parents=[common], help="install a .bmad zip or a package folder")
    imp.add_argument("path", metavar="FILE|DIR", help="a .bmad (zip) file or a folder holding bmad.json")
    imp.set_defaults(handler=cmd_import)
    lst = commands.add_parser("list", parents=[common], help="installed packages with their workflows and agents")
    lst.set_defaults(handler=cmd_list)
    rm = commands.add_parser("remove", parents=[common], help="uninstall a package")
    rm.add_argument("package_id", metavar="ID", help="a package id, as `crewagent packages list` shows it")
    rm.set_defaults(handler=cmd_remove)


def _store(args: argparse.Namespace) -> PackageStore:
    from crewagent.core.packages import PackageStore, ensure_builtin_packages

    data_dir = getattr(args, "data_dir", None)
    ensure_builtin_packages(data_dir)  # the built-in example is there on first use of a data folder
    return PackageStore(data_dir)


def _json(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "json", False))


def cmd_import(args: argparse.Namespace) -> int:
    from crewagent.core.packages import PackageError

    store = _store(args)
    try:
        package = store.import_package(args.path)
    except PackageError as exc:
        if _json(args):
            print(json.dumps({"ok": False, "errors": [problem.as_json() for problem in exc.problems]}, ensure_ascii=False))
        print(f"crewagent: {args.path}: not installed, {len(exc.problems)} problem(s):", file=sys.stderr)
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return EXIT_USAGE
    if _json(args):
        print(json.dumps({"ok": True, **describe(package)}, ensure_ascii=False))
    else:
        print(package.id)
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    packages, broken = _store(args).scan()
    for error in broken:
        print(f"crewagent: warning: {error}", file=sys.stderr)
    if listing_done(_json(args), [describe(package) for package in packages], "No packages installed."):
        return EXIT_OK
    for package in packages:
        print(f"{package.id}  {package.name} {package.version}")
        for workflow in package.workflows:
            print(f"  workflow {workflow.id}: {workflow.display_name} ({len(workflow.graph.nodes)} nodes)")
        for agent in package.agents:
            print(f"  agent    {agent.id}: {agent.metadata.name}, {agent.metadata.title}")
    return EXIT_OK


def cmd_remove(args: argparse.Namespace) -> int:
    from crewagent.core.packages import PackageNotFound

    try:
        _store(args).remove(args.package_id)
    except PackageNotFound as exc:
        print(f"crewagent: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if _json(args):
        print(json.dumps({"ok": True, "removed": args.package_id}))
    else:
        print(f"Removed {args.package_id}.")
    return EXIT_OK


def describe(package: InstalledPackage) -> dict[str, Any]:
    """A package as ``packages list --json`` prints it."""
    definition = package.definition
    return {
        "packageId": package.id,
        "name": package.name,
        "version": package.version,
        "description": definition.description,
        "path": str(package.root),
        "defaultWorkflowId": definition.default_workflow_id,
        "workflows": [
            {
                "id": workflow.id,
                "displayName": workflow.display_name,
                "workflow": workflow.workflow_file,
                "graph": workflow.graph_file,
                "entryNodeId": workflow.graph.entry_node_id,
                "nodes": len(workflow.graph.nodes),
            }
            for workflow in package.workflows
        ],
        "agents": [
            {"id": agent.id, "name": agent.metadata.name, "title": agent.metadata.title, "icon": agent.metadata.icon}
            for agent in package.agents
        ],
    }
