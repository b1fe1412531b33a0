"""What the user changed in the Settings dialog, as nested ``{section: {key: value}}`` dicts.

The dialog sends only the edits (what differs from the settings its pages were loaded from), so
that Apply never overwrites what changed on disk and the pages did not show. When the settings
change on disk while the dialog is open, the edits are carried over onto the new settings.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any


def merge(into: dict[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge ``changes`` into ``into`` (in place) and return it."""
    for key, value in changes.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            merge(into[key], value)
        else:
            into[key] = copy.deepcopy(value)
    return into


def edits(values: Mapping[str, Any], base: Mapping[str, Any]) -> dict[str, Any]:
    """The leaves of ``values`` that differ from ``base`` (nested like ``values``)."""
    found: dict[str, Any] = {}
    for key, value in values.items():
        before = base.get(key)
        if isinstance(value, Mapping) and isinstance(before, Mapping):
            inner = edits(value, before)
            if inner:
                found[key] = inner
        elif value != before:
            found[key] = copy.deepcopy(value)
    return found


def shown(values: Mapping[str, Any], source: Mapping[str, Any]) -> dict[str, Any]:
    """The part of ``source`` at the keys of ``values`` (what a page shows of a settings dump)."""
    picked: dict[str, Any] = {}
    for key, value in values.items():
        inner = source.get(key)
        picked[key] = shown(value, inner) if isinstance(value, Mapping) and isinstance(inner, Mapping) else copy.deepcopy(inner)
    return picked


def rebase(changed: Mapping[str, Any], old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """Carry ``changed`` (edits against ``old``) over onto ``new``.

    A list is a set of entries (the always-allowed tools): what the user removed stays removed,
    what they added stays added, and what appeared on disk meanwhile is kept.
    """
    result: dict[str, Any] = {}
    for key, value in changed.items():
        before, after = old.get(key), new.get(key)
        if isinstance(value, Mapping):
            result[key] = rebase(value, before if isinstance(before, Mapping) else {}, after if isinstance(after, Mapping) else {})
        elif isinstance(value, list) and isinstance(before, list) and isinstance(after, list):
            removed = [item for item in before if item not in value]
            added = [item for item in value if item not in before and item not in after]
            result[key] = [item for item in after if item not in removed] + added
        else:
            result[key] = copy.deepcopy(value)
    return result
