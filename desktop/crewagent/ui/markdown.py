"""Markdown to the HTML subset QTextDocument renders: highlighted code blocks with a Copy link, GFM tables.

Why markdown-it-py rather than ``QTextDocument.setMarkdown``: Qt's built-in parser (md4c) turns
the text straight into a document, with no hook into code blocks, so there is no way to highlight
them or to attach a per-block Copy action. markdown-it-py is a CommonMark parser whose renderer
rules can be replaced: fenced code goes through Pygments (inline styles, which QTextDocument
understands) under a small header with a ``copy:N`` link, raw HTML from the model is escaped
rather than rendered, and only safe link schemes survive. GFM tables and strikethrough are on;
a table gets its rules and padding here, since QTextDocument draws a bare ``<table>`` as loose
words. Both libraries are pure Python.
"""

from __future__ import annotations

import html
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

from markdown_it import MarkdownIt
from markdown_it.token import Token
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound
from PySide6.QtCore import QCoreApplication, QTimer

from crewagent.ui.theme import TOKENS

#: The href prefix of a code block's Copy link; the rest is the block's index.
COPY_SCHEME = "copy:"
#: Link schemes a click may open; anything else is shown as text.
SAFE_SCHEMES = ("http:", "https:", "mailto:", "file:")



@dataclass(frozen=True)
class CodeColors:
    """The colours the HTML carries inline (QTextDocument has no stylesheet cascade to theme it)."""

    background: str
    header: str
    inline_background: str
    link: str
    #: The Pygments style of highlighted code.
    pygments_style: str
    #: Table rules and the header row's background (tables get borders and padding, as on GitHub).
    table_border: str
    table_header: str


_PYGMENTS_STYLES = {"light": "default", "dark": "github-dark"}
#: By theme name, from the theme's tokens.
CODE_COLORS: dict[str, CodeColors] = {
    name: CodeColors(
        tokens["code_bg"], tokens["text_muted"], tokens["inline_code_bg"], tokens["link"], _PYGMENTS_STYLES[name],
        tokens["table_border"], tokens["table_header"],
    )
    for name, tokens in TOKENS.items()
}
_MONO = "'JetBrains Mono', 'Cascadia Code', 'Fira Code', Menlo, Consolas, 'DejaVu Sans Mono', monospace"


@dataclass(frozen=True)
class Rendered:
    """HTML for a QTextDocument and the text of each code block (index = the ``copy:N`` link)."""

    html: str
    code_blocks: tuple[str, ...]


