"""Command tools: ``terminal.run`` (one program, no shell) and ``shell.exec`` (a script in a shell, off by default).

Both follow the policy's ``terminal`` section (policy.py :class:`TerminalPolicy`) and ask the
user before every call (``writes=True``; a grant "for this conversation" covers one program,
by its resolved path, not every command). Checks before anything is asked, each its own code:

- the working folder (``cwd``: ``@project/...``, ``@state/...``, a path relative to the project,
  or an absolute path) must resolve (symlinks followed) inside one of ``allowedRoots`` and
  outside the app's own files: ``CWD_NOT_ALLOWED``;
- the program must be found (on the command's own PATH, or relative to ``cwd`` when it has a
  slash): ``COMMAND_NOT_FOUND``; the shell of ``shell.exec`` likewise: ``SHELL_NOT_AVAILABLE``.

Running (terminal_proc.py): the child's environment is terminal_env.py's (never a secret); the
timeout is the policy's ``timeoutMs`` (a call may ask for less): ``EXEC_TIMEOUT``; Stop:
``EXEC_ABORTED``; both kill the command's whole process tree and return the output so far.
Output streams to ``ToolContext.on_output``; past ``maxStdoutBytes`` / ``maxStderrBytes`` a
stream is cut with a marker and kept whole in ``@state/logs/tool-results/<conversation>/``.

The result: ``{ok, stdout, stderr, exitCode, durationMs, shellResolved, platform}`` plus
``stdoutFullPath`` / ``stderrFullPath`` when a stream was cut. A non-zero exit is a success of
the tool (``ok: true``): the model reads ``exitCode``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from crewagent.core import paths
from crewagent.core.store.offload import safe_file_stem
from crewagent.core.tools import terminal_proc
from crewagent.core.tools.policy import TerminalPolicy
from crewagent.core.tools.protected import is_within, real_path
from crewagent.core.tools.registry import Tool, ToolContext, ToolResult
from crewagent.core.tools.results import ErrorCode, ToolFailure, error, ok, os_error
from crewagent.core.tools.sandbox import SandboxViolation
from crewagent.core.tools.terminal_env import child_env

ShellName = Literal["auto", "bash", "zsh", "sh", "powershell", "cmd"]
_POSIX_SHELLS = ("bash", "zsh", "sh")


class _CommandArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cwd: str | None = Field(
        None, description="Working folder: @project/... (default: the project), @state/..., or relative to the project."
    )
    timeoutMs: int | None = Field(None, ge=1, description="Stop the command after this many ms (at most the configured limit).")
    env: dict[str, str] | None = Field(None, description="Extra environment variables for this command.")


class RunArgs(_CommandArgs):
    command: str = Field(min_length=1, description="The program to run, e.g. 'git', 'pytest', 'python' (no shell syntax).")
    args: list[str] = Field(default_factory=list, description="Its arguments, one per item (not parsed by a shell).")


class ShellArgs(_CommandArgs):
    script: str = Field(min_length=1, description="The script to run.")
    shell: ShellName = Field("auto", description="auto: bash (else sh) on macOS/Linux, PowerShell (else cmd) on Windows.")


@dataclass(frozen=True)
class Prepared:
    """A call checked and resolved: what would run, where, and how the prompt shows it."""

    argv: list[str]
    cwd: Path
    cwd_shown: str
    env: dict[str, str]
    shell: str | None
    program_label: str


def _terminal(ctx: ToolContext) -> TerminalPolicy:
    return ctx.policy.terminal


def _roots(ctx: ToolContext) -> list[Path]:
    """The real folders of the policy's allowed roots (a root that cannot be resolved allows nothing)."""
    found = []
    for root in _terminal(ctx).allowed_roots:
        try:
            if root.startswith("@"):
                found.append(ctx.sandbox.resolve(root).real)
            elif os.path.isabs(root):
                found.append(real_path(root))
        except ToolFailure:
            continue
    return found


