"""The context windows providers reported in their model lists, remembered between runs.

Test Connection and Fetch models read ``GET /v1/models``; when its entries give a window
(``context_length``, ``max_model_len`` ...) it is kept here, per base URL, so every later turn
(in the app or on the command line) budgets with it without asking the provider again.
The file is a cache: damaged or unreadable, it is ignored (and rewritten on the next listing).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path

from crewagent.core import paths
from crewagent.core.context.window import MAX_WINDOW, MIN_WINDOW
from crewagent.core.errors import StoreWriteError
from crewagent.core.store._fsutil import atomic_write_json, read_json

log = logging.getLogger(__name__)

WINDOWS_NAME = "provider-models.json"
#: Base URLs remembered at most (the oldest are forgotten first).
MAX_PROVIDERS = 32


def _key(base_url: str) -> str:
    return base_url.strip().rstrip("/")


class ReportedWindows:
    """``{base URL: {model id: window}}`` in the config folder."""

    _lock = threading.Lock()

    def __init__(self, config_dir: str | os.PathLike[str] | None = None):
        self.path: Path = paths.config_dir(config_dir) / WINDOWS_NAME

    def _read(self) -> dict[str, dict[str, int]]:
        try:
            raw = read_json(self.path)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, RecursionError) as exc:
            log.info("ignoring %s: %s", self.path, exc)
            return {}
        if not isinstance(raw, dict):
            return {}
        out: dict[str, dict[str, int]] = {}
        for url, models in raw.items():
            if isinstance(url, str) and isinstance(models, dict):
                out[url] = {
                    str(m): w
                    for m, w in models.items()
                    if isinstance(w, int) and not isinstance(w, bool) and MIN_WINDOW <= w <= MAX_WINDOW
                }
        return out

    def get(self, base_url: str, model: str) -> int | None:
        """The window the provider at ``base_url`` reported for ``model``, if it did."""
        if not model:
            return None
        return self._read().get(_key(base_url), {}).get(model)

    def record(self, base_url: str, windows: Mapping[str, int]) -> None:
        """Remember what one model listing reported (replacing the previous listing of that URL).

        A failed write is logged, not raised: this is a cache and the listing itself succeeded.
        """
        with self._lock:
            data = self._read()
            key = _key(base_url)
            if not windows and key not in data:
                return
            data.pop(key, None)
            if windows:
                data[key] = dict(windows)
            while len(data) > MAX_PROVIDERS:
                data.pop(next(iter(data)))
            try:
                atomic_write_json(self.path, data)
            except StoreWriteError as exc:
                log.warning("could not remember the provider's context windows: %s", exc)
