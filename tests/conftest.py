"""Shared fixtures: every test gets its own data, config and cache folders under tmp_path."""

from __future__ import annotations

import gc
import itertools
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests import hypothesis_utf8, rewrite_cache, tmp_cleanup
from tests.examples import PROFILE, THOROUGH_FACTOR
from tests.import_hook import python_import
from tests.xdist_role import is_xdist_controller

if TYPE_CHECKING:
    from tests.forkserver import ForkServer

_TMP_CLEANUP = pytest.StashKey[Callable[[], None]]()

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

pytest_plugins = ["tests.fakes.fixtures"]


def pytest_configure(config: pytest.Config) -> None:
    """Hypothesis profiles (tests/examples.py): "ci", the default, runs the counts the tests set
    through examples(); HYPOTHESIS_PROFILE=thorough runs every property ten times as deep.

    Not in an xdist controller, which runs no test (0.3 CPU-s of imports there, taken from the
    workers on 2 cores), unless ``-v`` asks hypothesis for its profile in the report header.
    The controller starts the fork server its workers are forked from (tests/forkserver.py).
    """
    if is_xdist_controller(config):
        server = _fork_the_workers(config)
        # While the server imports the app on one core, this process (and a fork of it) writes
        # pytest's cache of rewritten test modules, which every worker would write otherwise,
        # then a thread removes the old sessions' temporary folders (after the fork: see there).
        rewrite_cache.warm(config, rewrite_cache.test_modules(config))
        _start_the_tmp_cleanup(config)
        if server is not None:
            _wait_for(server)
        if config.option.verbose < 1:
            return
    else:
        _start_the_tmp_cleanup(config)
    from hypothesis import settings

    settings.register_profile("ci", settings.get_profile("default"))
    settings.register_profile("thorough", max_examples=settings.get_profile("default").max_examples * THOROUGH_FACTOR)
    settings.load_profile(PROFILE)
    hypothesis_utf8.install()  # ~2 CPU-s a worker in a clean clone (tests/hypothesis_utf8.py)


def _start_the_tmp_cleanup(config: pytest.Config) -> None:
    """pytest's removal of old sessions' temporary folders, moved from the end of the run to a
    thread started now (tests/tmp_cleanup.py); the session's end waits for it."""
    join = tmp_cleanup.start(config)
    if join is not None:
        config.stash[_TMP_CLEANUP] = join


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Before pytest's own cleanup of old sessions' folders, which then finds nothing left."""
    join = session.config.stash.get(_TMP_CLEANUP, None)
    if join is not None:
        join()


def _fork_the_workers(config: pytest.Config) -> ForkServer | None:
    """The xdist workers forked from a server that imported the libraries and the app once
    (tests/forkserver.py), instead of fresh interpreters that each import them. The server is
    started here, and ready once ``_wait_for`` has returned."""
    from tests import forkserver

    specs = config.option.tx
    if not specs or any(spec != "popen" for spec in specs) or not forkserver.usable([sys.executable, forkserver.__file__]):
        return None
    folder = tempfile.mkdtemp(prefix="crewagent-forkserver-")
    try:
        server = forkserver.ForkServer(config.rootpath, Path(folder) / "socket")
    except OSError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise pytest.UsageError(f"{exc}; {forkserver.SWITCH}=0 starts the xdist workers without it") from None
    config.option.tx = [f"popen//python={server.python_spec}"] * len(specs)
    os.environ[forkserver.SOCKET_ENV] = str(server.socket_path)  # the workers' zygote forks from it too

    def stop() -> None:
        server.close()
        shutil.rmtree(folder, ignore_errors=True)

    config.add_cleanup(stop)
    return server


def _wait_for(server: ForkServer) -> None:
    from tests import forkserver

    try:
        server.wait_ready()
    except (OSError, RuntimeError) as exc:
        raise pytest.UsageError(f"{exc}; {forkserver.SWITCH}=0 starts the xdist workers without it") from None


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker per core, plus one. The kill loops (one xdist group, so one worker
    at a time) mostly sleep between kills; the extra worker keeps every core busy meanwhile."""
    return len(os.sched_getaffinity(0)) + 1 if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Long tests (marked ``slow``) first: under xdist they start at once, in parallel with the
    short ones, instead of one of them starting last and finishing the run alone."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


