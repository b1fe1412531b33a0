"""`crewagent gui` on a Linux desktop that lacks Qt's xcb libraries: one line naming the packages, exit 2, no abort."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from crewagent import gui_deps

#: What ldd printed for PySide6 6.11's libqxcb.so on a bare Debian 12 desktop (shortened).
LDD_BARE_DEBIAN = """\
\tlinux-vdso.so.1 (0x00007ffd4e3f2000)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/plugins/platforms/../../lib/libQt6XcbQpa.so.6 (0x00007f5a1c200000)
\tlibxcb-cursor.so.0 => not found
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxcb.so.1 => /lib/x86_64-linux-gnu/libxcb.so.1 (0x00007f5a1c1d0000)
\tlibxcb-icccm.so.4 => not found
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f5a1bfef000)
\t/lib64/ld-linux-x86-64.so.2 (0x00007f5a1c5b5000)
"""
X11 = {"DISPLAY": ":0"}


def test_the_missing_libraries_of_an_ldd_listing_are_named_once_with_their_debian_packages() -> None:
    missing = gui_deps.missing_libraries(LDD_BARE_DEBIAN)
    assert missing == ["libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1"]
    assert gui_deps.packages_for(missing) == ["libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1"]
    assert gui_deps.packages_for(["libfoo.so.3"]) == ["libfoo.so.3"]  # unknown: named as it is


def test_a_plugin_that_lacks_libraries_gives_one_line_naming_the_apt_command(tmp_path: Path) -> None:
    plugin = tmp_path / "libqxcb.so"
    plugin.write_bytes(b"\x7fELF")
    asked: list[Path] = []

    def ldd(path: Path) -> str:
        asked.append(path)
        return LDD_BARE_DEBIAN

    problem = gui_deps.platform_problem(X11, "linux", plugin, ldd)
    assert asked == [plugin]
    assert problem is not None and "\n" not in problem
    assert "sudo apt install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1" in problem
    assert "libxcb-icccm.so.4" in problem


def test_nothing_is_reported_when_every_library_is_found(tmp_path: Path) -> None:
    found = "\n".join(line for line in LDD_BARE_DEBIAN.splitlines() if "not found" not in line)
    assert gui_deps.platform_problem(X11, "linux", tmp_path / "libqxcb.so", lambda _path: found) is None


@pytest.mark.parametrize(
    ("environ", "platform"),
    [
        ({"QT_QPA_PLATFORM": "offscreen", **X11}, "linux"),
        ({"QT_QPA_PLATFORM": "wayland"}, "linux"),
        ({"WAYLAND_DISPLAY": "wayland-0", **X11}, "linux"),  # a Wayland session: Qt 6 uses its Wayland plugin
        (X11, "darwin"),
        (X11, "win32"),
    ],
)
def test_platforms_other_than_xcb_are_not_checked(tmp_path: Path, environ: dict[str, str], platform: str) -> None:
    def ldd(_path: Path) -> str:
        raise AssertionError("ldd must not run when Qt will not use xcb")

    assert gui_deps.platform_problem(environ, platform, tmp_path / "libqxcb.so", ldd) is None


def test_xcb_asked_for_explicitly_is_checked_even_in_a_wayland_session(tmp_path: Path) -> None:
    environ = {"QT_QPA_PLATFORM": "xcb", "WAYLAND_DISPLAY": "wayland-0", **X11}
    assert gui_deps.platform_problem(environ, "linux", tmp_path / "libqxcb.so", lambda _path: LDD_BARE_DEBIAN) is not None


def test_the_installed_pyside6_has_an_xcb_plugin_where_the_check_looks() -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("the xcb plugin ships on Linux only")
    plugin = gui_deps.xcb_plugin()
    assert plugin is not None and plugin.name == "libqxcb.so" and plugin.is_file()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11 and ldd are Linux's")
def test_crewagent_gui_names_the_packages_instead_of_qt_aborting(tmp_path: Path) -> None:
    """Before: Qt printed "could not load the Qt platform plugin xcb" and aborted (SIGABRT)."""
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    ldd = fake_bin / "ldd"  # found first on PATH: the loader's answer on a bare desktop
    ldd.write_text("#!/bin/sh\ncat <<'EOF'\n" + LDD_BARE_DEBIAN + "EOF\n")
    ldd.chmod(ldd.stat().st_mode | stat.S_IXUSR)
    environ = {key: value for key, value in os.environ.items() if key not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    environ.update({
        "PATH": f"{fake_bin}{os.pathsep}{environ.get('PATH', '')}",
        "DISPLAY": ":99",
        "CREWAGENT_DATA_DIR": str(tmp_path / "data"),
        "CREWAGENT_CONFIG_DIR": str(tmp_path / "config"),
    })
    result = subprocess.run([sys.executable, "-m", "crewagent", "gui"], capture_output=True, text=True, timeout=60, env=environ)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("crewagent: "), result.stderr
    assert "sudo apt install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1" in lines[0]
