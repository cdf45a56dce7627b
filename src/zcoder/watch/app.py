"""``zcoder agents --watch``: every live zcoder on this machine, as it changes.

One table: name, what it does and for how long, how many messages wait there, the last
receipt it got, workspace (a narrow terminal shows fewer: zcoder.watch.rows); the agents
waiting for their user come first. A thread follows the registry (zcoder.relay.follow:
inotify on the directory, a discovery with its pings on each change, and a slow refresh
besides) and posts each result here. Enter goes to the chosen agent's tmux pane (zcoder.watch.tmux);
q quits. It publishes nothing and creates nothing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, Static

from zcoder.base.sanitize import visible
from zcoder.relay import DiscoveryResult, follow
from zcoder.watch.rows import Row, fit_columns, watch_rows
from zcoder.watch.tmux import go_to_pane

HELP = "Enter: go to its tmux pane · q: quit"


class AgentsWatch(App[int]):
    """The live view; ``registry`` is the relay's directory, ``env`` where tmux is told."""

    TITLE = "zcoder agents"
    CSS = """
    #heading { height: 1; color: $text-muted; }
    DataTable { height: 1fr; }
    #said { height: auto; max-height: 3; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("escape", "quit", "Quit", show=False),
    ]

    class Peers(Message):
        """A discovery's result, posted from the following thread."""

        def __init__(self, result: DiscoveryResult) -> None:
            super().__init__()
            self.result = result

    def __init__(self, registry: Path, *, io_timeout: float, env: Mapping[str, str]) -> None:
        super().__init__()
        self.registry = registry
        self.io_timeout = io_timeout
        self.env = dict(env)
        self.rows: list[Row] = []
        self.columns: tuple[str, ...] = ()  # those shown (fewer in a narrow terminal)
        self._stopped = threading.Event()
        self._said = False  # the user was told something: not overwritten by a count

    def compose(self) -> ComposeResult:
        yield Static(f"zcoder agents · {HELP}", id="heading", markup=False)
        yield DataTable(cursor_type="row", id="agents")
        yield Static("Looking for agents…", id="said", markup=False)

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one("#agents", DataTable)

    def say(self, text: str) -> None:
        self.query_one("#said", Static).update(Text(text))

    def on_mount(self) -> None:
        self.table.focus()
        threading.Thread(
            target=follow,
            kwargs={
                "registry": self.registry,
                "io_timeout": self.io_timeout,
                "show": lambda result: self.post_message(self.Peers(result)),
                "stopped": self._stopped,
            },
            name="zcoder-agents-watch",
            daemon=True,  # q quits at once, whatever discovery is doing
        ).start()

    def on_unmount(self) -> None:
        self._stopped.set()

    def on_agents_watch_peers(self, message: Peers) -> None:
        table = self.table
        chosen = self.rows[table.cursor_row].instance_id if self.rows else None
        columns, self.rows = fit_columns(watch_rows(message.result.peers), self.size.width)
        table.clear(columns=columns != self.columns)
        if columns != self.columns:
            self.columns = columns
            table.add_columns(*columns)
        for row in self.rows:
            style = "bold" if row.waiting else ""
            cells = (Text(cell, style=style) for cell in row.shown(columns))
            table.add_row(*cells, key=row.instance_id)
        # The cursor stays on the agent it was on, unless another waits for its user and
        # this one does not: then it goes to the top, where those waiting are.
        where = {row.instance_id: n for n, row in enumerate(self.rows)}
        kept = where.get(chosen or "")
        if kept is not None and (self.rows[kept].waiting or not self.rows[0].waiting):
            table.move_cursor(row=kept)
        if message.result.error:
            self.say(f"The relay's directory cannot be read: {visible(message.result.error)}")
        elif not self.rows:
            self.say("No zcoder is running on this machine.")
        elif not self._said:
            self.say(f"{len(self.rows)} running.")

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if 0 <= event.cursor_row < len(self.rows):
            self._said = True
            self.say(go_to_pane(self.rows[event.cursor_row], self.env))


def run_watch(registry: Path, io_timeout: float) -> int:
    """Show the view until q; 0."""
    AgentsWatch(registry, io_timeout=io_timeout, env=os.environ).run()
    return 0
