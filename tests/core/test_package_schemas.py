"""The app's JSON Schemas of format 1.1 accept exactly what the Builder's schemas accept.

The Builder validates in JavaScript (ECMA-262 regular expressions: ``$`` is the end of the text,
``\\d`` is an ASCII digit). Python's ``re`` differs on both, so the app's copies spell their
patterns portably. The oracle here is the Builder's own schema files (a copy in
tests/core/golden/bmad-spec-v1.1, checked against ../shared when it is there) read with
ECMA-262 pattern semantics; the app's schemas are read with the plain validator the app uses.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError

from crewagent.core.packages.schemas import SchemaKind, schema_document, validator
from tests.examples import examples
from tests.strategies import keyed

GOLDEN = Path(__file__).parent / "golden" / "bmad-spec-v1.1"
#: The Builder's files as the project keeps them, beside the checkout (or beside a parent folder of it).
SHARED = next(
    (
        folder / "shared" / "reference" / "bmad-spec-v1.1"
        for folder in Path(__file__).resolve().parents[2:5]
        if (folder / "shared" / "reference" / "bmad-spec-v1.1").is_dir()
    ),
    Path("/nonexistent"),
)
KINDS = list(SchemaKind)


def _ecma(pattern: str) -> re.Pattern[str]:
    # ECMA-262 without flags: '$' only at the very end, '\d' only 0-9 (re.ASCII).
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern, re.ASCII)


def _ecma_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _ecma(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


EcmaValidator = validators.extend(Draft202012Validator, {"pattern": _ecma_pattern})


@cache
def _reference(kind: SchemaKind) -> str:
    return (GOLDEN / kind.value).read_text("utf-8")


def reference(kind: SchemaKind) -> dict[str, Any]:
    return json.loads(_reference(kind))  # type: ignore[no-any-return]


@cache
def _builder(kind: SchemaKind) -> Any:
    return EcmaValidator(reference(kind))


def builder_accepts(kind: SchemaKind, instance: Any) -> bool:
    return bool(_builder(kind).is_valid(instance))


def app_accepts(kind: SchemaKind, instance: Any) -> bool:
    return validator(kind).is_valid(instance)


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/reference is not beside this checkout")
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.value)
def test_the_golden_copy_is_the_builders_file(kind: SchemaKind) -> None:
    assert json.loads((SHARED / kind.value).read_text("utf-8")) == reference(kind)


def _strip(document: Any) -> Any:
    """The schema without what the app's copy may change: $id, $comment, and the spelling of patterns."""
    if isinstance(document, dict):
        out = {}
        for key, value in document.items():
            if key in ("$id", "$comment"):
                continue
            out[key] = "<pattern>" if key == "pattern" else _strip(value)
        return out
    if isinstance(document, list):
        return [_strip(item) for item in document]
    return document


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.value)
def test_the_app_schema_differs_from_the_builders_only_in_pattern_spelling(kind: SchemaKind) -> None:
    Draft202012Validator.check_schema(schema_document(kind))
    assert _strip(schema_document(kind)) == _strip(reference(kind))


# -- table: hand-picked instances, the answer both must give ----------------------------------

_PERSONA = {"role": "r", "identity": "i", "communication_style": "c", "principles": ["p"]}
_AGENT = {"id": "analyst", "metadata": {"name": "n", "title": "t", "icon": "i"}, "persona": _PERSONA}
_MANIFEST = {"schemaVersion": "1.1", "name": "n", "version": "1.0.0", "entry": {"workflow": "w", "graph": "g", "agents": "a"}}
_GRAPH = {"schemaVersion": "1.1", "entryNodeId": "s", "nodes": [{"id": "s", "type": "step", "file": "f"}], "edges": []}
_STEP = {"schemaVersion": "1.1", "nodeId": "s", "type": "step"}
_STATE = {"schemaVersion": "1.1", "workflowType": "w", "currentNodeId": "", "stepsCompleted": []}


