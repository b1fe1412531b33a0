"""The file tools fs.list, fs.read, fs.search and fs.write (fs.apply_patch lives in patch.py).

Every path goes through the sandbox (sandbox.py). The blocking work runs in a worker thread
(``asyncio.to_thread``) and checks the call's cancel event between files, so a timed-out or
stopped call stops soon after; nothing in it holds the GIL for long (fs.search patterns are
matched by textmatch.py, in linear time or under the call's deadline). Results follow results.py; a tool never raises for a bad path,
a missing file or a full disk.
"""

from __future__ import annotations

import asyncio
import fnmatch
import hashlib
import os
import stat
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from crewagent.core import bigjson, texts
from crewagent.core.tools import frontmatter
from crewagent.core.tools._files import (
    CHUNK,
    SNIFF_BYTES,
    atomic_write,
    check_expected_sha,
    looks_binary,
    path_lock,
    sha256_bytes,
    utf8_end,
    utf8_start,
)
from crewagent.core.tools.registry import Tool, ToolContext, ToolHandler, ToolResult, describe_validation_error
from crewagent.core.tools.results import ErrorCode, ToolFailure, error, ok, os_error
from crewagent.core.tools.sandbox import ResolvedPath, SandboxViolation
from crewagent.core.tools.textmatch import compile_query

#: A file larger than this is not read at all (hashing it would take too long).
MAX_READ_FILE_BYTES = 256 * 1024 * 1024
LIST_DEFAULT_ENTRIES = 500
LIST_MAX_ENTRIES = 5000
SEARCH_DEFAULT_RESULTS = 100
SEARCH_MAX_RESULTS = 1000
#: fs.search skips files larger than this.
SEARCH_MAX_FILE_BYTES = 2 * 1024 * 1024
SEARCH_MAX_FILES = 20_000
SEARCH_LINE_CHARS = 300
#: Folders a recursive walk does not enter (listing them explicitly still works).
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".pytest_cache"})
SHA256_PATTERN = r"^[0-9a-fA-F]{64}$"

ArgsT = TypeVar("ArgsT", bound=BaseModel)


class StrictArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ListArgs(StrictArgs):
    path: str = Field("@project", description="Folder to list: @project/..., @state/..., @pkg/... or relative to the project.")
    recursive: bool = Field(False, description="List subfolders too (skips .git, node_modules and similar).")
    glob: str | None = Field(None, description="Only entries matching this pattern: '*.md' matches names, 'docs/*.md' relative paths.")
    maxEntries: int = Field(LIST_DEFAULT_ENTRIES, ge=1, le=LIST_MAX_ENTRIES)


class ReadArgs(StrictArgs):
    path: str = Field(description="File to read: @project/..., @state/..., @pkg/... or relative to the project.")
    startLine: int | None = Field(None, ge=1, description="First line to return (1-based).")
    endLine: int | None = Field(None, ge=1, description="Last line to return (inclusive).")
    offset: int | None = Field(None, ge=0, description="Byte offset to start at (instead of lines; for very long lines).")
    limit: int | None = Field(None, ge=1, description="Number of bytes to read from offset.")
    maxBytes: int | None = Field(None, ge=1, description="Return at most this many bytes (never more than the policy allows).")

    @model_validator(mode="after")
    def _one_window(self) -> ReadArgs:
        lines = self.startLine is not None or self.endLine is not None
        if lines and (self.offset is not None or self.limit is not None):
            raise ValueError("use either startLine/endLine or offset/limit, not both")
        if self.startLine is not None and self.endLine is not None and self.endLine < self.startLine:
            raise ValueError("endLine is before startLine")
        return self


class SearchArgs(StrictArgs):
    query: str = Field(min_length=1, description="Text to find (a regular expression when regex is true).")
    path: str = Field("@project", description="Folder (searched recursively) or file to search.")
    regex: bool = False
    caseSensitive: bool = False
    glob: str | None = Field(None, description="Only files matching this pattern, e.g. '*.py'.")
    maxResults: int = Field(SEARCH_DEFAULT_RESULTS, ge=1, le=SEARCH_MAX_RESULTS)


class WriteArgs(StrictArgs):
    path: str = Field(description="File to create or replace (parent folders are created).")
    content: str = Field(description="The complete new content (UTF-8).")
    ifMatchSha256: str | None = Field(
        None, pattern=SHA256_PATTERN, description="Only write if the file still has this sha256 (from fs.read); else E_CONFLICT."
    )


# -- plumbing --------------------------------------------------------------------------------


