"""JSON and UTF-8 of very large texts in slices, so that no single call holds the GIL for long.

A model that writes a 20 MB file sends 20 MB of tool-call arguments. Parsing, serialising or
encoding that text in one C call holds the GIL for 30-400 ms (more on a loaded machine), and the
GUI thread, which needs the GIL to run its event loop, stalls for as long (issue 14,
docs/benchmarks.md "Desktop UI"). Here the same work is done in slices of :data:`SLICE_CHARS`
characters in a Python loop: between two slices the interpreter hands the GIL to a thread that
waits for it (``sys.setswitchinterval``, core/tuning.py).

The results are those of the one-call forms: :func:`loads` gives the value ``pydantic_core``'s
parser (jiter, the app's parser of untrusted JSON) gives for the whole text -- it is the same
parser, run on the text with its long strings cut out, then on the pieces of those strings -- and
raises the same error when the text is not JSON; :func:`dumps` writes JSON that loads back to the
value. Texts under :data:`LARGE_CHARS` take the one-call path unchanged.
"""

from __future__ import annotations

import codecs
import re
import uuid
from collections.abc import Callable, Iterator
from json.encoder import encode_basestring
from typing import Any, AnyStr

import pydantic_core

#: A text longer than this is handled in slices (shorter ones in one call: a few milliseconds).
LARGE_CHARS = 1024 * 1024
#: Characters handled by one C call: well under a millisecond of work on an idle machine.
SLICE_CHARS = 256 * 1024
#: A text with more strings than this is parsed in one call: its strings are small, and finding
#: them one by one in Python would cost more than it saves.
_MAX_STRINGS = 200_000
#: Escaped quotes in one slice after which :func:`_closing_quote` steps over the rest of the slice
#: with the regular expression (a step of Python per quote costs more than that past this many).
_MAX_ESCAPED_QUOTES = 64
_HEX = frozenset("0123456789abcdefABCDEF")
#: The longest start of a string body without its closing quote (escapes whole).
_BODY = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)


def _slices(text: str) -> Iterator[str]:
    for start in range(0, len(text), SLICE_CHARS):
        yield text[start : start + SLICE_CHARS]


def encode_utf8(text: str) -> bytes:
    """``text.encode("utf-8")``, in slices when it is large."""
    if len(text) <= LARGE_CHARS:
        return text.encode("utf-8")
    return b"".join(encode_utf8_pieces(text))


def encode_utf8_pieces(text: str) -> list[bytes]:
    """``text.encode("utf-8")`` in pieces (one when it is small), for a writer that takes them in a
    row: no join of megabytes (one copy holding the GIL, and twice the memory meanwhile)."""
    if len(text) <= LARGE_CHARS:
        return [text.encode("utf-8")]
    return [piece.encode("utf-8") for piece in _slices(text)]


def utf8_size(text: str) -> int:
    """``len(text.encode("utf-8"))`` without one long call (and without encoding ASCII at all)."""
    if text.isascii():
        return len(text)
    return sum(len(piece.encode("utf-8", "surrogatepass")) for piece in _slices(text))


def decode_utf8(data: bytes) -> str:
    """``data.decode("utf-8")``, in slices when it is large (a slice may end inside a character)."""
    if len(data) <= LARGE_CHARS:
        return data.decode("utf-8")
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    parts = [decoder.decode(view[start : start + SLICE_CHARS]) for start in range(0, len(data), SLICE_CHARS)]
    parts.append(decoder.decode(b"", final=True))
    return "".join(parts)


# -- serialising ------------------------------------------------------------------------------


def dumps(value: Any) -> str:
    """Compact JSON of a JSON-like value (as ``pydantic_core.to_json``), its large strings in slices."""
    marker, skeleton, large = _skeleton(value)
    if not large:
        return skeleton.decode("utf-8")
    # Every character is escaped on its own: the literal is the slices' escaped bodies in a row.
    parts = _spliced(skeleton.decode("utf-8"), marker, '@@"', '"', large, lambda piece: encode_basestring(piece)[1:-1])
    return "".join(parts)


def dumps_utf8(value: Any, end: bytes = b"") -> bytes:
    """:func:`dumps` as UTF-8, followed by ``end``, joined once. The large strings' slices are
    escaped and encoded by ``pydantic_core.to_json`` (the serialiser of the rest of the line) in
    one call each: 5x less CPU holding the GIL than escaping them as text and encoding that
    (0.3 against 1.5 ms per slice; 40 ms for the 20 MB of an fs.write's log line, issue 14)."""
    marker, skeleton, large = _skeleton(value)
    if not large:
        return skeleton + end
    parts = _spliced(skeleton, marker.encode(), b'@@"', b'"', large, lambda piece: pydantic_core.to_json(piece)[1:-1])
    return b"".join([*parts, end])


