"""The one command registry, and what reads it: /help, Tab completion, the palette (Ctrl+P)."""

from __future__ import annotations

from typing import Any

import pytest
from textual.command import CommandList, CommandPalette

from tests.tui.conftest import submit, transcript_text, wait_until
from zcoder.slash.registry import (
    CommandRegistry,
    Form,
    FrontEnd,
    commands,
    declare_into,
    help_text,
    slash_command,
)
from zcoder.tui import ZcoderApp
from zcoder.tui.parts.commands import KEYS
from zcoder.tui.state.completion import command_words, complete

pytestmark = pytest.mark.timeout(60)
SIZE = (120, 40)


class Greeter:
    """A command an extension might bring: declared on its own class, in a registry."""

    def __init__(self) -> None:
        self.greeted: list[str] = []

    @slash_command(
        Form("/greet [NAME]", "say hello"),
        Form("/greet loud NAME", "say it louder"),
        where=FrontEnd.TUI,
        aliases=("/hi",),
    )
    async def greet(self, argument: str) -> None:
        self.greeted.append(argument)


def test_every_command_is_declared_once_with_help_and_something_that_runs_it() -> None:
    registry = commands()
    names = [command.name for command in registry]
    assert len(names) == len(set(names)) == len(registry)
    assert {"/help", "/model", "/agents", "/inbox", "/quit", "/undo", "/new"} <= set(names)
    for command in registry:
        assert command.forms and all(form.help for form in command.forms)
        assert all(form.usage.split()[0] == command.name for form in command.forms)
        assert callable(getattr(command.owner, command.run.__name__))
    assert registry.find("/q") is registry.find("/QUIT") is registry.find("/quit")
    assert registry.find("/clear") is registry.find("/new")
    assert registry.find("/nonsense") is None


def test_help_and_completion_list_every_form_and_alias() -> None:
    registry = commands()
    shown = help_text(registry, KEYS)
    words = command_words(registry.completion_entries())
    for command in registry:
        assert all(form.usage in shown for form in command.forms)
        assert all(alias in shown and alias in words for alias in command.aliases)
        assert command.name in words
    assert "!COMMAND" in shown and "Ctrl+Q" in shown
    assert {"pause", "resume", "continue", "held", "run", "trust"} <= set(words["/agents"])


async def test_a_command_declared_elsewhere_is_run_helped_and_completed() -> None:
    registry = CommandRegistry()
    declare_into(registry, Greeter)
    command = registry.find("/hi")
    assert command is not None and command.name == "/greet" and command.owner is Greeter
    greeter = Greeter()
    await command.call(greeter, "world")
    assert greeter.greeted == ["world"]
    assert "/greet loud NAME" in help_text(registry, {}) and "/hi" in help_text(registry, {})
    found = complete(
        "/greet l", first_row=True, workspace=None, commands=registry.completion_entries()
    )
    assert found is not None and [c.text for c in found.candidates] == ["loud"]
    with pytest.raises(ValueError, match="declared twice"):
        declare_into(registry, Greeter)


def test_a_form_says_what_runs_as_it_is_and_what_needs_a_value() -> None:
    assert Form("/model [NAME]", "").fixed_words() == "/model"
    assert not Form("/model [NAME]", "").needs_value()
    assert Form("/agents pause", "").fixed_words() == "/agents pause"
    assert Form("/agents recover [discard]", "").fixed_words() == "/agents recover"
    assert Form("/rename NAME", "").needs_value()
    assert Form("/agents run N | discard N", "").fixed_words() == "/agents run"
    assert Form("/agents trust | block | forget NAME", "").needs_value()


def palette_rows(app: ZcoderApp) -> list[str]:
    """The palette's entries as shown, without their help (the line below each)."""
    options = app.screen.query_one(CommandList).options
    return [str(option.prompt).split("\n", 1)[0] for option in options]


PALETTE_WAIT = 30.0  # seconds: the palette searches in a worker; a loaded machine is slow


async def open_palette(pilot: Any, app: ZcoderApp, query: str) -> None:
    await pilot.press("ctrl+p")
    await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), timeout=PALETTE_WAIT)
    await type_in_palette(pilot, query)


