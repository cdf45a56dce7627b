"""Assistant replies drawn as markdown (Rich's ``Markdown``), block by block.

A reply is cut into its top-level blocks (paragraphs, headings, lists, tables, code
blocks) by markdown-it, the parser Rich itself uses. While a reply streams, every block but
the last is settled: text appended later cannot change it, so it is rendered once per
width and kept; only the last block is parsed and rendered again as text arrives. A long
reply therefore costs the same per update as a short one (re-rendering the whole reply on
each update made the UI stall for seconds at a few thousand lines).

What the markdown may do is limited: the text has already passed ``screen_safe`` (control
bytes shown as ``\\e``...), raw HTML is shown as text rather than dropped (it could hide
words), links are written out as ``text (url)`` instead of terminal hyperlinks (OSC 8),
and images, which a terminal cannot show, become ``[image: alt] (url)``.

A line break in a paragraph is a line break on screen (a hard break), as Claude Code and
Codex show a model's replies: CommonMark would join the lines with a space (a soft break),
and a model's file lists, steps and command output would run together. Code blocks and
tables keep their own lines either way.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token
    from rich.markdown import Markdown

CODE_THEME = "monokai"  # Pygments style for fenced code (Rich's default)

# markdown-it and Rich's Markdown (with Pygments) are imported when the first reply is
# drawn, not at start-up: together they are about a tenth of zcoder's time to first frame.


@cache
def _parser() -> MarkdownIt:
    """CommonMark with tables and strikethrough, as Rich parses it, but raw HTML kept as
    text."""
    from markdown_it import MarkdownIt  # noqa: PLC0415 - deferred, see above

    return MarkdownIt("commonmark", {"html": False}).enable(["strikethrough", "table"])


def _image_as_text(token: Token) -> Token:
    from markdown_it.token import Token  # noqa: PLC0415 - deferred, see above

    alt = token.content or "image"
    src = str(token.attrs.get("src", ""))
    return Token("text", "", 0, content=f"[image: {alt}] ({src})" if src else f"[image: {alt}]")


def _as_shown(child: Token) -> Token:
    """An inline token as it is drawn: an image as its text, a soft break as a hard one."""
    if child.type == "image":
        return _image_as_text(child)
    if child.type == "softbreak":
        child.type, child.tag = "hardbreak", "br"
    return child


def _as_shown_tokens(tokens: list[Token]) -> list[Token]:
    """The tokens with every image replaced by its alt text and address and every soft
    line break made a hard one, in place."""
    for token in tokens:
        if token.children:
            token.children = [_as_shown(child) for child in token.children]
    return tokens


@cache
def _safe_markdown_class() -> type[Markdown]:
    from rich.markdown import Markdown  # noqa: PLC0415 - deferred, see above

    class SafeMarkdown(Markdown):
        """Rich's Markdown with the limits above: no HTML, no hyperlinks, no images; a
        line break is a line break."""

        def __init__(self, markup: str) -> None:
            super().__init__("", code_theme=CODE_THEME, hyperlinks=False)
            self.markup = markup
            self.parsed = _as_shown_tokens(_parser().parse(markup))

    return SafeMarkdown


def safe_markdown(markup: str) -> Markdown:
    """``markup`` as Rich's Markdown with the limits above."""
    return _safe_markdown_class()(markup)


def _block_spans(markup: str) -> list[tuple[int, int]]:
    """The lines (start, end) of each top-level block of ``markup``."""
    return [
        (token.map[0], token.map[1])
        for token in _parser().parse(markup)
        if token.level == 0 and token.nesting >= 0 and token.map is not None
    ]


def top_level_blocks(markup: str) -> list[str]:
    """The source of each top-level block of ``markup``, in order (blank lines between
    blocks are left out)."""
    lines = markup.splitlines(keepends=True)
    return ["".join(lines[start:end]) for start, end in _block_spans(markup)]