def _with(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    copy = json.loads(json.dumps(base))
    for key, value in changes.items():
        if value is _DROP:
            copy.pop(key, None)
        else:
            copy[key] = value
    return copy


_DROP = object()

TABLE: list[tuple[SchemaKind, Any, bool]] = [
    (SchemaKind.MANIFEST, _MANIFEST, True),
    (SchemaKind.MANIFEST, _with(_MANIFEST, schemaVersion="1.1.3"), True),
    (SchemaKind.MANIFEST, _with(_MANIFEST, schemaVersion="1.1\n"), False),  # Python's '$' would accept it
    (SchemaKind.MANIFEST, _with(_MANIFEST, schemaVersion="1.1.\u0663"), False),  # an Arabic-Indic digit
    (SchemaKind.MANIFEST, _with(_MANIFEST, schemaVersion="1.2"), False),
    (SchemaKind.MANIFEST, _with(_MANIFEST, schemaVersion=1.1), False),
    (SchemaKind.MANIFEST, _with(_MANIFEST, version="1.0.0-rc.1+build.5"), True),
    (SchemaKind.MANIFEST, _with(_MANIFEST, version="1.0.0\n"), False),
    (SchemaKind.MANIFEST, _with(_MANIFEST, version="\u0661.0.0"), False),
    (SchemaKind.MANIFEST, _with(_MANIFEST, version="1.0"), False),
    (SchemaKind.MANIFEST, _with(_MANIFEST, name=""), False),
    (SchemaKind.MANIFEST, _with(_MANIFEST, entry=_DROP), False),
    (SchemaKind.MANIFEST, _with(_MANIFEST, createdAt="not a date"), True),  # formats are annotations
    (SchemaKind.MANIFEST, _with(_MANIFEST, workflows=[{"id": "7", "workflow": "w", "graph": "g", "tags": []}]), True),
    (SchemaKind.MANIFEST, _with(_MANIFEST, workflows=[{"id": "7\n", "workflow": "w", "graph": "g"}]), False),
    (SchemaKind.MANIFEST, _with(_MANIFEST, workflows=[{"id": "-7", "workflow": "w", "graph": "g"}]), False),
    (SchemaKind.MANIFEST, _with(_MANIFEST, integrity={"sha256": "a" * 64}), True),
    (SchemaKind.MANIFEST, _with(_MANIFEST, integrity={"sha256": "a" * 64 + "\n"}), False),
    (SchemaKind.MANIFEST, _with(_MANIFEST, extra=1), False),
    (SchemaKind.GRAPH, _GRAPH, True),
    (SchemaKind.GRAPH, _with(_GRAPH, entryNodeId="s\n"), False),
    (SchemaKind.GRAPH, _with(_GRAPH, entryNodeId="bmm:s.1_x-2"), True),
    (SchemaKind.GRAPH, _with(_GRAPH, nodes=[]), False),
    (SchemaKind.GRAPH, _with(_GRAPH, edges=[{"from": "s", "to": "s", "label": ""}]), False),
    (SchemaKind.GRAPH, _with(_GRAPH, edges=[{"from": "s", "to": "s", "label": "x", "conditionExpr": {"==": [1, 1]}}]), True),
    (SchemaKind.GRAPH, _with(_GRAPH, metadata={"anything": [1]}), True),
    (SchemaKind.STEP, _STEP, True),
    (SchemaKind.STEP, _with(_STEP, custom="kept"), True),
    (SchemaKind.STEP, _with(_STEP, nodeId="s\n"), False),
    (SchemaKind.STEP, _with(_STEP, type="loop"), False),
    (SchemaKind.STEP, _with(_STEP, transitions=[{"to": "x", "label": "y", "extra": 1}]), False),
    (SchemaKind.WORKFLOW, _STATE, True),
    (SchemaKind.WORKFLOW, _with(_STATE, currentNodeId=_DROP), False),
    (SchemaKind.WORKFLOW, _with(_STATE, workflowType=""), False),
    (SchemaKind.WORKFLOW, _with(_STATE, decisionLog=[{"from": "a", "to": "b", "label": "c", "why": "d"}]), False),
    (SchemaKind.WORKFLOW, _with(_STATE, variables={"workflowStatus": "complete"}, anything={"x": 1}), True),
    (SchemaKind.WORKFLOW, _with(_STATE, schemaVersion="1.1\n"), False),
    (SchemaKind.AGENTS, {"schemaVersion": "1.1", "agents": [_AGENT]}, True),
    (SchemaKind.AGENTS, {"schemaVersion": "1.1", "agents": []}, False),
    (SchemaKind.AGENTS, {"schemaVersion": "1.1", "agents": [_with(_AGENT, id="bmm:analyst")]}, True),
    (SchemaKind.AGENTS, {"schemaVersion": "1.1", "agents": [_with(_AGENT, id="analyst\n")]}, False),
    (SchemaKind.AGENTS, {"schemaVersion": "1.1", "agents": [_with(_AGENT, persona=_with(_PERSONA, principles="one line"))]}, True),
    (SchemaKind.AGENTS, {"schemaVersion": "1.1", "agents": [_with(_AGENT, persona=_with(_PERSONA, principles=[]))]}, False),
    (SchemaKind.AGENTS, {"schemaVersion": "1.1", "agents": [_with(_AGENT, menu=[{"description": "d", "data": "x", "whatever": 1}])]}, True),
    (SchemaKind.AGENTS, {"schemaVersion": "1.1", "agents": [_with(_AGENT, menu=[{"trigger": "t"}])]}, False),
    (SchemaKind.AGENTS, {"schemaVersion": "1.1", "agents": [_with(_AGENT, tools={"fs": {"maxReadBytes": 0}})]}, False),
]


@pytest.mark.parametrize(("kind", "instance", "valid"), TABLE)
def test_table_both_schemas_give_the_expected_answer(kind: SchemaKind, instance: Any, valid: bool) -> None:
    assert builder_accepts(kind, instance) is valid
    assert app_accepts(kind, instance) is valid


def test_python_semantics_on_the_builders_patterns_would_accept_too_much() -> None:
    """Why the app does not ship the Builder's patterns verbatim: plain ``re`` accepts '1.1\\n'."""
    instance = _with(_MANIFEST, schemaVersion="1.1\n")
    assert Draft202012Validator(reference(SchemaKind.MANIFEST)).is_valid(instance)
    assert not app_accepts(SchemaKind.MANIFEST, instance)


# -- property: instances generated from and around the Builder's schemas ----------------------

_EDGE_STRINGS = ["", " ", "1.1", "1.1\n", "1.1.0", "1.1.\u0663", "1.0.0", "1.0.0\n", "\u0661.0.0", "s", "s\n", "a:b", "-x", "step-01"]
_NASTY = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from(_EDGE_STRINGS), st.just([]), st.just({}))