def threaded(model: type[ArgsT], work: Callable[[ArgsT, ToolContext], ToolResult]) -> ToolHandler:
    """An async handler that validates ``args`` with ``model`` and runs ``work`` in a thread."""

    async def handler(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            parsed = model.model_validate(args)
        except ValidationError as exc:
            return error(ErrorCode.E_SCHEMA_VALIDATION, describe_validation_error(exc))
        return await asyncio.to_thread(_guarded, work, parsed, ctx)

    return handler


def _guarded(work: Callable[[ArgsT, ToolContext], ToolResult], args: ArgsT, ctx: ToolContext) -> ToolResult:
    try:
        return work(args, ctx)
    except ToolFailure as failure:
        return failure.result
    except OSError as exc:
        return os_error(exc, str(getattr(args, "path", "")))


def write_preflight(args: dict[str, Any], ctx: ToolContext) -> ToolResult | None:
    """Refuse a write the sandbox or the write limit would refuse, before anyone is asked to approve it."""
    try:
        ctx.sandbox.resolve(args.get("path"), write=True)
    except ToolFailure as failure:
        return failure.result
    content = args.get("content")
    if isinstance(content, str) and len(content) > ctx.policy.max_write_bytes:  # chars <= bytes: a lower bound
        return _write_limit(len(content.encode("utf-8")), ctx)
    return None


def _write_limit(size: int, ctx: ToolContext) -> ToolResult:
    return error(
        ErrorCode.E_WRITE_LIMIT,
        texts.WRITE_TOO_LARGE.format(size=size, limit=ctx.policy.max_write_bytes),
    )


def stat_file(resolved: ResolvedPath) -> os.stat_result:
    try:
        info = resolved.real.stat()
    except FileNotFoundError:
        raise ToolFailure(ErrorCode.ENOENT, texts.PATH_MISSING.format(path=resolved.shown)) from None
    if stat.S_ISDIR(info.st_mode):
        raise ToolFailure(ErrorCode.E_NOT_A_FILE, texts.PATH_IS_FOLDER_READ.format(path=resolved.shown))
    if not stat.S_ISREG(info.st_mode):
        raise ToolFailure(ErrorCode.E_NOT_A_FILE, texts.PATH_NOT_REGULAR.format(path=resolved.shown))
    return info


def _matches(glob: str | None, relative: str, name: str) -> bool:
    if glob is None:
        return True
    if "/" not in glob:
        return fnmatch.fnmatchcase(name, glob)
    if fnmatch.fnmatchcase(relative, glob):
        return True
    # "**/x" also matches x at the top level, as in most glob dialects.
    return glob.startswith("**/") and fnmatch.fnmatchcase(relative, glob[3:])


def _walk(ctx: ToolContext, base: ResolvedPath, recursive: bool) -> Iterator[tuple[os.DirEntry[str], str, str]]:
    """(entry, path relative to base, shown path) breadth-first, sorted, never leaving the sandbox.

    Symlinked folders are listed but not entered; the app's own files (protected.py), links to
    them and hard links of them are skipped silently.
    """
    queue: deque[tuple[Path, str]] = deque([(base.real, "")])
    while queue:
        ctx.check_cancelled()
        folder, prefix = queue.popleft()
        try:
            with os.scandir(folder) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except (PermissionError, NotADirectoryError, FileNotFoundError):
            if folder == base.real:
                raise
            continue  # a subfolder that vanished or is unreadable: skip it, keep the rest
        for entry in entries:
            relative = f"{prefix}{entry.name}"
            if ctx.sandbox.hides(entry):
                continue
            shown = f"{base.shown}/{relative}"
            yield entry, relative, shown
            if recursive and entry.is_dir(follow_symlinks=False) and entry.name not in SKIPPED_DIRS:
                queue.append((Path(entry.path), f"{relative}/"))


def _describe(entry: os.DirEntry[str], ctx: ToolContext, shown: str) -> dict[str, Any]:
    item: dict[str, Any] = {"path": shown, "name": entry.name}
    if entry.is_symlink():
        try:
            ctx.sandbox.check_real(Path(os.path.realpath(entry.path)), shown=shown)
        except SandboxViolation:
            item["type"] = "symlink"
            item["outside"] = True  # points out of the sandbox: reading it would be refused
            return item
        item["symlink"] = True
    try:
        info = os.stat(entry.path)
    except OSError:
        item["type"] = "symlink" if entry.is_symlink() else "other"
        item["broken"] = True
        return item
    if stat.S_ISDIR(info.st_mode):
        item["type"] = "dir"
    elif stat.S_ISREG(info.st_mode):
        item["type"] = "file"
        item["size"] = info.st_size
    else:
        item["type"] = "other"
    return item


# -- fs.list ---------------------------------------------------------------------------------


def list_dir(args: ListArgs, ctx: ToolContext) -> ToolResult:
    base = ctx.sandbox.resolve(args.path)
    if not base.real.exists():
        return error(ErrorCode.ENOENT, texts.PATH_MISSING.format(path=base.shown))
    if not base.real.is_dir():
        return error(ErrorCode.E_NOT_A_DIRECTORY, texts.PATH_IS_FILE_LIST.format(path=base.shown))
    entries: list[dict[str, Any]] = []
    truncated = False
    for entry, relative, shown in _walk(ctx, base, args.recursive):
        if not _matches(args.glob, relative, entry.name):
            continue
        if len(entries) >= args.maxEntries:
            truncated = True
            break
        entries.append(_describe(entry, ctx, shown))
    result = ok(path=base.shown, entries=entries, count=len(entries), truncated=truncated)
    if truncated:
        result["hint"] = (
            f"Only the first {args.maxEntries} entries are shown. List a subfolder, add a glob, "
            f"or raise maxEntries (at most {LIST_MAX_ENTRIES})."
        )
    return result


# -- fs.read ---------------------------------------------------------------------------------


def read_file(args: ReadArgs, ctx: ToolContext) -> ToolResult:
    resolved = ctx.sandbox.resolve(args.path)
    info = stat_file(resolved)
    if info.st_size > MAX_READ_FILE_BYTES:
        return error(
            ErrorCode.E_READ_LIMIT,
            f"{resolved.shown} is {info.st_size} bytes, over the {MAX_READ_FILE_BYTES} bytes fs.read handles; "
            "use fs.search to find what you need in it.",
            size=info.st_size,
        )
    budget = ctx.policy.max_read_bytes if args.maxBytes is None else min(args.maxBytes, ctx.policy.max_read_bytes)
    with open(resolved.real, "rb") as handle:
        head = handle.read(SNIFF_BYTES)
        if looks_binary(head):
            return error(
                ErrorCode.E_BINARY_FILE,
                f"{resolved.shown} is a binary file ({info.st_size} bytes); fs.read only shows text.",
                size=info.st_size,
            )
        handle.seek(0)
        if args.offset is not None or args.limit is not None:
            return _read_bytes(handle, resolved, args, budget, ctx)
        return _read_lines(handle, resolved, args, budget, ctx)


class _Hasher:
    """The sha256, byte count and line count of everything read from a file."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256()
        self.size = 0
        self.newlines = 0
        self.last = b""

    def update(self, data: bytes) -> None:
        self.digest.update(data)
        self.size += len(data)
        self.newlines += data.count(b"\n")
        self.last = data[-1:] or self.last

    def finish(self, handle: Any, ctx: ToolContext) -> None:
        while chunk := handle.read(CHUNK):
            ctx.check_cancelled()
            self.update(chunk)

    @property
    def lines(self) -> int:
        return self.newlines + (1 if self.last not in (b"", b"\n") else 0)


def _read_lines(handle: Any, resolved: ResolvedPath, args: ReadArgs, budget: int, ctx: ToolContext) -> ToolResult:
    start = args.startLine or 1
    end = args.endLine
    hasher = _Hasher()
    taken: list[bytes] = []
    used = 0
    line_no = 0
    at_line_start = True
    line_taken_from = 0  # index in ``taken`` where the current line begins
    line_used_from = 0
    line_offset = 0  # byte offset of the current line
    cut: int | None = None  # first line not (fully) returned because of the budget
    partial = False
    while piece := handle.readline(CHUNK):  # bounded pieces: a huge line never sits in memory whole
        if at_line_start:
            line_no += 1
            line_offset = hasher.size
            line_taken_from, line_used_from = len(taken), used
            if line_no % 4096 == 0:
                ctx.check_cancelled()
        hasher.update(piece)
        at_line_start = piece.endswith(b"\n")
        if line_no < start:
            continue
        if end is not None and line_no > end:
            break
        if used + len(piece) > budget:
            if line_no == start:
                # A first line longer than the budget: show its beginning.
                taken.append(piece[: utf8_end(piece, budget - used)])
                used = sum(map(len, taken))
                partial = True
            else:
                del taken[line_taken_from:]
                used = line_used_from
            cut = line_no
            break
        taken.append(piece)
        used += len(piece)
    hasher.finish(handle, ctx)
    total = hasher.lines
    complete = line_no - (1 if cut is not None else 0) if taken else start - 1
    returned_end = min(complete, end) if end is not None else complete
    result = ok(
        path=resolved.shown,
        content=b"".join(taken).decode("utf-8", errors="replace"),
        startLine=start,
        endLine=start if partial else max(returned_end, start - 1),
        totalLines=total,
        size=hasher.size,
        sha256=hasher.digest.hexdigest(),
        truncated=cut is not None,
    )
    if partial:
        result["nextOffset"] = line_offset + used
        result["hint"] = (
            f"Line {start} alone is longer than the {budget}-byte read limit; only its first {used} bytes are shown. "
            f"Read on with offset={line_offset + used} (bytes), or use fs.search."
        )
    elif cut is not None:
        result["nextStartLine"] = cut
        result["hint"] = (
            f"Truncated at the {budget}-byte read limit after line {returned_end} of {total}. "
            f"Read the rest with startLine={cut} (and endLine to take a smaller window)."
        )
    elif total == 0:
        result["hint"] = "The file is empty."
    elif start > total:
        result["hint"] = f"The file has only {total} lines."
    return result


def _read_bytes(handle: Any, resolved: ResolvedPath, args: ReadArgs, budget: int, ctx: ToolContext) -> ToolResult:
    size = resolved.real.stat().st_size
    offset = min(args.offset or 0, size)
    want = min(args.limit if args.limit is not None else size - offset, budget)
    hasher = _Hasher()
    data = b""
    position = 0
    while chunk := handle.read(CHUNK):
        ctx.check_cancelled()
        hasher.update(chunk)
        low, high = max(offset - position, 0), min(offset + want + 4 - position, len(chunk))
        if low < high:
            data += chunk[low:high]  # 4 bytes more than wanted, to end on a character boundary
        position += len(chunk)
    begin = utf8_start(data, 0)
    stop = utf8_end(data, min(want, len(data))) if offset + want < size else len(data)
    stop = max(stop, begin)
    piece = data[begin:stop]
    next_offset = offset + stop
    result = ok(
        path=resolved.shown,
        content=piece.decode("utf-8", errors="replace"),
        offset=offset + begin,
        bytesRead=len(piece),
        size=size,
        sha256=hasher.digest.hexdigest(),
        truncated=next_offset < size and (args.limit is None or want < args.limit),
    )
    if next_offset < size:
        result["nextOffset"] = next_offset
        if result["truncated"]:
            result["hint"] = f"Truncated at the {budget}-byte read limit. Read on with offset={next_offset}."
    return result


# -- fs.search -------------------------------------------------------------------------------


def search(args: SearchArgs, ctx: ToolContext) -> ToolResult:
    base = ctx.sandbox.resolve(args.path)
    if not base.real.exists():
        return error(ErrorCode.ENOENT, texts.PATH_MISSING.format(path=base.shown))
    current = [base.shown]  # the file being searched, for a pattern that runs out of time
    matches_line = compile_query(
        args.query, is_regex=args.regex, case_sensitive=args.caseSensitive, deadline=ctx.deadline, where=lambda: current[0]
    )
    matches: list[dict[str, Any]] = []
    skipped = {"binary": 0, "tooLarge": 0, "unreadable": 0}
    searched = 0
    truncated = False
    for real, shown, name, relative in _files_to_search(ctx, base):
        if not _matches(args.glob, relative, name):
            continue
        if searched >= SEARCH_MAX_FILES:
            truncated = True
            break
        ctx.check_cancelled()
        text = _searchable_text(real, skipped)
        if text is None:
            continue
        searched += 1
        current[0] = shown
        for number, line in enumerate(text.splitlines(), start=1):
            if matches_line(line):
                if len(matches) >= args.maxResults:
                    truncated = True
                    break
                matches.append({"path": shown, "line": number, "text": line[:SEARCH_LINE_CHARS]})
        if truncated:
            break
    result = ok(
        path=base.shown,
        matches=matches,
        count=len(matches),
        filesSearched=searched,
        skipped={key: value for key, value in skipped.items() if value},
        truncated=truncated,
    )
    if truncated:
        result["hint"] = "Results were capped. Narrow the search with a subfolder path, a glob or a more specific query."
    if skipped["tooLarge"]:
        result["note"] = f"Files over {SEARCH_MAX_FILE_BYTES} bytes were skipped; read them with fs.read windows."
    return result


def _files_to_search(ctx: ToolContext, base: ResolvedPath) -> Iterator[tuple[Path, str, str, str]]:
    if base.real.is_file():
        yield base.real, base.shown, base.real.name, base.real.name
        return
    for entry, relative, shown in _walk(ctx, base, recursive=True):
        if not entry.is_file():  # follows a symlink; its target is checked below
            continue
        real = Path(os.path.realpath(entry.path)) if entry.is_symlink() else Path(entry.path)
        if entry.is_symlink():
            try:
                ctx.sandbox.check_real(real, shown=shown)
            except SandboxViolation:
                continue
        yield real, shown, entry.name, relative


def _searchable_text(real: Path, skipped: dict[str, int]) -> str | None:
    try:
        if real.stat().st_size > SEARCH_MAX_FILE_BYTES:
            skipped["tooLarge"] += 1
            return None
        data = real.read_bytes()
    except OSError:
        skipped["unreadable"] += 1
        return None
    if looks_binary(data):
        skipped["binary"] += 1
        return None
    return data.decode("utf-8", errors="replace")


# -- fs.write --------------------------------------------------------------------------------


def write_file(args: WriteArgs, ctx: ToolContext) -> ToolResult:
    resolved = ctx.sandbox.resolve(args.path, write=True)
    # Megabytes: encoded in slices, written and hashed piece by piece, never joined (a 20 MB copy
    # holding the GIL, issue 14).
    data = bigjson.encode_utf8_pieces(args.content)
    size = sum(len(piece) for piece in data)
    if size > ctx.policy.max_write_bytes:
        return _write_limit(size, ctx)
    if resolved.real.is_dir():
        return error(ErrorCode.E_NOT_A_FILE, texts.PATH_IS_FOLDER.format(path=resolved.shown))
    with path_lock(resolved.real):
        check_expected_sha(resolved.real, args.ifMatchSha256, resolved.shown)
        if ctx.frontmatter_guard is not None:
            refused = guard_whole_write(resolved, args.content, ctx)
            if refused is not None:
                return refused
        ctx.check_cancelled()
        created = atomic_write(resolved.real, data)
    return ok(path=resolved.shown, bytes=size, sha256=sha256_bytes(data), created=created)


def guard_whole_write(resolved: ResolvedPath, content: str, ctx: ToolContext) -> ToolResult | None:
    """Run mode: a whole-file write of a run's state passes the same checks as a frontmatter patch."""
    assert ctx.frontmatter_guard is not None
    try:
        new: dict[str, Any] | None = frontmatter.jsonable(frontmatter.parse(content).data)
    except ToolFailure:
        new = None
    try:
        old = frontmatter.jsonable(frontmatter.parse(resolved.real.read_text(encoding="utf-8")).data)
    except (OSError, UnicodeDecodeError, ToolFailure):
        old = {}
    return ctx.frontmatter_guard(resolved.shown, old, new)


def _write_summary(args: dict[str, Any]) -> str:
    content = args.get("content")
    if isinstance(content, str):
        return texts.APPROVE_WRITE_BYTES.format(path=args.get("path"), size=bigjson.utf8_size(content))
    return texts.APPROVE_WRITE.format(path=args.get("path"))


LIST_TOOL = Tool(
    name="fs.list",
    description=(
        "List a folder: entries with type (file/dir/symlink) and size. Paths use @project/ (the project), "
        "@state/ (run state) or @pkg/ (the workflow package, read-only); a plain path is relative to the project."
    ),
    args_model=ListArgs,
    handler=threaded(ListArgs, list_dir),
)

READ_TOOL = Tool(
    name="fs.read",
    description=(
        "Read a text file. Returns content, totalLines, size and the sha256 of the whole file (pass it to "
        "fs.write/fs.apply_patch as ifMatchSha256). Large files are truncated at the read limit with a hint "
        "on how to read the rest (startLine/endLine, or offset/limit in bytes)."
    ),
    args_model=ReadArgs,
    handler=threaded(ReadArgs, read_file),
)

SEARCH_TOOL = Tool(
    name="fs.search",
    description=(
        "Search text files under a folder (recursively) or in one file, by substring or regular expression. "
        "Returns matching lines with their path and line number; binary and very large files are skipped."
    ),
    args_model=SearchArgs,
    handler=threaded(SearchArgs, search),
)

WRITE_TOOL = Tool(
    name="fs.write",
    description=(
        "Create or replace a whole file atomically (parent folders are created). Not allowed in @pkg. "
        "Give ifMatchSha256 from fs.read to refuse the write if the file changed meanwhile (E_CONFLICT)."
    ),
    args_model=WriteArgs,
    handler=threaded(WriteArgs, write_file),
    writes=True,
    preflight=write_preflight,
    summarize=_write_summary,
)
