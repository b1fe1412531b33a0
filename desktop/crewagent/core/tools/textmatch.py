"""The patterns fs.search matches: linear time with RE2, or under the call's deadline when RE2 cannot.

The model chooses the pattern, so a pattern is untrusted input. Python's ``re`` backtracks, and
``(a+)+$`` on a line of 34 ``a`` and a ``!`` runs for hours while holding the GIL, so no
``asyncio.wait_for`` around it can fire. Here:

- every pattern RE2 accepts (and every plain substring) is matched by RE2 (``google-re2``),
  whose running time is linear in the text, whatever the pattern;
- a pattern RE2 refuses because it needs backtracking features (backreferences, lookaround,
  possessive quantifiers, ``\\Z`` ...) is matched by the ``regex`` module, which releases the GIL
  (``concurrent=True``) and stops at the call's deadline (``timeout=``): the search then ends
  with ``TOOL_TIMEOUT`` and a message saying the pattern is too slow, a little before the
  registry's own timeout, so the model learns why;
- a pattern neither accepts is ``E_SCHEMA_VALIDATION``.

``regex``'s ``timeout`` counts CPU time, so on a busy machine the registry's wall-clock timeout
may come first (``TOOL_TIMEOUT`` with the registry's message). The turn still ends on time,
because the GIL is free; the abandoned thread stops within its CPU budget.

RE2 differs from ``re`` in small ways (``\\d`` and ``\\w`` are ASCII-only); for a search tool
that is a fair price for a bound on time.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import re2

from crewagent.core.tools.results import ErrorCode, ToolFailure

#: The regex fallback stops this long before the call's deadline, so its own message arrives first.
DEADLINE_MARGIN_S = 0.25
#: The fallback's limit when the call has no deadline (a context used outside the registry).
FALLBACK_MAX_S = 10.0
_MIN_SLICE_S = 0.01

Matcher = Callable[[str], bool]


def compile_query(
    query: str, *, is_regex: bool, case_sensitive: bool, deadline: float | None = None, where: Callable[[], str] = str
) -> Matcher:
    """A predicate telling whether a line matches ``query``.

    ``deadline`` is a ``time.monotonic()`` instant (the call's timeout); ``where`` names the file
    being searched, for the message of a pattern that runs out of time.
    """
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern to stderr
    options.case_sensitive = case_sensitive
    options.literal = not is_regex
    try:
        compiled = re2.compile(query, options)
    except re2.error as exc:
        if not is_regex:  # cannot happen for a literal; say so plainly if it ever does
            raise ToolFailure(ErrorCode.E_SCHEMA_VALIDATION, f"query cannot be searched: {_text(exc)}") from None
        return _fallback(query, case_sensitive, deadline, where)
    return lambda line: compiled.search(line) is not None


def _fallback(query: str, case_sensitive: bool, deadline: float | None, where: Callable[[], str]) -> Matcher:
    # Imported here: few patterns need it, and its import (~25 ms of CPU) was paid by every start
    # of the app and of `crewagent chat` / `run`, which import the tools.
    import regex

    try:
        pattern = regex.compile(query, 0 if case_sensitive else regex.IGNORECASE)
    except (regex.error, OverflowError, RecursionError) as exc:
        raise ToolFailure(ErrorCode.E_SCHEMA_VALIDATION, f"query is not a valid regular expression: {exc}") from None
    stop = deadline - DEADLINE_MARGIN_S if deadline is not None else time.monotonic() + FALLBACK_MAX_S

    def search(line: str) -> bool:
        budget = max(stop - time.monotonic(), _MIN_SLICE_S)
        try:
            return pattern.search(line, timeout=budget, concurrent=True) is not None
        except TimeoutError:
            raise ToolFailure(
                ErrorCode.TOOL_TIMEOUT,
                f"The regular expression {query!r} is too slow on {where()}: it backtracks without end and was "
                "stopped at the tool's time limit. Simplify it (no nested quantifiers such as (a+)+, no "
                "backreferences or lookarounds), or search for a plain substring.",
            ) from None

    return search


def _text(exc: re2.error) -> str:
    detail = exc.args[0] if exc.args else exc
    return detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