_SHORT = 30  # pattern strings stay under 30 characters


def _matching(pattern: str) -> st.SearchStrategy[str]:
    """The strings under ``_SHORT`` characters that ``re.fullmatch(pattern)`` accepts."""
    return st.from_regex(pattern, fullmatch=True).filter(lambda text: len(text) < _SHORT)


def _concat(head: st.SearchStrategy[str], tail: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.builds(str.__add__, head, tail)


_NAME_HEAD = string.ascii_letters + string.digits
# The same strings as ``_matching(pattern)`` for the schemas' common patterns, drawn directly: the
# regex strategy draws a string 3-6 times as slowly (1 character at a time through sre's parse
# tree), and most of each example was spent there. Each entry generates exactly the set
# {s : re.fullmatch(pattern, s) and len(s) < _SHORT}: it spells the pattern's alphabet and the
# lengths the filter lets through; test_the_pattern_texts_are_the_filtered_regex checks every
# drawn string against the pattern and the length.
_PATTERN_TEXTS: dict[str, st.SearchStrategy[str]] = {
    # "1.1", or "1.1." and 1-25 Unicode decimal digits (Python's \d is category Nd, as hypothesis' is).
    r"^1\.1(\.\d+)?$": st.just("1.1")
    | _concat(st.just("1.1."), st.text(st.characters(categories=["Nd"]), min_size=1, max_size=_SHORT - 5)),
    # One letter or ASCII digit, then 0-28 of letters, ASCII digits and ._:-
    r"^[A-Za-z0-9][A-Za-z0-9._:-]*$": _concat(
        st.sampled_from(_NAME_HEAD), st.text(_NAME_HEAD + "._:-", max_size=_SHORT - 2)
    ),
    # Three runs of 1-25 Unicode decimal digits joined by dots, then optionally "-" and "+" each
    # with 1-23 of ASCII letters, digits and .- (the lengths the filter can let through); the filter
    # keeps the ones under _SHORT, as _matching's does.
    r"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$": st.builds(
        "{}.{}.{}{}{}".format,
        *[st.text(st.characters(categories=["Nd"]), min_size=1, max_size=_SHORT - 5)] * 3,
        st.just("") | _concat(st.just("-"), st.text(_NAME_HEAD + ".-", min_size=1, max_size=_SHORT - 7)),
        st.just("") | _concat(st.just("+"), st.text(_NAME_HEAD + ".-", min_size=1, max_size=_SHORT - 7)),
    ).filter(lambda text: len(text) < _SHORT),
    # 64 hex digits: never under 30 characters, so no string (the filter above refused every one;
    # the manifest's integrity.sha256 is never generated, with or without this entry).
    r"^[a-fA-F0-9]{64}$": st.nothing(),
}


def _valid(schema: dict[str, Any], root: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Instances built from the schema's shape; strings from its patterns (Python's reading of them,
    so a Unicode digit can appear: one more thing the two validators must agree on)."""
    if "$ref" in schema:
        return _valid(root["$defs"][schema["$ref"].rsplit("/", 1)[1]], root, depth)
    if "oneOf" in schema:
        return st.one_of(*(_valid(branch, root, depth + 1) for branch in schema["oneOf"]))
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties", {})
        required = set(schema.get("required", []))
        if depth > 5:
            return st.just({})
        fields = {name: _valid(sub, root, depth + 1) for name, sub in properties.items()}
        # The keys in the schema's order (a validator reads an object by key; _around's mutations
        # reach every key whatever its place), not fixed_dictionaries' shuffled one: fewer choices.
        return keyed({n: f for n, f in fields.items() if n in required}, {n: f for n, f in fields.items() if n not in required})
    if kind == "array":
        low = schema.get("minItems", 0)
        return st.lists(_valid(schema.get("items", {"type": "string"}), root, depth + 1), min_size=low, max_size=low + 2)
    if kind == "string":
        if "pattern" in schema:
            pattern = schema["pattern"]
            return _PATTERN_TEXTS[pattern] if pattern in _PATTERN_TEXTS else _matching(pattern)
        return st.text(min_size=schema.get("minLength", 0), max_size=6)
    if kind == "integer":
        return st.integers(schema.get("minimum", 0), 100)
    if kind == "boolean":
        return st.booleans()
    return st.just(None)


def _paths(value: Any, here: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield here
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*here, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*here, index))


@cache
def _shapes(kind: SchemaKind) -> st.SearchStrategy[Any]:
    root = reference(kind)
    return _valid(root, root)


@st.composite
def _around(draw: st.DrawFn, kind: SchemaKind) -> Any:
    """A valid-shaped instance, then at most two small mutations: a value swapped for a nasty one, a
    key dropped, an unknown key added, a newline appended to a string."""
    value = json.loads(json.dumps(draw(_shapes(kind))))
    for _ in range(draw(st.integers(0, 2))):
        paths = list(_paths(value))
        path = draw(st.sampled_from(paths))
        parent: Any = value
        for key in path[:-1]:
            parent = parent[key]
        target = parent[path[-1]] if path else value
        action = draw(st.sampled_from(["swap", "drop", "extra", "newline"]))
        if action == "swap" and path:
            parent[path[-1]] = draw(_NASTY)
        elif action == "drop" and path and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "extra" and isinstance(target, dict):
            target[draw(st.sampled_from(["zz", "custom", "id"]))] = draw(_NASTY)
        elif action == "newline" and path and isinstance(target, str):
            parent[path[-1]] = target + "\n"
    return value


# 30 strings per pattern: the check guards a slip in an alphabet or a length, which shows at once.
@settings(max_examples=examples(60), deadline=None)
@given(data=st.data(), pattern=st.sampled_from([p for p, texts in _PATTERN_TEXTS.items() if not texts.is_empty]))
def test_the_pattern_texts_are_the_filtered_regex(data: st.DataObject, pattern: str) -> None:
    """Every string of ``_PATTERN_TEXTS`` is one ``_matching`` could give (the other inclusion is
    by construction: each entry spells the pattern's own alphabet and lengths)."""
    text = data.draw(_PATTERN_TEXTS[pattern])
    assert re.fullmatch(pattern, text) and len(text) < _SHORT, text


def test_the_pattern_texts_cover_the_schemas_patterns_and_the_hash_cannot_be_short() -> None:
    patterns = {p for kind in KINDS for p in _patterns(reference(kind))}
    assert set(_PATTERN_TEXTS) <= patterns
    assert _PATTERN_TEXTS[r"^[a-fA-F0-9]{64}$"].is_empty  # 64 characters are never under _SHORT


def _patterns(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            yield from [value] if key == "pattern" else _patterns(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _patterns(value)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.value)
def test_generated_instances_reach_both_answers(kind: SchemaKind) -> None:
    """The property below is only worth something if it sees accepted and refused instances."""
    opts = settings(max_examples=examples(300), database=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    find(_around(kind), lambda value: builder_accepts(kind, value), settings=opts)
    find(_around(kind), lambda value: not builder_accepts(kind, value), settings=opts)


# 60 instances per schema (300 in all): each starts from a valid shape and makes at most two
# mutations, so the space per schema is small; test_generated_instances_reach_both_answers above
# proves the generator reaches both accepted and refused instances of each schema.
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.value)
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_for_any_instance_the_app_and_the_builder_agree(kind: SchemaKind, data: st.DataObject) -> None:
    instance = data.draw(_around(kind))
    assert app_accepts(kind, instance) == builder_accepts(kind, instance), instance
