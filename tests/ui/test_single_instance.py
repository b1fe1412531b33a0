"""One instance per data folder: a second launch brings the first forward and hands over --project."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QDir
from PySide6.QtNetwork import QLocalSocket

from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.single_instance import ActivationRequest, InstanceServer, forward_to_running, server_name
from crewagent.worker import WorkerThread
from tests.ui.conftest import ScriptedDialogs


@pytest.fixture
def server(qapp: Any, isolated_dirs: dict[str, Path]) -> Iterator[InstanceServer]:
    instance = InstanceServer(isolated_dirs["data"])
    assert instance.listen()
    yield instance
    instance.close()


def test_the_name_depends_on_the_folder_not_on_how_it_is_spelled(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert server_name(tmp_path / "a") == server_name(f"{tmp_path}/./a/../a")
    assert server_name(tmp_path / "a") != server_name(tmp_path / "b")


def test_two_clients_in_process_are_reported_in_order(qtbot: Any, server: InstanceServer, isolated_dirs: dict[str, Path], tmp_path: Path) -> None:
    seen: list[ActivationRequest] = []
    server.activation_requested.connect(seen.append)
    assert forward_to_running(isolated_dirs["data"], str(tmp_path / "proj"))
    assert forward_to_running(isolated_dirs["data"])
    qtbot.waitUntil(lambda: len(seen) == 2)
    assert seen == [ActivationRequest(str(tmp_path / "proj")), ActivationRequest(None)]

    # A client that sends garbage is ignored; the server keeps serving.
    raw = QLocalSocket()
    raw.connectToServer(server.name)
    assert raw.waitForConnected(1000)
    raw.write(b"\xff not json\n")
    raw.waitForBytesWritten(1000)
    raw.disconnectFromServer()
    assert forward_to_running(isolated_dirs["data"], None)
    qtbot.waitUntil(lambda: len(seen) == 3)


def test_nobody_listening_means_start_normally(qapp: Any, tmp_path: Path) -> None:
    assert not forward_to_running(tmp_path / "no-instance-here")


def test_a_live_instance_is_not_taken_over(server: InstanceServer, isolated_dirs: dict[str, Path]) -> None:
    second = InstanceServer(isolated_dirs["data"])
    assert not second.listen()
    assert server.listening


@pytest.mark.skipif(sys.platform == "win32", reason="Unix socket files only")
def test_a_stale_socket_left_by_a_crash_does_not_block_startup(qapp: Any, tmp_path: Path) -> None:
    data = tmp_path / "crashed"
    path = os.path.join(QDir.tempPath(), server_name(data))
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(path)  # a socket file nobody accepts on, as a killed instance leaves it
    stale.close()
    try:
        assert not forward_to_running(data)
        instance = InstanceServer(data)
        assert instance.listen()
        assert forward_to_running(data)
        instance.close()
    finally:
        if os.path.exists(path):
            os.unlink(path)


def test_a_second_process_brings_the_window_forward_and_opens_its_project(
    qtbot: Any, isolated_dirs: dict[str, Path], worker_thread: WorkerThread, dialogs: ScriptedDialogs, server: InstanceServer, tmp_path: Path
) -> None:
    main = MainWindow(worker_thread.worker, dialogs=dialogs)
    qtbot.addWidget(main)
    main.show()
    main.showMinimized()
    server.activation_requested.connect(main.activate_from_launch)
    folder = tmp_path / "handed-over"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    # The kernel accepts the connection before this event loop runs, so the second process can
    # hand over and exit (without a window) while we wait for it.
    second = subprocess.run(  # -X importtime: which modules it imported, on stderr
        [sys.executable, "-X", "importtime", "-m", "crewagent.ui", "--data-dir", str(isolated_dirs["data"]), "--project", str(folder)],
        env=env,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert second.returncode == 0, second.stderr.decode()
    # It handed over without importing the window or the worker (~1.5 s of CPU it does not need).
    imported = {line.rsplit("|", 1)[-1].strip() for line in second.stderr.decode().splitlines() if line.startswith("import time:")}
    assert "crewagent.ui.single_instance" in imported
    assert not {"crewagent.ui.mainwindow", "crewagent.worker"} & imported
    qtbot.waitUntil(lambda: main.stack.currentWidget() is main.project_view, timeout=10_000)
    assert main.windowTitle() == "handed-over — CrewAgent"
    assert not main.isMinimized()
    assert (folder / ".crewagent.json").is_file()