_TMP_NUMBERS = itertools.count()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze the heap once the tests are collected, as the app does once it is warm (core/tuning.py).

    What is alive now (the modules of the app, Qt, openai, hypothesis and every test module) lives
    as long as the process; without this, every full collection during the run walks it again:
    1.9 CPU-s of full collections in 104 property and bench tests, 0.6 with it (measured with
    gc.callbacks, one process). What a test allocates is collected as before, and gc.get_objects
    still lists it (tests/ui/test_reopen_frees.py counts objects that way).
    """
    gc.collect()
    gc.freeze()


@pytest.fixture
def tmp_path(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pytest's ``tmp_path`` (a new empty folder per test, under the session's base folder), in O(1).

    pytest's own lists the base folder to number the new one and points a ``...current`` symlink
    at it: with every test asking for one (isolated_dirs), an xdist worker's base folder holds one
    folder and one link per test run so far, and the listing cost grows with each test (about 2 ms
    a test late in a worker). A process-wide counter numbers the folders instead; the base folder
    and its cleanup (the last three sessions kept) stay pytest's. ``tmp_path_retention_policy``
    is left at its default, "all": this fixture never removes a passed test's folder.
    """
    name = re.sub(r"\W", "_", request.node.name)[:30]
    path = tmp_path_factory.getbasetemp() / f"{name}-t{next(_TMP_NUMBERS)}"
    path.mkdir()  # never exist_ok: a folder of another test must not be reused
    return path


@pytest.fixture(scope="session", autouse=True)
def one_cli_parser() -> Iterator[None]:
    """One argparse tree for every in-process ``crewagent`` call of the session (tests/cli/parser_cache.py):
    ``main`` builds its parser on each call (~5 ms); the tree keeps nothing between parses, its
    defaults read no environment, and its handlers look up what a test patches when they run."""
    from tests.cli.parser_cache import one_parser

    with one_parser():
        yield


class _FoldersMadeOnUse(dict[str, Path]):
    """isolated_dirs' folders: a test that reads one gets it made; the app makes the config and
    cache folders it uses, as on a first start (most tests use neither: a folder made is ~0.2 ms
    of system CPU)."""

    def __getitem__(self, name: str) -> Path:
        path = super().__getitem__(name)
        path.mkdir(exist_ok=True)
        return path


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Path]]:
    """Point every data, config and cache directory at tmp_path: a test never touches the real home."""
    paths = {name: tmp_path / f"_{name}" for name in ("data", "config", "cache", "home")}
    paths["home"].mkdir()  # a user's machine has a home folder
    paths["data"].mkdir()  # tests name it as the parent of their own folders (os.environ)
    monkeypatch.setenv("CREWAGENT_DATA_DIR", str(paths["data"]))
    monkeypatch.setenv("CREWAGENT_CONFIG_DIR", str(paths["config"]))
    monkeypatch.setenv("XDG_DATA_HOME", str(paths["data"] / "xdg"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(paths["config"] / "xdg"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(paths["cache"]))
    monkeypatch.setenv("HOME", str(paths["home"]))
    # Settings looks for Ollama and LM Studio on this machine: a test looks only where it says.
    monkeypatch.setenv("CREWAGENT_LOCAL_SERVERS", "")
    # The demo provider streams unpaced (its 20 ms between chunks is for a person watching): a
    # test that needs a paced stream passes its own chunk_delay or sets the variable itself.
    monkeypatch.setenv("CREWAGENT_DEMO_CHUNK_DELAY", "0")
    yield _FoldersMadeOnUse(paths)


_NO_QT_TESTS = tuple(str(Path(__file__).parent / name) + os.sep for name in ("core", "cli"))


@pytest.fixture(autouse=True)
def no_qt_import_hook(request: pytest.FixtureRequest) -> Iterator[None]:
    """The core's and the command line's tests import as the ``crewagent`` command does, without
    PySide6's import hook, which costs their property tests ~10 % of their CPU (tests/import_hook.py)."""
    if not str(request.node.path).startswith(_NO_QT_TESTS):  # a string test: two pathlib walks cost more
        yield
        return
    with python_import():
        yield


@pytest.fixture
def store(isolated_dirs: dict[str, Path]):  # type: ignore[no-untyped-def]
    from crewagent.core.store import RuntimeStore

    return RuntimeStore(isolated_dirs["data"])


@pytest.fixture
def project(store, tmp_path: Path):  # type: ignore[no-untyped-def]
    return store.create_project(tmp_path / "my-project", "My Project")


@pytest.fixture
def conversation(store, project):  # type: ignore[no-untyped-def]
    return store.create_conversation(project.id, title="Test conversation")


@pytest.fixture(autouse=True)
def exports_are_valid_chains(tmp_path: Path) -> Iterator[None]:
    """Issue 15: every conversation a test leaves behind exports (openai) as a chain that validates."""
    yield
    from tests.export_check import export_problems

    problems = export_problems(tmp_path)
    assert not problems, "export --format openai | validate fails:\n" + "\n".join(problems)