def _spliced(
    skeleton: AnyStr, marker: AnyStr, close: AnyStr, quote: AnyStr, large: list[str], escaped: Callable[[str], AnyStr]
) -> list[AnyStr]:
    """The parts of the JSON text: the skeleton cut at each marked string (``quote`` + ``marker``,
    its number, ``close``), and in its place the large string's slices, each escaped by ``escaped``,
    between quotes."""
    cuts = skeleton.split(quote + marker)
    parts = cuts[:1]
    for cut in cuts[1:]:
        number, after = cut.split(close, 1)
        parts.append(quote)
        parts.extend(escaped(piece) for piece in _slices(large[int(number)]))
        parts += (quote, after)
    return parts


def _skeleton(value: Any) -> tuple[str, bytes, list[str]]:
    """(marker, the JSON of ``value`` with each large string replaced by the marker and its number, those strings)."""
    marker = f"@@bigjson-{uuid.uuid4().hex}-"
    large: list[str] = []

    def cut(item: Any) -> Any:
        if isinstance(item, str) and len(item) > LARGE_CHARS:
            large.append(item)
            return f"{marker}{len(large) - 1}@@"
        if isinstance(item, dict):
            return {key: cut(inner) for key, inner in item.items()}
        if isinstance(item, (list, tuple)):
            return [cut(inner) for inner in item]
        return item

    return marker, pydantic_core.to_json(cut(value)), large


# -- parsing ----------------------------------------------------------------------------------


def loads(text: str) -> Any:
    """``pydantic_core.from_json(text, cache_strings=False)``, with long strings decoded in slices.

    Raises ``ValueError`` (from the parser) when the text is not JSON: the error comes from the
    one-call parse of the whole text, so it reads exactly as it would have without slicing.
    """
    return _loads(text, None)


def loads_heads(text: str, head: int) -> Any:
    """:func:`loads`, but a long string value is only decoded as far as its first ``head`` characters.

    For a preview of a value of megabytes (the context builder's view of an ``fs.write`` it
    shortens, at every request): the full decode and join of a 20 MB string is what costs, and a
    preview needs its start. A string is cut only when it is longer than ``head`` characters
    and its JSON body is longer than :data:`SLICE_CHARS` (in a text over :data:`LARGE_CHARS`);
    keys are decoded whole. Every other value, and the errors of a text that is not JSON outside
    those strings, are :func:`loads`'s; an invalid escape past a cut string's head goes unseen.
    """
    return _loads(text, max(head, 0))


def _loads(text: str, head: int | None) -> Any:
    if len(text) <= LARGE_CHARS:
        return pydantic_core.from_json(text, cache_strings=False)
    bodies = _long_string_bodies(text)
    if not bodies:
        return pydantic_core.from_json(text, cache_strings=False)
    marker = f"@@bigjson-{uuid.uuid4().hex}-"
    skeleton: list[str] = []
    previous = 0
    for number, (start, end) in enumerate(bodies):
        skeleton += [text[previous:start], f"{marker}{number}@@"]
        previous = end
    skeleton.append(text[previous:])
    try:
        value = pydantic_core.from_json("".join(skeleton), cache_strings=False)
        spans = {f"{marker}{number}@@": span for number, span in enumerate(bodies)}
        decoded = {name: _decode_body(text, start, end, head) for name, (start, end) in spans.items()}
        keys = _Keys(text, spans, decoded, head)
    except ValueError:
        # Not JSON: the one-call parse names the problem and its place in the text as given.
        return pydantic_core.from_json(text, cache_strings=False)
    return _put_back(value, decoded, keys)


class _Keys(dict[str, str]):
    """The decoded long strings for use as keys: whole, decoded on first use when values are cut."""

    def __init__(self, text: str, spans: dict[str, tuple[int, int]], decoded: dict[str, str], head: int | None) -> None:
        super().__init__(decoded if head is None else {})
        self._text, self._spans = text, spans

    def __missing__(self, name: str) -> str:
        start, end = self._spans[name]
        self[name] = value = _decode_body(self._text, start, end, None)
        return value

    def get(self, name: str, default: Any = None) -> Any:
        return self[name] if name in self._spans else default


