"""Before Qt starts on Linux/X11: the system libraries its xcb platform plugin lacks, as the packages to install.

Without them Qt prints "Could not load the Qt platform plugin "xcb"" and aborts (SIGABRT, a core
dump on some desktops), which tells a new user nothing about ``apt install``. ``ldd`` of the
plugin from the PySide6 install lists what the dynamic loader cannot find; each missing library
is named with the Debian/Ubuntu package that provides it. No Qt import here: this runs before
the QApplication exists, from the command line's ``_check_gui_setup``.
"""

from __future__ import annotations

import ctypes.util
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

#: Library file (soname) → the Debian/Ubuntu package that installs it. The first three are the
#: ones a bare desktop lacks most often; the rest complete what the xcb plugin links.
DEBIAN_PACKAGES: dict[str, str] = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb-xinput.so.0": "libxcb-xinput0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libSM.so.6": "libsm6",
    "libICE.so.6": "libice6",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libOpenGL.so.0": "libopengl0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libdbus-1.so.3": "libdbus-1-3",
    "libglib-2.0.so.0": "libglib2.0-0",
}

#: The plugin Qt loads for X11, inside the PySide6 package.
XCB_PLUGIN = Path("Qt") / "plugins" / "platforms" / "libqxcb.so"

_NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found\s*$", re.MULTILINE)


def missing_libraries(ldd_output: str) -> list[str]:
    """The libraries ``ldd`` could not find, each once, in the order it listed them."""
    return list(dict.fromkeys(_NOT_FOUND.findall(ldd_output)))


def packages_for(libraries: Iterable[str]) -> list[str]:
    """The packages that provide ``libraries`` (a library with no known package is named itself)."""
    return list(dict.fromkeys(DEBIAN_PACKAGES.get(library, library) for library in libraries))


def uses_xcb(environ: Mapping[str, str], platform: str) -> bool:
    """True when Qt would open its window through the xcb plugin (Linux, X11, no other platform asked)."""
    if not platform.startswith("linux"):
        return False
    asked = environ.get("QT_QPA_PLATFORM", "").strip()
    if asked:
        return asked.split(";")[0].split(":")[0] == "xcb"
    # Qt 6 prefers its Wayland plugin in a Wayland session.
    return not environ.get("WAYLAND_DISPLAY")


def xcb_plugin() -> Path | None:
    """The xcb plugin of the PySide6 that would run, found without importing Qt (None: not there)."""
    spec = importlib.util.find_spec("PySide6")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        plugin = Path(folder) / XCB_PLUGIN
        if plugin.is_file():
            return plugin
    return None


def run_ldd(plugin: Path) -> str | None:
    """``ldd plugin``'s output; None when there is no ldd or it fails (then libraries are looked up one by one)."""
    ldd = shutil.which("ldd")
    if ldd is None:
        return None
    try:
        result = subprocess.run([ldd, str(plugin)], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout if result.returncode == 0 else None


def _missing_by_lookup(libraries: Iterable[str]) -> list[str]:
    """Without ldd: the libraries the usual lookup (ldconfig's cache) does not know."""
    missing = []
    for library in libraries:
        name = library.removeprefix("lib").split(".so")[0]
        if ctypes.util.find_library(name) is None:
            missing.append(library)
    return missing


def platform_problem(
    environ: Mapping[str, str] | None = None,
    platform: str = sys.platform,
    plugin: Path | None = None,
    ldd: Callable[[Path], str | None] = run_ldd,
) -> str | None:
    """One line saying which packages to install for Qt's xcb plugin to load; None when it can load.

    Only checked when Qt would use xcb (see :func:`uses_xcb`); a PySide6 without the plugin (a
    frozen bundle lays it out differently) is not second-guessed.
    """
    environ = os.environ if environ is None else environ
    if not uses_xcb(environ, platform):
        return None
    plugin = plugin if plugin is not None else xcb_plugin()
    if plugin is None:
        return None
    output = ldd(plugin)
    missing = missing_libraries(output) if output is not None else _missing_by_lookup(list(DEBIAN_PACKAGES)[:3])
    if not missing:
        return None
    packages = " ".join(packages_for(missing))
    return (
        f"Qt cannot open a window: its X11 platform plugin needs {', '.join(missing)}, which this system lacks; "
        f"install with: sudo apt install {packages}"
    )
