"""zcoder's slash commands in Textual's command palette (Ctrl+P), read from the registry.

Each form of a command (``/agents pause``, ``/model [NAME]``) is one entry, with its help,
shown as plain text (never read as markup: ``[NAME]`` is not a tag).
Choosing one that runs as it is (no value to type, or an optional one) runs it as if it had
been typed; one that needs a value (``/rename NAME``) is put in the prompt, up to the value,
for the user to finish. The palette is a screen of its own: the choice goes back to the app
as a message (``PaletteCommand``), never as a call into it.
"""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher
from textual.message import Message

from zcoder.slash.registry import Form, FrontEnd, commands

__all__ = ["PaletteCommand", "SlashCommandsProvider"]


class PaletteCommand(Message):
    """A command chosen in the palette: ``text`` to run (``run``), or to finish typing."""

    def __init__(self, text: str, *, run: bool) -> None:
        super().__init__()
        self.text = text
        self.run = run


class SlashCommandsProvider(Provider):
    """Every form of every command of the TUI; the palette filters them as the user types."""

    def _forms(self) -> list[Form]:
        return [form for command in commands().of(FrontEnd.TUI) for form in command.forms]

    def _choose(self, form: Form) -> None:
        self.app.post_message(PaletteCommand(form.fixed_words(), run=not form.needs_value()))

    async def discover(self) -> Hits:
        for form in self._forms():
            yield DiscoveryHit(
                Content(form.usage), partial(self._choose, form), text=form.usage, help=form.help
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for form in self._forms():
            if (score := matcher.match(form.usage)) > 0:
                yield Hit(
                    score,
                    _highlighted(matcher, form.usage),
                    partial(self._choose, form),
                    text=form.usage,
                    help=form.help,
                )


def _highlighted(matcher: Matcher, usage: str) -> Content:
    """``usage`` with the typed letters marked, as ``Matcher.highlight`` marks them, but
    read as plain text: ``highlight`` reads markup, and would take ``[NAME]`` for a tag."""
    content = Content(usage)
    _score, offsets = matcher.fuzzy_search.match(matcher.query, usage)
    for offset in offsets:
        if not usage[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content