class MarkdownBlocks:
    """A reply's markdown as blocks, updated as the reply grows.

    ``update`` takes the whole text so far. While it extends what came before, only the
    part from the start of the last block is parsed again; otherwise everything is.
    """

    def __init__(self) -> None:
        self.settled: list[str] = []  # blocks that later text cannot change
        self.tail: list[str] = []  # the last block(s): parsed again on each update
        self._text = ""
        self._settled_chars = 0  # how much of _text the settled blocks cover
        # Rendered lines of settled blocks: index -> (width, lines).
        self._lines: dict[int, tuple[int, list[list[Segment]]]] = {}
        self._tail_lines: tuple[str, int, list[list[Segment]]] | None = None
        self.resets = 0  # times the text stopped extending what came before

    @property
    def text(self) -> str:
        return self._text

    def update(self, text: str) -> None:
        if not text.startswith(self._text[: self._settled_chars]):
            self.settled, self._settled_chars = [], 0
            self._lines.clear()
            self.resets += 1
        self._text = text
        rest = text[self._settled_chars :]
        lines = rest.splitlines(keepends=True)
        spans = _block_spans(rest)
        if len(spans) > 1:
            # Everything before the last block's first line is settled.
            for start, end in spans[:-1]:
                self.settled.append("".join(lines[start:end]))
            self._settled_chars += len("".join(lines[: spans[-1][0]]))
        self.tail = ["".join(lines[spans[-1][0] : spans[-1][1]])] if spans else []

    def blocks(self) -> list[str]:
        return self.settled + self.tail

    def render(
        self,
        console: Console,
        options: ConsoleOptions,
        *,
        start: int = 0,
        stop: int | None = None,
        tail: bool = True,
    ) -> list[list[Segment]]:
        """The lines of settled blocks ``start:stop`` (then the tail, if asked) at this
        width: blocks separated by one blank line."""
        options = options.update(height=None)
        width = options.max_width
        parts: list[list[list[Segment]]] = []
        last = len(self.settled) if stop is None else min(stop, len(self.settled))
        for index in range(start, last):
            cached = self._lines.get(index)
            if cached is None or cached[0] != width:
                cached = (width, self._render_block(self.settled[index], console, options))
                self._lines[index] = cached
            parts.append(cached[1])
        for block in self.tail if tail else []:
            known = self._tail_lines
            if known is None or known[0] != block or known[1] != width:
                known = (block, width, self._render_block(block, console, options))
                self._tail_lines = known
            parts.append(known[2])
        out: list[list[Segment]] = []
        for lines in parts:
            if out:
                out.append([])
            out.extend(lines)
        return out

    @staticmethod
    def _render_block(block: str, console: Console, options: ConsoleOptions) -> list[list[Segment]]:
        lines = console.render_lines(safe_markdown(block), options, pad=False)
        # Rich starts some blocks (tables, lists, quotes) with an empty line that separates
        # them from what came before, and pads tables with blank lines: the one empty line
        # between blocks is ours to add. (A code block's padding has a background: kept.)
        first, end = 0, len(lines)
        while first < end and _blank(lines[first]):
            first += 1
        while end > first and _blank(lines[end - 1]):
            end -= 1
        return lines[first:end]


def _blank(line: list[Segment]) -> bool:
    return all(
        not segment.text.strip() and (segment.style is None or segment.style.bgcolor is None)
        for segment in line
    )


class BlocksView:
    """A Rich renderable: some of a reply's blocks (see ``MarkdownBlocks.render``)."""

    def __init__(
        self, blocks: MarkdownBlocks, *, start: int = 0, stop: int | None = None, tail: bool = True
    ) -> None:
        self.blocks = blocks
        self.start, self.stop, self.tail = start, stop, tail

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = self.blocks.render(
            console, options, start=self.start, stop=self.stop, tail=self.tail
        )
        for line in lines:  # every line ends with a line break: Textual counts them
            yield from line
            yield Segment.line()
