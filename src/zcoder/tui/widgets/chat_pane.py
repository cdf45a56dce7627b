"""The conversation column: the transcript (and its follow hint), the queued prompts, the
prompt, and the worker of the turn that runs.

The pane owns these widgets and the turn's worker: a turn runs on the pane, and the pane
says when it starts and ends (``TurnStarted``, ``ChatPane.TurnEnded``; Textual's way:
children post messages up). What runs next, and what the header and the relay say about
it, is the main screen's to decide (tui/main_screen.py, the scheduler in
tui/state/scheduler.py): the pane never calls the screen.
Keys of the prompt that are the conversation's own (scrolling the transcript from the
prompt) stay here.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Final

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.worker import Worker, WorkerState

from zcoder.model.errors import first_clause
from zcoder.tui.messages import ShowEntry, ShowNotice, TurnStarted
from zcoder.tui.widgets.prompt import HINT, TURN_HINT, PromptInput
from zcoder.tui.widgets.queued import QueuedPrompts
from zcoder.tui.widgets.transcript import Entry, Transcript, error_text, system_text

__all__ = ["ChatPane"]

_RUNNING: Final = (WorkerState.PENDING, WorkerState.RUNNING)
_ENDED: Final = (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED)


class ChatPane(Vertical):
    class TurnEnded(Message):
        """The turn's worker ended (done, failed or stopped); ``worker`` says how."""

        def __init__(self, worker: Worker[Any]) -> None:
            super().__init__()
            self.worker = worker

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.transcript = Transcript(id="transcript")
        self.prompt_input = PromptInput(id="prompt", soft_wrap=True, show_line_numbers=False)
        self.prompt_input.typing_hook = self.transcript.note_typing
        self.queued_prompts = QueuedPrompts(id="queued")
        self.turn: Worker[Any] | None = None
        """The turn's worker, from its start until the app has handled its end."""
        self._deferred: list[Entry] | None = []
        self._last_error: Entry | None = None

    def compose(self) -> ComposeResult:
        yield self.transcript
        yield self.transcript.hint
        yield self.queued_prompts
        yield self.prompt_input

    # -- the transcript: what the parts say (tui/messages.py) lands here -----------------

    def show(self, entry: Entry) -> Entry:
        if self._deferred is not None:
            self._deferred.append(entry)  # start-up: shown after the session's transcript
            return entry
        return self.transcript.add(self._not_again(entry))

    def _not_again(self, entry: Entry) -> Entry:
        """``entry``, or, for an error the same as the last one still shown with no reply
        between (a server found down at start-up, still down at the first turn), its
        first clause only: a long message with its advice is shown once."""
        if entry.role == "assistant":
            self._last_error = None
        if entry.role != "error":
            return entry
        last = self._last_error
        if last is not None and last.plain == entry.plain and last.is_attached:
            said = first_clause(entry.plain.removeprefix("error: "))
            return Entry("error", error_text(f"{said} (still; see above)"))
        self._last_error = entry
        return entry

    def show_deferred_after(self, first: Callable[[], object]) -> None:
        """Entries shown during start-up (``show``) were held; they are shown once
        ``first`` has run (it opens the session, whose transcript they follow)."""
        held, self._deferred = self._deferred or [], None
        first()
        for entry in held:
            self.show(entry)

    def notice(self, text: str) -> None:
        self.show(Entry("system", system_text(text)))

    def error(self, text: str) -> None:
        self.show(Entry("error", error_text(text)))

    def on_show_notice(self, message: ShowNotice) -> None:
        message.stop()
        (self.error if message.error else self.notice)(message.text)

    def on_show_entry(self, message: ShowEntry) -> None:
        message.stop()
        self.show(message.entry)

    # -- the turn -------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self.turn is not None and self.turn.state in _RUNNING

    def start_turn(
        self, work: Callable[[], Coroutine[Any, Any, object]], *, steers: bool = True
    ) -> None:
        """Run ``work`` as the turn. Given a coroutine function, never a coroutine: a
        worker cancelled before it starts (the app quitting) leaves none unawaited.
        ``steers``: Enter steers it (the prompt's hint says so)."""
        self.turn = self.run_worker(work, group="turn", exit_on_error=False)
        self._turn_hint(running=steers)
        self.post_message(TurnStarted())

    def stop_turn(self) -> bool:
        """Cancel the running turn; whether one was running."""
        if self.turn is None or not self.busy:
            return False
        self.turn.cancel()
        return True

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self.turn:
            return
        event.stop()
        if event.state in _ENDED:
            self._turn_hint(running=False)
            self.post_message(self.TurnEnded(event.worker))

    def _turn_hint(self, *, running: bool) -> None:
        """The prompt's hint says what Enter does: steer while a turn runs."""
        prompt = self.prompt_input
        prompt.turn_running = running
        if prompt.border_subtitle in (HINT, TURN_HINT):  # not a search's or Tab's line
            prompt.refresh_hint()

    def on_prompt_input_scroll_transcript(self, message: PromptInput.ScrollTranscript) -> None:
        message.stop()
        self.transcript.scroll_by(pages=message.pages, lines=message.lines)

    def prefill(self, text: str) -> str:
        """``text`` in the prompt to finish typing, the cursor at its end, the focus on it;
        returns the draft it replaced ("" if none), for the history."""
        prompt = self.prompt_input
        draft = prompt.take_draft()
        prompt.load_text(text)
        prompt.move_cursor(prompt.document.end)
        prompt.focus()
        return draft
