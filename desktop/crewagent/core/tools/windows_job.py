"""Windows: commands die with the app through a Job Object (written for Windows; not run on Linux).

One job per app, created at the first command, with ``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE``: the
app holds the only handle, so when the app ends in any way (a crash, Task Manager's End task) the
handle closes and Windows ends every process in the job. Each command's process is assigned to
it just after it starts; processes it starts from then on are in the job too (nested jobs are
allowed since Windows 8). A process the command starts before the assignment (the first
microseconds) is not: ``taskkill /T`` on timeout and Stop still reaches it.

References: CreateJobObjectW, SetInformationJobObject with JobObjectExtendedLimitInformation (9),
JOBOBJECT_EXTENDED_LIMIT_INFORMATION, AssignProcessToJobObject, OpenProcess
(PROCESS_SET_QUOTA | PROCESS_TERMINATE) in the Win32 documentation.
"""

from __future__ import annotations

import ctypes
import logging
import threading
from typing import Any

log = logging.getLogger(__name__)


def _last_error() -> int:
    """``ctypes.get_last_error()`` (Windows only; 0 elsewhere, where nothing here runs)."""
    getter = getattr(ctypes, "get_last_error", None)
    return int(getter()) if getter is not None else 0

JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000
JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS = 9
PROCESS_SET_QUOTA = 0x0100
PROCESS_TERMINATE = 0x0001


class _BasicLimits(ctypes.Structure):
    _fields_ = [
        ("PerProcessUserTimeLimit", ctypes.c_int64),
        ("PerJobUserTimeLimit", ctypes.c_int64),
        ("LimitFlags", ctypes.c_uint32),
        ("MinimumWorkingSetSize", ctypes.c_size_t),
        ("MaximumWorkingSetSize", ctypes.c_size_t),
        ("ActiveProcessLimit", ctypes.c_uint32),
        ("Affinity", ctypes.c_size_t),
        ("PriorityClass", ctypes.c_uint32),
        ("SchedulingClass", ctypes.c_uint32),
    ]


class _IoCounters(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_uint64)
        for name in (
            "ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
            "ReadTransferCount", "WriteTransferCount", "OtherTransferCount",
        )
    ]


class _ExtendedLimits(ctypes.Structure):
    _fields_ = [
        ("BasicLimitInformation", _BasicLimits),
        ("IoInfo", _IoCounters),
        ("ProcessMemoryLimit", ctypes.c_size_t),
        ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t),
        ("PeakJobMemoryUsed", ctypes.c_size_t),
    ]


class KillOnCloseJob:
    """The app's job; :meth:`add` puts a process (by pid) in it. Failures are logged, never raised."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kernel32: Any = None
        self._job: int | None = None
        self._failed = False

    def _ensure(self) -> int | None:
        if self._job is not None or self._failed:
            return self._job
        try:
            kernel32 = getattr(ctypes, "WinDLL")("kernel32", use_last_error=True)  # noqa: B009 - Windows only
            job = kernel32.CreateJobObjectW(None, None)
            if not job:
                raise OSError(_last_error(), "CreateJobObjectW failed")
            info = _ExtendedLimits()
            info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
            if not kernel32.SetInformationJobObject(job, JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS, ctypes.byref(info), ctypes.sizeof(info)):
                error = _last_error()
                kernel32.CloseHandle(job)
                raise OSError(error, "SetInformationJobObject failed")
        except (OSError, AttributeError) as exc:
            log.warning("no Job Object for commands (they may outlive a crash of the app): %s", exc)
            self._failed = True
            return None
        self._kernel32, self._job = kernel32, job  # kept open for the app's life: closing it ends the commands
        return job

    def add(self, pid: int) -> bool:
        with self._lock:
            job = self._ensure()
            if job is None:
                return False
            process = self._kernel32.OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, False, pid)
            if not process:
                log.warning("could not open process %s for the command job: %s", pid, _last_error())
                return False
            try:
                if not self._kernel32.AssignProcessToJobObject(job, process):
                    log.warning("could not put process %s in the command job: %s", pid, _last_error())
                    return False
                return True
            finally:
                self._kernel32.CloseHandle(process)
