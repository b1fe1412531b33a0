"""What the screenshot scripts (take.py, take_run.py) share: an isolated app folder, waiting on the
event loop, and shrinking the PNGs."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def isolate(base: Path) -> None:
    """Point every folder the app reads or writes into ``base`` (before anything is imported)."""
    for name in ("data", "config", "cache", "home"):
        (base / name).mkdir(parents=True, exist_ok=True)
    os.environ.update(
        CREWAGENT_DATA_DIR=str(base / "data"),
        CREWAGENT_CONFIG_DIR=str(base / "config"),
        XDG_DATA_HOME=str(base / "data" / "xdg"),
        XDG_CONFIG_HOME=str(base / "config" / "xdg"),
        XDG_CACHE_HOME=str(base / "cache"),
        HOME=str(base / "home"),
        # API keys are never needed by the demo; keep the real keyring out of it.
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
    )


class EventWaiter:
    """Runs the Qt event loop for a while, or until a condition holds (create it once the QApplication exists)."""

    def __init__(self, script: str, timeout: float):
        from PySide6.QtCore import QEventLoop

        self._script = script
        self._timeout = timeout
        self._loop = QEventLoop()

    def spin(self, ms: int) -> None:
        """Let the app run for ``ms`` milliseconds."""
        from PySide6.QtCore import QTimer

        # Not QApplication.processEvents: in PySide6 6.12 every call drops a reference to None,
        # and a few thousand calls crash the interpreter ("none_dealloc").
        QTimer.singleShot(ms, self._loop.quit)
        self._loop.exec()

    def wait_until(self, check: Callable[[], bool], what: str, timeout: float | None = None) -> None:
        """Let the app run until ``check()`` holds; give up (exit, naming ``what``) after the timeout."""
        deadline = time.monotonic() + (self._timeout if timeout is None else timeout)
        while not check():
            if time.monotonic() > deadline:
                raise SystemExit(f"{self._script}: gave up waiting for {what}")
            self.spin(20)


def optimise(paths: list[Path]) -> None:
    """Shrink the PNGs losslessly with optipng, or with pngquant (256 colours) when that is all there is."""
    if shutil.which("optipng"):
        subprocess.run(["optipng", "-quiet", "-o2", *map(str, paths)], check=False)
    elif shutil.which("pngquant"):
        for path in paths:
            subprocess.run(["pngquant", "--force", "--skip-if-larger", "--output", str(path), "256", str(path)], check=False)