def resolve_cwd(raw: str | None, ctx: ToolContext) -> tuple[Path, str]:
    """The real working folder and how it is shown; raises ToolFailure (CWD_NOT_ALLOWED, ENOENT...)."""
    roots = _roots(ctx)
    if not roots:
        raise ToolFailure(ErrorCode.CWD_NOT_ALLOWED, "No folder is allowed for commands (tools.terminal.allowedRoots).")
    if raw is None or not raw.strip():
        project = ctx.sandbox.root("project")
        real = project if project is not None and any(is_within(project, root) for root in roots) else roots[0]
    elif os.path.isabs(raw) or (sys.platform == "win32" and raw[1:2] == ":"):
        real = real_path(raw)
    else:
        try:
            real = ctx.sandbox.resolve(raw).real
        except SandboxViolation as exc:
            raise ToolFailure(ErrorCode.CWD_NOT_ALLOWED, f"cwd {raw!r} is not allowed: {exc.message}") from None
    shown = ctx.sandbox.show(real)
    if not any(is_within(real, root) for root in roots):
        allowed = ", ".join(_terminal(ctx).allowed_roots)
        raise ToolFailure(ErrorCode.CWD_NOT_ALLOWED, f"cwd {raw!r} resolves to {shown}, outside the folders commands may use ({allowed}).")
    try:
        ctx.sandbox.refuse_protected(real, shown=shown)
    except SandboxViolation as exc:
        raise ToolFailure(ErrorCode.CWD_NOT_ALLOWED, exc.message) from None
    if not real.is_dir():
        raise ToolFailure(ErrorCode.ENOENT, f"cwd {shown} is not an existing folder.")
    return real, shown


def _which(program: str, cwd: Path, env: dict[str, str]) -> str | None:
    if "/" in program or os.sep in program or (os.altsep and os.altsep in program):
        candidate = Path(program) if os.path.isabs(program) else cwd / program
        return str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None
    return shutil.which(program, path=env.get("PATH") or env.get("Path") or os.defpath)


def _shell_argv(name: ShellName, script: str, env: dict[str, str], cwd: Path) -> tuple[list[str], str]:
    """The argv running ``script`` in the shell asked for; raises SHELL_NOT_AVAILABLE."""
    windows = sys.platform == "win32"
    if name == "auto":
        candidates: tuple[str, ...] = ("pwsh", "powershell", "cmd") if windows else ("bash", "sh")
    elif name == "powershell":
        candidates = ("pwsh", "powershell")
    else:
        candidates = (name,)
    for candidate in candidates:
        path = _which(candidate, cwd, env)
        if path is None:
            continue
        if candidate in ("pwsh", "powershell"):
            return [path, "-NoLogo", "-NoProfile", "-NonInteractive", "-Command", script], path
        if candidate == "cmd":
            return [path, "/d", "/s", "/c", script], path
        return [path, "-c", script], path
    raise ToolFailure(ErrorCode.SHELL_NOT_AVAILABLE, f"No {name if name != 'auto' else 'shell'} is available here ({', '.join(candidates)} not found).")


def prepare(args: dict[str, Any], ctx: ToolContext, *, shell: bool) -> Prepared:
    """Check and resolve a call (raises ToolFailure with the code the model reads)."""
    cwd, shown = resolve_cwd(args.get("cwd"), ctx)
    env = child_env(_terminal(ctx).env_allowlist, args.get("env"))
    if shell:
        argv, shell_path = _shell_argv(args.get("shell") or "auto", str(args["script"]), env, cwd)
        return Prepared(argv, cwd, shown, env, shell_path, Path(shell_path).stem)
    command = str(args["command"])
    program = _which(command, cwd, env)
    if program is None:
        raise ToolFailure(ErrorCode.COMMAND_NOT_FOUND, f"Program {command!r} was not found on PATH (or in {shown}).")
    return Prepared([program, *map(str, args.get("args") or [])], cwd, shown, env, None, Path(command).stem)


def _prepared(args: dict[str, Any], ctx: ToolContext, *, shell: bool) -> Prepared:
    """:func:`prepare`, once per call: the preflight, the approval and the handler get the call's own
    context and arguments, so what the user approved is exactly what runs (and it is resolved once)."""
    cached = getattr(ctx, "_terminal_prepared", None)
    if cached is not None and cached[0] is args:
        return cached[1]
    prepared = prepare(args, ctx, shell=shell)
    object.__setattr__(ctx, "_terminal_prepared", (args, prepared))  # ctx is this call's own copy
    return prepared


def _preflight(shell: bool) -> Any:
    def preflight(args: dict[str, Any], ctx: ToolContext) -> ToolResult | None:
        try:
            _prepared(args, ctx, shell=shell)
        except ToolFailure as failure:
            return failure.result
        return None

    return preflight


