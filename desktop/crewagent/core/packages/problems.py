"""What is wrong with a package: problems that name a file and a JSON pointer, reported all at once."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from crewagent.core import texts
from crewagent.core.errors import CrewAgentError


@dataclass(frozen=True, order=True)
class Problem:
    """One defect: ``file`` is package-relative (POSIX), ``pointer`` an RFC 6901 JSON pointer ('' = the whole file)."""

    file: str
    pointer: str
    message: str

    def __str__(self) -> str:
        """``file#/json/pointer: message``; a problem of the whole file has no ``#``."""
        return f"{self.file}#{self.pointer}: {self.message}" if self.pointer else f"{self.file}: {self.message}"

    def as_json(self) -> dict[str, str]:
        return {"file": self.file, "pointer": self.pointer, "message": self.message}


def pointer(*parts: str | int) -> str:
    """The JSON pointer of a path of keys and indexes (``~`` and ``/`` escaped as RFC 6901 says)."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)


class PackageError(CrewAgentError):
    """A package that cannot be installed or loaded; ``problems`` lists every defect found."""

    def __init__(self, problems: Sequence[Problem], *, source: str = ""):
        self.problems: tuple[Problem, ...] = tuple(problems)
        self.source = source
        count = len(self.problems)
        head = f"{source}: " if source else ""
        lines = "\n".join(str(problem) for problem in self.problems)
        super().__init__(f"{head}the package is invalid ({count} problem{'s' if count != 1 else ''}):\n{lines}")

    @classmethod
    def single(cls, file: str, message: str, *, at: str = "", source: str = "") -> PackageError:
        return cls([Problem(file, at, message)], source=source)


class PackageNotFound(CrewAgentError):
    def __init__(self, package_id: str):
        super().__init__(texts.PACKAGE_NOT_INSTALLED.format(package=package_id))
        self.package_id = package_id


def raise_if_any(problems: Iterable[Problem], *, source: str = "") -> None:
    collected = list(problems)
    if collected:
        raise PackageError(collected, source=source)