class _Renderer:
    """Renderer rules over markdown-it's default HTML renderer."""

    def __init__(self, colors: CodeColors) -> None:
        self.colors = colors
        self.md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
        self.md.enable(["table", "strikethrough"])
        self.md.validateLink = _valid_link  # type: ignore[method-assign]
        rules = cast(Any, self.md.renderer).rules
        rules["fence"] = self._fence
        rules["code_block"] = self._fence
        rules["code_inline"] = self._code_inline
        rules["link_open"] = self._link_open
        rules["table_open"] = self._table_open
        rules["th_open"] = self._cell_open
        rules["td_open"] = self._cell_open
        self._formatter = HtmlFormatter(noclasses=True, nowrap=True, style=colors.pygments_style)

    def render(self, text: str) -> Rendered:
        env: dict[str, Any] = {"code": []}
        body = self.md.render(text, env)
        return Rendered(f"<body>{body}</body>", tuple(env["code"]))

    def _fence(self, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
        token = tokens[idx]
        code = token.content
        language = (token.info or "").strip().split(" ")[0]
        blocks: list[str] = env.setdefault("code", [])
        number = len(blocks)
        blocks.append(code)
        body = self._highlight(code.rstrip("\n"), language)
        label = html.escape(language) if language else "code"
        colors = self.colors
        copy = QCoreApplication.translate("markdown", "Copy")
        return (
            f'<table width="100%" cellspacing="0" cellpadding="8" bgcolor="{colors.background}" '
            'style="margin-top: 4px; margin-bottom: 8px;">'
            f'<tr><td><table width="100%" cellspacing="0" cellpadding="0"><tr>'
            f'<td><span style="color: {colors.header}; font-size: small;">{label}</span></td>'
            f'<td align="right"><a href="{COPY_SCHEME}{number}" style="color: {colors.header}; '
            f'font-size: small; text-decoration: none;">{html.escape(copy)}</a></td></tr></table>'
            f'<pre style="font-family: {_MONO}; margin-top: 6px;">{body}</pre></td></tr></table>\n'
        )

    def _highlight(self, code: str, language: str) -> str:
        if not language:
            return html.escape(code)
        try:
            lexer = _lexer(language)
        except ClassNotFound:
            return html.escape(code)
        return str(highlight(code, lexer, self._formatter)).rstrip("\n")

    def _code_inline(self, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
        content = html.escape(tokens[idx].content)
        return f'<code style="font-family: {_MONO}; background-color: {self.colors.inline_background};">&nbsp;{content}&nbsp;</code>'

    def _link_open(self, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
        href = html.escape(str(tokens[idx].attrGet("href") or ""), quote=True)
        return f'<a href="{href}" style="color: {self.colors.link};">'


    def _table_open(self, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
        # QTextDocument draws no rules for a bare <table>: a GFM table came out as flat words.
        border = self.colors.table_border
        return (
            f'<table border="1" cellspacing="0" cellpadding="6" '
            f'style="border-collapse: collapse; border-color: {border}; border-style: solid; '
            'margin-top: 4px; margin-bottom: 8px;">\n'
        )

    def _cell_open(self, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
        # The rules come from the table (collapsed borders); a cell adds its column's alignment.
        token = tokens[idx]
        tag = token.tag
        align = str(token.attrGet("style") or "")  # markdown-it's "text-align:right" of an aligned column
        style = f' style="{html.escape(align, quote=True)}"' if align.startswith("text-align:") else ""
        header = f' bgcolor="{self.colors.table_header}"' if tag == "th" else ""
        return f"<{tag}{header}{style}>"


#: The languages whose lexers :func:`warm_up_later` compiles, the commonest in answers first. A
#: lexer compiles its regular expressions when it is first used, on the GUI thread, holding the
#: GIL: 49 ms of CPU for Python (110 for CSS), a stall at the first code block of a stream.
WARM_LANGUAGES = ("python", "bash", "javascript", "typescript", "html", "css", "sql", "yaml", "diff", "c", "rust", "go", "java")
#: Held while a lexer is made: pygments compiles a lexer class's rules when it is first made, and
#: two threads compiling the same class at once may mix up its states.
_LEXERS_LOCK = threading.Lock()
_warm_up_scheduled = False


def _lexer(language: str) -> Any:
    with _LEXERS_LOCK:
        return get_lexer_by_name(language, stripnl=False)


def warm_up_later(delay_ms: int = 1000) -> None:
    """Compile :data:`WARM_LANGUAGES`' lexers on a thread of their own, ``delay_ms`` from now (once).

    Called when the first Markdown is laid out: the delay lets the first page of the first
    conversation paint first. The thread runs Python, so the GUI thread gets the GIL between its
    bytecodes (``tuning.GIL_SWITCH_INTERVAL_S``).
    """
    global _warm_up_scheduled
    if _warm_up_scheduled:
        return
    _warm_up_scheduled = True
    QTimer.singleShot(delay_ms, lambda: threading.Thread(target=_warm_up, name="crewagent-lexers", daemon=True).start())


def _warm_up() -> None:
    for language in WARM_LANGUAGES:
        _lexer(language)


def _valid_link(url: str) -> bool:
    lowered = url.strip().lower()
    return lowered.startswith(SAFE_SCHEMES) or lowered.startswith(("#", "/", "./", "../")) or ":" not in lowered.split("/")[0]


@lru_cache(maxsize=len(CODE_COLORS))
def _renderer(theme: str) -> _Renderer:
    return _Renderer(CODE_COLORS.get(theme, CODE_COLORS["light"]))


def render(text: str, theme: str = "light") -> Rendered:
    """Markdown ``text`` as QTextDocument HTML in a theme's code colours (GUI thread only: the
    renderer is not shared).

    A text whose blocks cannot change how one another renders (:func:`_split`: most answers)
    is rendered block by block, from the blocks :func:`render_growing` cached while it
    streamed in. The end of a stream then costs a join, not a parse of the whole answer: 20 ms of
    CPU for a 6.5 KB answer, held on the GUI thread while the worker holds the GIL half the time
    (bench_ui's 20 MB ``fs.write`` scenario, where the stream ends as the tool starts).
    """
    blocks, independent = _split(text)
    if independent:
        return _joined(theme, blocks)
    return _renderer(theme).render(text)


_COPY_LINK = re.compile(r'href="' + re.escape(COPY_SCHEME) + r'(\d+)"')


def render_growing(text: str, theme: str = "light") -> Rendered:
    """:func:`render` for a text that grows at its end (an answer streaming in).

    Rendered block by block (a block ends at a blank line outside a code fence), each block
    cached, so that an update renders its last block only: re-rendering a whole 9 KB answer on
    every update kept the GUI thread busy for 10-70 ms at a time. Blocks of one list that are
    separated by blank lines show as separate lists until the stored message is rendered whole.
    """
    return _joined(theme, _blocks(text))


def _joined(theme: str, blocks: list[str]) -> Rendered:
    """The blocks rendered one by one (each cached) and joined, their Copy links numbered on."""
    parts: list[str] = []
    code: list[str] = []
    for block in blocks:
        rendered = _block(theme, block)
        body = rendered.html.removeprefix("<body>").removesuffix("</body>")
        if rendered.code_blocks and code:
            offset = len(code)
            body = _COPY_LINK.sub(lambda m: f'href="{COPY_SCHEME}{int(m.group(1)) + offset}"', body)
        parts.append(body)
        code.extend(rendered.code_blocks)
    return Rendered(f"<body>{''.join(parts)}</body>", tuple(code))


#: Blocks kept rendered: an answer's blocks are visited in order at each update, so a cache smaller
#: than the answer would drop each block just before it is needed again.
BLOCK_CACHE_SIZE = 1024


@lru_cache(maxsize=BLOCK_CACHE_SIZE)
def _block(theme: str, block: str) -> Rendered:
    return _renderer(theme).render(block)


#: An opening code fence at the top level: up to 3 spaces, then 3 or more backticks or tildes.
_FENCE = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)")
#: The first line of a block that may go on with the block before it: indented (a list item's
#: continuation, indented code) or a list item (one list, made loose by the blank line).
_GOES_ON = re.compile(r"[ \t]|(?:[-+*]|[0-9]{1,9}[.)])(?:[ \t]|$)")
#: A line that may leave a list or indented code open at the end of its block: a list item (at
#: any indentation), or a line indented by 4 spaces or a tab.
_OPENS = re.compile(r" *(?:(?:[-+*]|[0-9]{1,9}[.)])(?:[ \t]|$)|\t)| {4}")


def _blocks(text: str) -> list[str]:
    """``text`` cut after each blank line that is not inside a fenced code block."""
    return _split(text)[0]


def _split(text: str) -> tuple[list[str], bool]:
    """:func:`_blocks`, and whether rendering them one by one renders ``text`` (see :func:`render`).

    Lines, blank lines and fences are read as CommonMark (markdown-it) reads them at the top
    level: lines end at ``\n``, a blank line holds only spaces and tabs, a fence closes on its
    character repeated at least as often, with up to 3 spaces before it and nothing but spaces
    after. A blank line outside a fence ends every paragraph, table, heading and block quote; what
    can reach past it is a list or indented code that goes on in the next block (that block starts
    indented or with a list item, after a block with a list item or an indented line), a fence
    after a list item or an indented line (it may be in the item, where other rules close it), a link
    reference definition (``[label]: url``, used anywhere in the text), and ``\r``, which
    markdown-it reads as a line break. Such a text is rendered whole: conservative, checked for
    any text by tests/ui/test_markdown_blocks.py.
    """
    blocks: list[str] = []
    current: list[str] = []
    fence = ""
    independent = "\r" not in text
    opens = False  # the current block may leave a list or indented code open
    for line in _lines(text):
        bare = line.rstrip("\n")
        if not current and bare.strip(" \t"):  # a block starts (more blank lines end no list)
            independent = independent and not (opens and _GOES_ON.match(line))
            opens = False
        current.append(line)
        if fence:
            if len(bare) - len(bare.lstrip(" ")) <= 3 and bare.strip(" ").startswith(fence) and not bare.strip(" \t").strip(fence[0]):
                fence = ""
            continue
        opening = _FENCE.fullmatch(bare)
        if opening and not (opening.group(2)[0] == "`" and "`" in opening.group(3)):
            fence = opening.group(2)
            independent = independent and not opens  # it may be a list item's, which ends otherwise
            continue
        if not bare.strip(" \t"):
            blocks.append("".join(current))
            current = []
        else:
            opens = opens or bool(_OPENS.match(bare))
            independent = independent and "]:" not in bare and not (opens and ("```" in bare or "~~~" in bare))
    if current:
        blocks.append("".join(current))
    return blocks, independent


def _lines(text: str) -> list[str]:
    """``text``'s lines, each with its ``\n`` (only ``\n`` ends a line)."""
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def is_openable(href: str) -> bool:
    """True for links a click may hand to the system (web pages, mail, local files)."""
    return href.strip().lower().startswith(SAFE_SCHEMES)
