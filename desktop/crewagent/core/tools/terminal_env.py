"""The environment a command runs with: a minimal safe base plus the allow-list, never a secret.

A command does not inherit the app's environment. It gets:

- the safe base: on POSIX ``PATH HOME LANG LC_ALL LC_CTYPE LC_MESSAGES TERM TMPDIR TZ USER LOGNAME``;
  on Windows ``PATH PATHEXT SYSTEMROOT SYSTEMDRIVE WINDIR COMSPEC TEMP TMP USERPROFILE HOMEDRIVE
  HOMEPATH APPDATA LOCALAPPDATA PROGRAMDATA PROGRAMFILES USERNAME`` (programs fail in odd ways
  without SYSTEMROOT and TEMP there);
- the names of the policy's ``envAllowlist`` that the app's environment has;
- the call's own ``env`` values (the model supplies them, the user sees them before approving).

Names that look like credentials or belong to the app (``CREWAGENT_*``, ``OPENAI_*``,
``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*PASSWORD*`` ...) are never inherited, even when the
allow-list names them: an allow-list entry is a convenience, not a way to leak the key.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping

POSIX_BASE = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TERM", "TMPDIR", "TZ", "USER", "LOGNAME")
WINDOWS_BASE = (
    "PATH", "PATHEXT", "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "TEMP", "TMP", "USERPROFILE",
    "HOMEDRIVE", "HOMEPATH", "APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "PROGRAMFILES", "USERNAME",
)  # fmt: skip

_SECRET = re.compile(
    r"^(CREWAGENT_|OPENAI_|ANTHROPIC_|AZURE_OPENAI_)"
    r"|(API_?KEY|_TOKEN|_SECRET|_SECRET_KEY|_ACCESS_KEY|_PRIVATE_KEY|_CREDENTIALS?)$"
    r"|PASSWORD|PASSWD|^(TOKEN|SECRET)$",
    re.IGNORECASE,
)


def is_secret_name(name: str) -> bool:
    """True for a variable a command never inherits (credentials and the app's own settings)."""
    return bool(_SECRET.search(name))


def child_env(
    allowlist: Iterable[str],
    extra: Mapping[str, str] | None = None,
    *,
    source: Mapping[str, str] | None = None,
    windows: bool | None = None,
) -> dict[str, str]:
    """The environment of a command (see the module docstring); ``source`` defaults to ``os.environ``."""
    source = os.environ if source is None else source
    windows = sys.platform == "win32" if windows is None else windows
    wanted = {*(WINDOWS_BASE if windows else POSIX_BASE), *allowlist}
    if windows:  # names are case-insensitive there
        wanted = {name.upper() for name in wanted}
    env = {
        name: value
        for name, value in source.items()
        if (name.upper() if windows else name) in wanted and not is_secret_name(name)
    }
    if extra:
        env.update({str(name): str(value) for name, value in extra.items()})
    return env
