"""The sandbox: every escape form is refused with E_SANDBOX_VIOLATION, valid aliases resolve inside their roots."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crewagent.core.tools.results import ErrorCode, ToolFailure
from crewagent.core.tools.sandbox import Sandbox, SandboxViolation, is_within
from tests.examples import examples


@dataclass
class Roots:
    sandbox: Sandbox
    project: Path
    state: Path
    pkg: Path
    conversations: Path
    outside: Path
    inner_data_sandbox: Sandbox
    inner_conversations: Path


def _build_roots(tmp_path: Path) -> Roots:
    project = tmp_path / "project"
    runtime = tmp_path / "data" / "projects" / "proj_1"
    state = runtime / "state"
    conversations = runtime / "conversations"
    pkg = tmp_path / "data" / "packages" / "pkg_1"
    outside = tmp_path / "outside"
    for folder in (project / "docs", state / "runs" / "r1", conversations / "conv_1", pkg / "steps", outside):
        folder.mkdir(parents=True)
    (project / "docs" / "a.md").write_text("a\n")
    (project / ".crewagent.json").write_text("{}")
    (conversations / "conv_1" / "messages.jsonl").write_text("{}\n")
    (outside / "secret.txt").write_text("secret\n")
    (pkg / "steps" / "s1.md").write_text("step\n")
    os.symlink(outside, project / "link_out")
    os.symlink(outside / "secret.txt", project / "secret_link.txt")
    os.symlink(conversations, project / "link_conv")
    os.symlink(project / "docs", project / "docs_link")
    os.symlink(conversations, state / "escape_conv")
    os.symlink(outside, pkg / "link_out")
    # A data folder kept inside the project: its conversation logs are reachable lexically.
    inner_runtime = project / ".data" / "projects" / "proj_2"
    inner_conversations = inner_runtime / "conversations"
    (inner_conversations / "conv_2").mkdir(parents=True)
    (inner_conversations / "conv_2" / "messages.jsonl").write_text("{}\n")
    return Roots(
        sandbox=Sandbox.for_project(project, runtime, pkg),
        project=project,
        state=state,
        pkg=pkg,
        conversations=conversations,
        outside=outside,
        inner_data_sandbox=Sandbox.for_project(project, inner_runtime, pkg),
        inner_conversations=inner_conversations,
    )


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> Roots:
    """The folders, built once for the tests that only resolve paths in them (nothing resolves by writing)."""
    return _build_roots(tmp_path_factory.mktemp("roots"))


@pytest.fixture
def own_roots(tmp_path: Path) -> Roots:
    """The folders for a test that changes them."""
    return _build_roots(tmp_path)


VIOLATIONS = [
    # .. escapes
    "../outside/secret.txt",
    "@project/../outside",
    "docs/../../outside",
    "docs/../a.md",
    "@pkg/../../outside",
    # @state/../ (a sibling of the conversation logs)
    "@state/../conversations/conv_1/messages.jsonl",
    "@state/..",
    "@state/./../conversations",
    # absolute paths
    "/etc/passwd",
    "/",
    "//server/share/x",
    " /etc/passwd",
    # NUL bytes
    "docs/a.md\x00.png",
    "@state/x\x00",
    "\x00",
    # Windows drive and UNC forms, backslash tricks
    "C:\\Windows\\system.ini",
    "C:foo",
    "c:/x",
    "@project/C:foo",
    "docs/d:/x",
    "\\\\server\\share\\x",
    "\\\\?\\C:\\x",
    "docs\\..\\..\\outside",
    "@project\\..\\outside",
    "\\etc\\passwd",
    # home and unknown aliases
    "~/x",
    "~",
    "@home/x",
    "@state../x",
    "@/x",
    # symlinks pointing out of the root
    "link_out/secret.txt",
    "link_out",
    "@project/link_out/secret.txt",
    "secret_link.txt",
    "@pkg/link_out/secret.txt",
    # the conversation logs
    "link_conv/conv_1/messages.jsonl",
    "link_conv",
    "@state/escape_conv/conv_1/messages.jsonl",
    "@state/escape_conv",
]


@pytest.mark.parametrize("raw", VIOLATIONS)
def test_escapes_are_refused(roots: Roots, raw: str) -> None:
    for write in (False, True):
        with pytest.raises(SandboxViolation) as caught:
            roots.sandbox.resolve(raw, write=write)
        assert caught.value.code == ErrorCode.E_SANDBOX_VIOLATION


def test_the_absolute_path_of_a_file_inside_the_project_is_refused_too(roots: Roots) -> None:
    with pytest.raises(SandboxViolation):
        roots.sandbox.resolve(str(roots.project / "docs" / "a.md"))


@pytest.mark.parametrize(
    "raw",
    [
        "@project/.data/projects/proj_2/conversations/conv_2/messages.jsonl",
        ".data/projects/proj_2/conversations",
        ".data/projects/proj_2/conversations/conv_2",
    ],
)
def test_conversation_logs_inside_the_project_are_refused(own_roots: Roots, raw: str) -> None:
    roots = own_roots
    with pytest.raises(SandboxViolation, match="conversation logs"):
        roots.inner_data_sandbox.resolve(raw)
    # The rest of that data folder is the app's too (issue 15); only this project's @state stays usable.
    with pytest.raises(SandboxViolation, match="the app's data folder"):
        roots.inner_data_sandbox.resolve(".data/projects/proj_2")
    (roots.project / ".data" / "projects" / "proj_2" / "state").mkdir()
    assert roots.inner_data_sandbox.resolve(".data/projects/proj_2/state").alias == "project"


@pytest.mark.parametrize(
    "raw",
    [
        "@pkg/steps/s1.md",
        "@pkg/new.md",
        ".crewagent.json",
        "@project/.crewagent.json",
        "@state/logs/tool-results/conv_1/msg_1.json",
        "@state/logs/execution/conv_1.jsonl",
        "@state/runs/r1/logs/execution.jsonl",
    ],
)
def test_read_only_places_refuse_writes_but_allow_reads(roots: Roots, raw: str) -> None:
    with pytest.raises(SandboxViolation):
        roots.sandbox.resolve(raw, write=True)
    assert roots.sandbox.resolve(raw).real  # reading (or checking) is allowed


@pytest.mark.parametrize(
    ("raw", "alias", "relative"),
    [
        ("", "project", ""),
        (".", "project", ""),
        ("@project", "project", ""),
        ("@project/", "project", ""),
        ("docs/a.md", "project", "docs/a.md"),
        ("./docs//a.md", "project", "docs/a.md"),
        ("@project/docs/a.md", "project", "docs/a.md"),
        ("@state", "state", ""),
        ("@state/runs/r1/workflow.md", "state", "runs/r1/workflow.md"),
        ("@pkg/steps/s1.md", "pkg", "steps/s1.md"),
        ("docs_link/a.md", "project", "docs_link/a.md"),
        ("name with spaces.md", "project", "name with spaces.md"),
        ("..hidden", "project", "..hidden"),
        ("@state/runs/r1/workflow.md", "state", "runs/r1/workflow.md"),
    ],
)
def test_valid_paths_resolve_inside_their_root(roots: Roots, raw: str, alias: str, relative: str) -> None:
    resolved = roots.sandbox.resolve(raw)
    assert (resolved.alias, resolved.relative) == (alias, relative)
    root = {"project": roots.project, "state": roots.state, "pkg": roots.pkg}[alias]
    assert is_within(resolved.real, Path(os.path.realpath(root)))
    assert resolved.shown == (f"@{alias}/{relative}" if relative else f"@{alias}")


def test_symlink_inside_the_root_resolves_to_its_target(roots: Roots) -> None:
    resolved = roots.sandbox.resolve("docs_link/a.md")
    assert resolved.real == Path(os.path.realpath(roots.project / "docs" / "a.md"))


def test_writes_to_project_and_state_are_allowed(roots: Roots) -> None:
    assert roots.sandbox.resolve("artifacts/new.md", write=True).alias == "project"
    assert roots.sandbox.resolve("@state/runs/r1/workflow.md", write=True).alias == "state"


def test_missing_pkg_or_state_is_enoent_not_a_violation(tmp_path: Path) -> None:
    sandbox = Sandbox(tmp_path)
    for raw in ("@pkg/x.md", "@state/x.md"):
        with pytest.raises(ToolFailure) as caught:
            sandbox.resolve(raw)
        assert caught.value.code == ErrorCode.ENOENT
        assert not isinstance(caught.value, SandboxViolation)


def test_non_string_path_is_refused(roots: Roots) -> None:
    with pytest.raises(SandboxViolation):
        roots.sandbox.resolve(None)


def test_show_gives_the_alias_form(roots: Roots) -> None:
    assert roots.sandbox.show(Path(os.path.realpath(roots.state / "runs" / "r1"))) == "@state/runs/r1"
    assert roots.sandbox.show(Path(os.path.realpath(roots.project))) == "@project"


_TOKENS = st.sampled_from(
    [
        "/", "\\", "..", ".", "@state", "@project", "@pkg", "@", "a", "docs", "a.md", "link_out",
        "link_conv", "escape_conv", "secret_link.txt", "docs_link", "conversations", "C:", "c:", "\x00",
        "~", ":", " ", "//", "\\\\", "..\\", "../", "%2e%2e", "\u2025", "\uff0e\uff0e", ".data",
    ]
)
_PATHS = st.one_of(st.lists(_TOKENS, max_size=12).map("".join), st.text(max_size=40))


def test_no_generated_path_resolves_outside_the_roots(roots: Roots) -> None:
    # The real paths the results are checked against, once for the test: the folders do not change
    # between examples, and resolving them for each example was a third of the test's realpath calls.
    def real(path: Path) -> Path:
        return Path(os.path.realpath(path))

    allowed = [real(root) for root in (roots.project, roots.state, roots.pkg)]
    real_pkg, real_outside = real(roots.pkg), real(roots.outside)
    sandboxes = ((roots.sandbox, real(roots.conversations)), (roots.inner_data_sandbox, real(roots.inner_conversations)))

    @settings(max_examples=examples(400), deadline=None)
    @given(raw=_PATHS, write=st.booleans())
    def each_path(raw: str, write: bool) -> None:
        for sandbox, conversations in sandboxes:
            try:
                resolved = sandbox.resolve(raw, write=write)
            except ToolFailure as failure:
                assert failure.code in (ErrorCode.E_SANDBOX_VIOLATION, ErrorCode.ENOENT)
                continue
            assert any(is_within(resolved.real, root) for root in allowed), raw
            assert not is_within(resolved.real, conversations), raw
            assert not is_within(resolved.real, real_outside), raw
            if write:
                assert not is_within(resolved.real, real_pkg), raw

    each_path()


@pytest.mark.skipif(os.name != "posix", reason="POSIX: elsewhere the whole path goes through realpath")
def test_a_deep_state_path_is_resolved_below_its_root_only(own_roots: Roots, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's state file sits many folders deep: only the names below @state are looked at
    (realpath re-checked every folder from / down, twice a resolve), and a symlink among them is
    still followed and checked."""
    roots = own_roots
    (roots.state / "runs" / "r1" / "workflow.md").write_text("---\n---\n")
    expected = roots.state.resolve() / "runs" / "r1" / "workflow.md"
    looked_at: list[str] = []
    real_lstat = os.lstat

    def counting(path: str, *args: Any, **kwargs: Any) -> os.stat_result:
        looked_at.append(os.fspath(path))
        return real_lstat(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", counting)
    resolved = roots.sandbox.resolve("@state/runs/r1/workflow.md", write=True)
    assert resolved.real == expected
    below = [path for path in looked_at if path.startswith(str(roots.sandbox.root("state")) + os.sep)]
    assert len(looked_at) == len(below) == 3

    with pytest.raises(SandboxViolation):
        roots.sandbox.resolve("@state/escape_conv/conv_1/messages.jsonl")