async def type_in_palette(pilot: Any, text: str) -> None:
    await pilot.press(*("space" if c == " " else c for c in text))


async def test_the_palette_lists_zcoders_commands_and_runs_the_one_chosen(
    fake, make_config, app_factory
):
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "/help")  # the start has finished
        await open_palette(pilot, app, "")
        # Every form of every command, as written (``[NAME]`` is not read as markup);
        # the palette lists the hits of its providers as they come.
        usages = {form.usage for command in commands() for form in command.forms}
        await wait_until(pilot, lambda: usages <= set(palette_rows(app)), timeout=PALETTE_WAIT)
        assert {"/model [NAME]", "/compact [FOCUS]", "/help"} <= usages
        # What is typed filters: only the forms it matches stay (a query matching none
        # would leave the full list on screen until its search ends, and pass by luck).
        await type_in_palette(pilot, "agents pause")
        await wait_until(
            pilot,
            lambda: palette_rows(app) and palette_rows(app)[0] == "/agents pause",
            timeout=PALETTE_WAIT,
        )
        assert not [row for row in palette_rows(app) if row.startswith("/help")]
        await pilot.press("ctrl+u")  # what is typed goes; the palette lists everything again
        await pilot.press(*"list-agents")
        await wait_until(
            pilot,
            lambda: palette_rows(app) and "/list-agents" in palette_rows(app)[0],
            timeout=PALETTE_WAIT,
        )
        await pilot.press("ctrl+u", *"rename")
        await wait_until(
            pilot,
            lambda: palette_rows(app) and palette_rows(app)[0] == "/rename NAME",
            timeout=PALETTE_WAIT,
        )
        await pilot.press("ctrl+u", *"list-agents")
        await wait_until(
            pilot,
            lambda: palette_rows(app) and "/list-agents" in palette_rows(app)[0],
            timeout=PALETTE_WAIT,
        )
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: "Agent relay is unavailable" in transcript_text(app),
            timeout=PALETTE_WAIT,
        )
        assert "› /list-agents" in transcript_text(app)
        assert fake.chat_bodies == []


async def test_a_palette_command_that_needs_a_value_waits_in_the_prompt(
    fake, make_config, app_factory
):
    app = app_factory(make_config(env={"ZCODER_RELAY": "off"}))
    async with app.run_test(size=SIZE) as pilot:
        app.prompt_input.load_text("a draft")
        await open_palette(pilot, app, "rename")
        await wait_until(
            pilot,
            lambda: palette_rows(app) and "/rename" in palette_rows(app)[0],
            timeout=PALETTE_WAIT,
        )
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.prompt_input.text == "/rename ", timeout=PALETTE_WAIT)
        assert app.focused is app.prompt_input
        assert "a draft" in app.prompt_input.habits.entries


def test_help_rows_wrap_under_their_description_or_under_their_form() -> None:
    from rich.console import Console
    from rich.text import Text

    from zcoder.tui.widgets.help_view import NARROW_DESCRIPTION, UNDER_INDENT, HangingRows

    text = Text(
        "Keys:\n"
        "  Ctrl+C            clear the draft; else stop the turn or close the dialog, "
        "and again quit\n"
        "  Up, Down          earlier prompts"
    )

    def rows(width: int) -> list[str]:
        console = Console(width=width, color_system=None)
        with console.capture() as capture:
            console.print(HangingRows(text))
        return [row.rstrip() for row in capture.get().splitlines()]

    wide = rows(60)  # the descriptions' column is 42 wide: they wrap inside it
    assert wide[0] == "Keys:"
    assert wide[1].startswith("  Ctrl+C            clear the draft;")
    assert all(row.startswith(" " * 20) for row in wide[2:-1])
    assert wide[-1] == "  Up, Down          earlier prompts"
    narrow = rows(20 + NARROW_DESCRIPTION - 1)  # too narrow: under the form, indented
    assert narrow[1] == "  Ctrl+C"
    assert narrow[2].startswith(" " * UNDER_INDENT + "clear")
    assert all(row.startswith(" " * UNDER_INDENT) for row in narrow[2:-2])
    assert narrow[-2:] == ["  Up, Down", " " * UNDER_INDENT + "earlier prompts"]