def _long_string_bodies(text: str) -> list[tuple[int, int]]:
    """(start, end) of the body (between the quotes) of every string longer than SLICE_CHARS.

    Outside a string every ``"`` opens one; inside, the first ``"`` that no backslash escapes
    closes it. Empty when the text has no long string, is not JSON, or has too many
    strings to be worth it (the caller then parses it in one call, which also reports errors).
    """
    found: list[tuple[int, int]] = []
    find = text.find
    position = 0
    strings = 0
    while True:
        opening = find('"', position)
        if opening < 0:
            return found
        strings += 1
        if strings > _MAX_STRINGS:
            return []
        closing = _closing_quote(text, opening + 1)
        if closing < 0:
            return []  # unterminated: not JSON
        if closing - opening - 1 > SLICE_CHARS:
            found.append((opening + 1, closing))
        position = closing + 1


def _closing_quote(text: str, start: int) -> int:
    """Where the string whose body begins at ``start`` ends (-1: it does not), a slice per call.

    A quote closes the body when an even number of backslashes comes right before it (each
    escape is a backslash and the character after it, so an odd run escapes the quote). Quotes
    are found with ``str.find`` (memchr), so the body's other escapes (a file's ``\\n`` on every
    line) cost nothing: ~100x less than stepping over every escape with the regular expression
    ``_BODY``, which held the GIL for ~0.3 s of a 20 MB body (issue 14). A slice with many
    escaped quotes (JSON inside the string) is finished with ``_BODY``, which is faster there
    than a step of Python per quote. The end is the one ``_BODY`` matches (tests/core/test_bigjson.py).
    """
    position, length = start, len(text)
    find = text.find
    while position < length:
        window = min(position + SLICE_CHARS, length)
        escaped = 0
        while escaped < _MAX_ESCAPED_QUOTES:
            quote = find('"', position, window)
            if quote < 0:
                break
            if _backslashes_before(text, quote, start) % 2 == 0:
                return quote
            escaped += 1
            position = quote + 1  # after an escaped quote: not inside an escape
        else:
            end = min(max(window, position + 2), length)  # an escape at the slice's end whole
            stop = _BODY.match(text, position, end).end()  # type: ignore[union-attr]  # it matches "" at worst
            if stop < end and text[stop] == '"':
                return stop
            if stop == position:
                return -1  # a backslash that ends the text
            position = stop
            continue
        position = window  # no closing quote in this slice
    return -1


def _backslashes_before(text: str, end: int, start: int) -> int:
    """How many backslashes come right before ``end`` (not looking before ``start``), in C steps."""
    count, step = 0, 64
    while end > start:
        low = max(start, end - step)
        piece = text[low:end]
        kept = len(piece.rstrip("\\"))
        count += len(piece) - kept
        if kept:
            return count
        end, step = low, min(step * 4, SLICE_CHARS)
    return count


def _cuttable(text: str, start: int, at: int) -> bool:
    """A string body that begins at ``start`` can be cut at ``at`` into two valid bodies.

    Not after an escaping backslash, not inside a ``\\uXXXX``, and not between the two halves of
    a surrogate pair written as two escapes (the pieces would decode to two lone surrogates).
    """
    if _backslashes_before(text, at, start) % 2:
        return False
    for back in range(1, 5):  # a \\u whose four hex digits reach ``at`` or beyond
        u = at - back
        if u - 1 >= start and text[u] == "u" and _backslashes_before(text, u, start) % 2:
            return False
    u = at - 5
    if u - 1 >= start and text[u] == "u" and _backslashes_before(text, u, start) % 2:
        digits = text[u + 1 : at]
        if len(digits) == 4 and set(digits) <= _HEX and 0xD800 <= int(digits, 16) <= 0xDBFF:
            return False
    return True


def _decode_body(text: str, start: int, end: int, head: int | None = None) -> str:
    """The string whose JSON body is ``text[start:end]``, decoded a slice at a time (with ``head``:
    only as far as its first ``head`` characters, which is all it returns)."""
    pieces: list[str] = []
    position = start
    decoded = 0
    while position < end:
        if head is not None and decoded > head:
            return "".join(pieces)[:head]
        cut = min(position + SLICE_CHARS, end)
        if cut < end:
            wanted = cut
            while cut > position and not _cuttable(text, start, cut):
                cut -= 1
            if cut == position:  # no place to cut before: take the next one after
                cut = wanted + 1
                while cut < end and not _cuttable(text, start, cut):
                    cut += 1
        value = pydantic_core.from_json('"' + text[position:cut] + '"', cache_strings=False)
        pieces.append(value)
        decoded += len(value)
        position = cut
    whole = "".join(pieces)
    return whole if head is None else whole[:head]


def _put_back(value: Any, decoded: dict[str, str], keys: dict[str, str]) -> Any:
    if isinstance(value, str):
        return decoded.get(value, value)
    if isinstance(value, dict):
        return {keys.get(key, key): _put_back(item, decoded, keys) for key, item in value.items()}
    if isinstance(value, list):
        return [_put_back(item, decoded, keys) for item in value]
    return value
