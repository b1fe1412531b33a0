"""The worker side's thread rule: a slot runs on its object's own thread, or fails loudly."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from PySide6.QtCore import QObject, QThread

_P = ParamSpec("_P")
_O = TypeVar("_O", bound=QObject)


def require_own_thread(obj: QObject, name: str) -> None:
    """Raise when called off ``obj``'s thread (a direct call where a queued signal was meant)."""
    if QThread.currentThread() is not obj.thread():
        raise RuntimeError(
            f"{name} was called directly from another thread; "
            "connect a signal to it so that Qt queues the call onto the worker thread."
        )


def on_own_thread(method: Callable[Concatenate[_O, _P], None]) -> Callable[Concatenate[_O, _P], None]:
    """A slot that must run on its object's thread: called from elsewhere, it fails loudly."""

    @functools.wraps(method)
    def wrapper(self: _O, /, *args: _P.args, **kwargs: _P.kwargs) -> None:
        require_own_thread(self, f"{type(self).__name__}.{method.__name__}")
        method(self, *args, **kwargs)

    return wrapper
