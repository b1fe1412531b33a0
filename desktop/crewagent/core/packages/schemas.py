"""The app's JSON Schemas of format v1.1 (resources/schemas/bmad-v1.1) and errors as file + JSON pointer."""

from __future__ import annotations

import enum
import json
import threading
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from crewagent.core.packages.problems import Problem, pointer

if TYPE_CHECKING:  # jsonschema is imported when a schema is first used: other commands do not pay for it
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

SCHEMA_FOLDER = ("schemas", "bmad-v1.1")


class SchemaKind(enum.Enum):
    """One schema per kind of file in a package; the value is the schema's file name."""

    MANIFEST = "bmad.schema.json"
    GRAPH = "workflow-graph.schema.json"
    STEP = "step-frontmatter.schema.json"
    WORKFLOW = "workflow-frontmatter.schema.json"
    AGENTS = "agents.schema.json"


def schema_document(kind: SchemaKind) -> dict[str, Any]:
    """The schema as shipped (a fresh copy: callers may not change the cached one)."""
    return json.loads(json.dumps(_load(kind)))


@cache
def _load(kind: SchemaKind) -> dict[str, Any]:
    resource = files("crewagent.resources").joinpath(*SCHEMA_FOLDER, kind.value)
    document: dict[str, Any] = json.loads(resource.read_text(encoding="utf-8"))
    return document


@cache
def validator(kind: SchemaKind) -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    # The shipped schemas are checked against the metaschema by the tests
    # (test_package_schemas), not at every start: 0.1 CPU-s of the first package load.
    schema = _load(kind)
    return Draft202012Validator(_inline_refs(schema, schema.get("$defs", {})))


def _inline_refs(node: Any, defs: dict[str, Any]) -> Any:
    """The schema with each local ``{"$ref": "#/$defs/x"}`` replaced by ``x`` itself.

    The same schema (these have no recursive or sibling-bearing refs), but validating a 200-node
    graph no longer resolves 1,400 references one by one: it is 3x faster.
    """
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and len(node) == 1:
            return _inline_refs(defs[ref.removeprefix("#/$defs/")], defs)
        return {key: _inline_refs(value, defs) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline_refs(item, defs) for item in node]
    return node


#: The top-level keywords of a schema whose properties can be checked one at a time: an object
#: with independent properties, required names, and any other property allowed.
_SPLITTABLE = frozenset(
    {"$schema", "$id", "$comment", "$defs", "title", "description", "type", "required", "properties", "additionalProperties", "default"}
)
#: Remembered answers per property value, the least recently used dropped first (see
#: :func:`_valid_by_parts`); values whose repr is longer than this are checked every time.
_PART_CACHE_SIZE = 256
_PART_REPR_MAX = 4096
_part_answers: dict[tuple[SchemaKind, str, str], bool] = {}
_part_answers_lock = threading.Lock()


@cache
def _parts(kind: SchemaKind) -> tuple[tuple[str, ...], dict[str, Draft202012Validator]] | None:
    """The required names and one validator per property, when the schema is only that; else None."""
    from jsonschema import Draft202012Validator

    schema = validator(kind).schema
    if not isinstance(schema, dict) or set(schema) - _SPLITTABLE or schema.get("type") != "object":
        return None
    if schema.get("additionalProperties", True) is not True or not isinstance(schema.get("properties"), dict):
        return None
    properties: dict[str, Any] = schema["properties"]
    if any(marker in json.dumps(properties) for marker in ('"$ref"', '"$dynamicRef"', '"$anchor"', '"$id"')):
        return None  # a property that refers elsewhere is not self-contained
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        return None
    return tuple(required), {name: Draft202012Validator(sub) for name, sub in properties.items()}


def _valid_by_parts(kind: SchemaKind, instance: Any) -> bool | None:
    """Whether ``instance`` is valid, property by property (None: the schema is not made that way).

    A run's state is checked before every write of it, and a write changes two or three of its
    dozen properties: the answer for each property value is remembered (keyed by its repr, which
    tells a list from a tuple and 1 from True, as the validator does), so only what changed is
    checked again (0.3-0.8 ms a state write with the whole schema). For a schema of independent
    properties with any other property allowed this is the same answer as the whole schema's.
    """
    parts = _parts(kind)
    if parts is None or not isinstance(instance, dict):
        return None
    required, validators = parts
    if any(name not in instance for name in required):
        return False
    for name, value in instance.items():
        part = validators.get(name) if isinstance(name, str) else None
        if part is None:
            continue
        text = repr(value)
        if len(text) > _PART_REPR_MAX:
            if not part.is_valid(value):
                return False
            continue
        key = (kind, name, text)
        with _part_answers_lock:
            # Least recently used out first: a value every write keeps (the schema version, the
            # workflow type) stays remembered however many others came and went since its first check.
            known = _part_answers.pop(key, None)
            if known is not None:
                _part_answers[key] = known
        if known is None:
            known = part.is_valid(value)
            with _part_answers_lock:
                if len(_part_answers) >= _PART_CACHE_SIZE:
                    _part_answers.pop(next(iter(_part_answers)))
                _part_answers[key] = known
        if not known:
            return False
    return True


def check(kind: SchemaKind, instance: Any, file: str) -> list[Problem]:
    """Every schema violation of ``instance`` (the content of ``file``), pointer first, in document order."""
    if _valid_by_parts(kind, instance):
        return []  # valid: nothing to report (an invalid one is reported by the whole schema below)
    problems: list[Problem] = []
    for error in validator(kind).iter_errors(instance):
        problems.extend(_problems(error, file))
    return sorted(set(problems), key=lambda problem: (_pointer_key(problem.pointer), problem.message))


def _problems(error: ValidationError, file: str) -> list[Problem]:
    at = list(error.absolute_path)
    instance = error.instance
    # Point at the field itself, not at the object around it, where jsonschema reports the parent.
    if error.validator == "required" and isinstance(instance, dict):
        missing = [name for name in error.validator_value if name not in instance]
        named = next((name for name in missing if error.message.startswith(repr(name))), None)
        if named is not None:
            return [Problem(file, pointer(*at, named), f"the required property {named!r} is missing")]
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        known = set(error.schema.get("properties", {}))
        extras = [key for key in instance if key not in known]
        if extras:
            return [Problem(file, pointer(*at, key), f"the property {key!r} is not allowed here") for key in extras]
    return [Problem(file, pointer(*at), _message(error))]


def _message(error: ValidationError) -> str:
    if error.validator == "pattern":
        return f"{error.instance!r} does not match the pattern {_readable(error.validator_value)}"
    if error.validator == "oneOf":
        return f"{_short(error.instance)} is not a non-empty string nor a non-empty list of non-empty strings"
    return error.message


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _pointer_key(text: str) -> list[tuple[int, int | str]]:
    """Sort pointers in document order: numeric segments as numbers."""
    key: list[tuple[int, int | str]] = []
    for part in text.split("/")[1:]:
        key.append((0, int(part)) if part.isdigit() else (1, part))
    return key


def _readable(pattern: str) -> str:
    """The pattern as the Builder's schema spells it (``$`` for this file's portable end-of-text)."""
    return pattern.replace("(?![\\s\\S])", "$")
