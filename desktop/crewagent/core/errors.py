"""Errors the core reports to its callers, classified by who is to blame."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from crewagent.core import texts


class CrewAgentError(Exception):
    """Base of the errors meant to be shown to a user (an environment or input problem, not a bug)."""


class StoreWriteError(CrewAgentError):
    """A write to the runtime store failed; nothing that was stored before is lost."""

    def __init__(self, message: str, *, path: Path | None = None, errno_code: int | None = None):
        super().__init__(message)
        self.path = path
        self.errno = errno_code

    @classmethod
    def from_os_error(cls, path: Path, exc: OSError) -> StoreWriteError:
        code = exc.errno
        if code in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            reason = texts.REASON_DISK_FULL
        elif code in (errno.EACCES, errno.EPERM, errno.EROFS):
            reason = texts.REASON_PERMISSION
        else:
            reason = exc.strerror or str(exc)
        return cls(texts.CANNOT_WRITE.format(path=path, reason=reason), path=path, errno_code=code)


class StoreReadError(CrewAgentError):
    """A stored file or folder cannot be read (permission denied, a folder where a file belongs)."""

    def __init__(self, message: str, *, path: Path | None = None):
        super().__init__(message)
        self.path = path

    @classmethod
    def from_os_error(cls, path: Path, exc: OSError) -> StoreReadError:
        return cls(texts.CANNOT_READ.format(path=path, reason=_read_reason(exc)), path=path)


class SetupError(CrewAgentError):
    """The data or settings folder the user points at cannot be used (bad input: exit code 2)."""


def _read_reason(exc: OSError) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM):
        return texts.REASON_PERMISSION
    if exc.errno == errno.EISDIR:
        return texts.REASON_IS_FOLDER
    if exc.errno == errno.ENOTDIR:
        return texts.REASON_NOT_FOLDER
    return describe_os_error(exc)


class ProjectError(CrewAgentError):
    """A project folder cannot be created or opened."""


class ProjectFolderMissing(ProjectError):
    """The folder to open does not exist."""


class NotAProjectError(ProjectError):
    """The folder exists but is not a project yet (no .crewagent.json): the app offers to make it one."""


class ConversationNotFound(CrewAgentError):
    def __init__(self, conversation_id: str):
        super().__init__(texts.CONVERSATION_NOT_FOUND.format(conversation_id=conversation_id))
        self.conversation_id = conversation_id


class OffloadedOutputError(CrewAgentError):
    """The full output of an offloaded tool result is missing or does not match its checksum."""


class ImportFormatError(CrewAgentError):
    """A file given to import is not an OpenAI messages[] array."""


def describe_os_error(exc: OSError) -> str:
    return exc.strerror or os.strerror(exc.errno or 0) or str(exc)


class RunSetupError(CrewAgentError):
    """A workflow run cannot start or continue: unknown workflow, missing package, no run (bad input)."""