def _approval(shell: bool) -> Any:
    def fields(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        prepared = _prepared(args, ctx, shell=shell)
        program = prepared.argv[0]
        arguments = prepared.argv[1:]
        lines = [
            f"Program: {program}",
            f"Arguments: {shlex.join(arguments) if arguments else '(none)'}",
            f"Folder: {prepared.cwd_shown}",
            f"Shell: {prepared.shell or 'none'}",
        ]
        if args.get("env"):
            lines.append(f"Environment: {', '.join(sorted(args['env']))}")
        return {
            "summary": "\n".join(lines),
            # A shell runs anything: its grants cover the shell (all scripts in it), and say so.
            "scope": f"{'shell.exec' if shell else 'terminal.run'}:{program}",
            "scope_label": prepared.program_label,
            "details": {"program": program, "args": arguments, "cwd": prepared.cwd_shown, "shell": prepared.shell},
        }

    return fields


def _spill(ctx: ToolContext, stream: str) -> tuple[Path | None, str]:
    state = ctx.sandbox.root("state")
    if state is None:
        return None, ""
    stem = safe_file_stem(ctx.conversation_id or "default")
    name = f"{safe_file_stem(ctx.call_id or uuid.uuid4().hex)}.{stream}.txt"
    return paths.tool_results_dir(state, stem) / name, f"@state/{paths.TOOL_RESULTS_SUBDIR}/{stem}/{name}"


def _handler(shell: bool) -> Any:
    async def handle(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            prepared = _prepared(args, ctx, shell=shell)
        except ToolFailure as failure:
            return failure.result
        policy = _terminal(ctx)
        timeout_ms = min(policy.timeout_ms, args.get("timeoutMs") or policy.timeout_ms)
        out_path, out_shown = _spill(ctx, "stdout")
        err_path, err_shown = _spill(ctx, "stderr")
        spec = terminal_proc.CommandSpec(
            argv=prepared.argv,
            cwd=prepared.cwd,
            env=prepared.env,
            timeout_s=timeout_ms / 1000,
            max_stdout_bytes=policy.max_stdout_bytes,
            max_stderr_bytes=policy.max_stderr_bytes,
            spill_stdout=out_path,
            spill_stderr=err_path,
            spill_stdout_shown=out_shown,
            spill_stderr_shown=err_shown,
        )
        try:
            outcome = await terminal_proc.run(spec, ctx.on_output)
        except FileNotFoundError:
            return error(ErrorCode.COMMAND_NOT_FOUND, f"{prepared.argv[0]} could not be started (not found).")
        except OSError as exc:
            return os_error(exc, prepared.argv[0])
        fields: dict[str, Any] = {
            "stdout": outcome.stdout.text,
            "stderr": outcome.stderr.text,
            "exitCode": outcome.exit_code,
            "durationMs": round(outcome.duration_ms, 1),
            "shellResolved": prepared.shell,
            "platform": sys.platform,
        }
        if outcome.stdout.spilled is not None:
            fields["stdoutFullPath"] = out_shown
        if outcome.stderr.spilled is not None:
            fields["stderrFullPath"] = err_shown
        if outcome.ending == "timeout":
            return error(ErrorCode.EXEC_TIMEOUT, f"The command did not finish within {timeout_ms} ms; it and its child processes were killed.", **fields)
        if outcome.ending == "aborted":
            return error(ErrorCode.EXEC_ABORTED, "Stopped by the user; the command and its child processes were killed.", **fields)
        return ok(**fields)

    return handle


RUN_TOOL = Tool(
    name="terminal.run",
    description=(
        "Run one program (no shell: pipes, globs and && do not work) in the project, e.g. command 'pytest', "
        "args ['-q']. The user approves each command. Returns stdout, stderr, exitCode and durationMs; long "
        "output is cut and kept whole at stdoutFullPath (read it with fs.read)."
    ),
    args_model=RunArgs,
    handler=_handler(shell=False),
    writes=True,
    preflight=_preflight(shell=False),
    approval_fields=_approval(shell=False),
    timeout_s=float("inf"),  # its own timeout (tools.terminal.timeoutMs) kills the process tree
)

SHELL_TOOL = Tool(
    name="shell.exec",
    description=(
        "Run a script in a shell (bash/zsh/sh, PowerShell or cmd). The user approves each script. Returns "
        "stdout, stderr, exitCode, durationMs and shellResolved."
    ),
    args_model=ShellArgs,
    handler=_handler(shell=True),
    writes=True,
    preflight=_preflight(shell=True),
    approval_fields=_approval(shell=True),
    timeout_s=float("inf"),
)
