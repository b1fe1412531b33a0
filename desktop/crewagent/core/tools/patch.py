"""fs.apply_patch: change a file in place by a frontmatter update, exact text replacements or a unified diff.

Exactly one form per call:

- ``updateFrontmatter``: an object (or YAML text of a mapping) deep-merged into the Markdown
  file's YAML frontmatter (mappings merge, lists and scalars replace, null deletes a key); the
  body is kept byte for byte. Invalid YAML, in the file or in the update, is
  ``E_INVALID_FRONTMATTER``. Run mode state writes use this form; the context's
  ``frontmatter_guard`` can refuse the new state (``E_INVALID_TRANSITION`` and the like).
- ``replace``: ``[{old, new, all?}]`` applied in order; ``old`` must occur exactly once unless
  ``all`` is true, else ``E_PATCH_FAILED``.
- ``diff``: a unified diff of this one file (``@@ -a,b +c,d @@`` hunks; ``---``/``+++`` headers are
  ignored). Each hunk must match the file exactly, at its stated line or, failing that, at one
  unique place; else ``E_PATCH_FAILED`` and nothing is written.

The read-modify-write holds the file's lock and is atomic; ``ifMatchSha256`` guards against
changes by others. The whole file must fit the read limit and the result the write limit.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, model_validator

from crewagent.core import texts
from crewagent.core.tools import frontmatter
from crewagent.core.tools._files import atomic_write, check_expected_sha, looks_binary, path_lock, sha256_bytes
from crewagent.core.tools.fs import SHA256_PATTERN, StrictArgs, guard_whole_write, stat_file, threaded, write_preflight
from crewagent.core.tools.registry import Tool, ToolContext, ToolResult
from crewagent.core.tools.results import ErrorCode, ToolFailure, error, ok


class ReplaceEdit(StrictArgs):
    old: str = Field(min_length=1, description="Exact text to find.")
    new: str = Field(description="Text to put in its place.")
    all: bool = Field(False, description="Replace every occurrence (otherwise old must occur exactly once).")


class PatchArgs(StrictArgs):
    path: str = Field(description="File to change (not in @pkg).")
    updateFrontmatter: dict[str, Any] | str | None = Field(
        None, description="Keys to merge into the YAML frontmatter (null deletes a key); the body is kept."
    )
    replace: list[ReplaceEdit] | None = Field(None, min_length=1, description="Exact text replacements, applied in order.")
    diff: str | None = Field(None, min_length=1, description="A unified diff of this file.")
    ifMatchSha256: str | None = Field(None, pattern=SHA256_PATTERN, description="Only apply if the file still has this sha256.")

    @model_validator(mode="after")
    def _one_form(self) -> PatchArgs:
        given = [name for name in ("updateFrontmatter", "replace", "diff") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of updateFrontmatter, replace or diff")
        return self


def apply_patch(args: PatchArgs, ctx: ToolContext) -> ToolResult:
    resolved = ctx.sandbox.resolve(args.path, write=True)
    with path_lock(resolved.real):
        check_expected_sha(resolved.real, args.ifMatchSha256, resolved.shown)
        info = stat_file(resolved)
        if info.st_size > ctx.policy.max_read_bytes:
            return error(
                ErrorCode.E_READ_LIMIT,
                f"{resolved.shown} is {info.st_size} bytes, over the {ctx.policy.max_read_bytes}-byte read limit; "
                "it cannot be patched in place.",
            )
        raw = resolved.real.read_bytes()
        if looks_binary(raw):
            return error(ErrorCode.E_BINARY_FILE, texts.PATH_BINARY.format(path=resolved.shown))
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return error(ErrorCode.E_BINARY_FILE, texts.PATH_NOT_UTF8.format(path=resolved.shown))
        extra: dict[str, Any] = {}
        if args.updateFrontmatter is not None:
            new_text, extra = _update_frontmatter(text, args.updateFrontmatter, resolved.shown, ctx)
        elif args.replace is not None:
            new_text, count = _replace(text, args.replace)
            extra = {"replacements": count}
        else:
            assert args.diff is not None
            new_text, hunks = apply_unified_diff(text, args.diff)
            extra = {"hunks": hunks}
        if args.updateFrontmatter is None and ctx.frontmatter_guard is not None:
            # A text edit of a run's state is a state write too: the same checks as a frontmatter update.
            refused = guard_whole_write(resolved, new_text, ctx)
            if refused is not None:
                return refused
        data = new_text.encode("utf-8")
        if len(data) > ctx.policy.max_write_bytes:
            return error(
                ErrorCode.E_WRITE_LIMIT,
                f"The patched file would be {len(data)} bytes; the limit is {ctx.policy.max_write_bytes} bytes.",
            )
        ctx.check_cancelled()
        changed = data != raw
        if changed:
            atomic_write(resolved.real, data)
    return ok(path=resolved.shown, changed=changed, bytes=len(data), sha256=sha256_bytes(data), **extra)


def _update_frontmatter(
    text: str, update: dict[str, Any] | str, shown: str, ctx: ToolContext
) -> tuple[str, dict[str, Any]]:
    if isinstance(update, str):
        update = frontmatter.load_mapping(update)
    document = frontmatter.parse(text)
    new_data = frontmatter.merge(document.data, update)
    written = frontmatter.jsonable(new_data)  # for the guard (which only reads it) and the result: made once
    if ctx.frontmatter_guard is not None:
        refused = ctx.frontmatter_guard(shown, frontmatter.jsonable(document.data), written)
        if refused is not None:
            error_part = refused.get("error", {})
            raise ToolFailure(
                error_part.get("code", ErrorCode.E_SCHEMA_VALIDATION),
                error_part.get("message", "The state update was refused."),
                **{k: v for k, v in error_part.items() if k not in ("code", "message")},
            )
    return frontmatter.render(document, new_data), {
        "frontmatter": written,
        "changedKeys": sorted(str(key) for key in update),
    }


def _replace(text: str, edits: list[ReplaceEdit]) -> tuple[str, int]:
    total = 0
    for number, edit in enumerate(edits, start=1):
        found = text.count(edit.old)
        if found == 0:
            raise ToolFailure(ErrorCode.E_PATCH_FAILED, f"Edit {number}: the old text was not found (nothing was changed).")
        if found > 1 and not edit.all:
            raise ToolFailure(
                ErrorCode.E_PATCH_FAILED,
                f"Edit {number}: the old text occurs {found} times; add surrounding text to make it unique "
                "or set all=true (nothing was changed).",
            )
        text = text.replace(edit.old, edit.new)
        total += found
    return text, total


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def apply_unified_diff(text: str, diff: str) -> tuple[str, int]:
    """Apply a unified diff to ``text``; raises ToolFailure(E_PATCH_FAILED) when a hunk does not fit."""
    newline = "\r\n" if "\r\n" in text else "\n"
    ends_with_newline = text.endswith(("\n", "\r\n")) or not text
    lines = text.splitlines()
    hunks = _parse_hunks(diff)
    if not hunks:
        raise ToolFailure(ErrorCode.E_PATCH_FAILED, "The diff has no '@@ -a,b +c,d @@' hunks.")
    shift = 0
    for number, (old_start, old, new, no_newline) in enumerate(hunks, start=1):
        at = _locate(lines, old, old_start - 1 + shift if old_start else 0)
        if at is None:
            preview = "\n".join(old[:3])
            raise ToolFailure(
                ErrorCode.E_PATCH_FAILED,
                f"Hunk {number} does not match the file (read it again); it expected:\n{preview}",
            )
        lines[at : at + len(old)] = new
        shift = at + len(new) - (old_start - 1 if old_start else 0) - len(old)
        if no_newline and at + len(new) == len(lines):
            ends_with_newline = False
    result = newline.join(lines)
    if lines and ends_with_newline:
        result += newline
    return result, len(hunks)


def _parse_hunks(diff: str) -> list[tuple[int, list[str], list[str], bool]]:
    hunks: list[tuple[int, list[str], list[str], bool]] = []
    current: tuple[int, list[str], list[str], bool] | None = None
    for line in diff.splitlines():
        match = _HUNK.match(line)
        if match:
            if current is not None:
                hunks.append(current)
            current = (int(match.group(1)), [], [], False)
            continue
        if current is None:
            continue  # headers (---, +++, diff --git, index ...) before the first hunk
        start, old, new, no_newline = current
        if line.startswith("\\"):
            current = (start, old, new, True)
        elif line.startswith("-"):
            old.append(line[1:])
        elif line.startswith("+"):
            new.append(line[1:])
        elif line.startswith(" ") or line == "":
            old.append(line[1:])
            new.append(line[1:])
        else:
            raise ToolFailure(ErrorCode.E_PATCH_FAILED, f"Unexpected line in the diff: {line[:80]!r}")
    if current is not None:
        hunks.append(current)
    return hunks


def _locate(lines: list[str], old: list[str], hint: int) -> int | None:
    """Where ``old`` sits in ``lines``: at ``hint`` if it fits there, else at its one unique place."""
    size = len(old)
    if size == 0:
        return min(max(hint, 0), len(lines))
    if 0 <= hint <= len(lines) - size and lines[hint : hint + size] == old:
        return hint
    places = [i for i in range(len(lines) - size + 1) if lines[i : i + size] == old]
    return places[0] if len(places) == 1 else None


def _patch_summary(args: dict[str, Any]) -> str:
    form = next((name for name in ("updateFrontmatter", "replace", "diff") if args.get(name) is not None), "patch")
    return texts.APPROVE_PATCH.format(path=args.get("path"), form=form)


APPLY_PATCH_TOOL = Tool(
    name="fs.apply_patch",
    description=(
        "Change a file in place with exactly one of: updateFrontmatter (merge keys into a Markdown file's YAML "
        "frontmatter; null deletes a key; the body is kept; used for run state), replace ([{old, new, all?}] exact "
        "text replacements) or diff (a unified diff). Not allowed in @pkg. ifMatchSha256 refuses the change if "
        "the file changed since you read it."
    ),
    args_model=PatchArgs,
    handler=threaded(PatchArgs, apply_patch),
    writes=True,
    preflight=write_preflight,
    summarize=_patch_summary,
)
