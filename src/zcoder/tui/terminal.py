"""Terminal input as real terminals send it: fixes to Textual's key parser, and tmux.

Textual 8.2.8's ``XTermParser`` (kept pinned) gets three things wrong that a chat prompt
cannot live with; ``ZcoderParser`` sits in front of it and handles exactly these, passing
every other byte through unchanged and in order:

* **xterm modifyOtherKeys** ``CSI 27;<mod>;<code>~``, what xterm and tmux 3.5+ send for
  Shift+Enter (``CSI 27;2;13~``): Textual makes a bogus ``shift+\\r`` of it. Here it is the
  key with its modifiers (``shift+enter``, ``ctrl+tab``, ``A``...).
* **ESC CR** (and ESC LF), Alt+Enter in every terminal and in tmux: Textual reads plain
  ``enter`` and drops the Alt (Textual issue 6378, fixes unmerged). Here it is ``alt+enter``.
  A lone ESC is still ``escape`` after Textual's ESCDELAY.
* **Bracketed paste**: Textual stops collecting paste text at the first ESC inside it and
  replays the rest as key presses, so a pasted CR submits half the paste (no upstream issue
  found for it). Here everything between ``ESC[200~`` and ``ESC[201~`` is paste data, ESC
  bytes included, however the terminal splits it across reads.

``ZcoderDriver`` is Textual's Linux driver with this parser. It hands every widget a paste
as ``paste_text`` makes it (LF line breaks, controls and ESC as visible escapes): a paste
reaches whichever widget has focus (the command palette's input too), and raw ESC bytes
there would be drawn to the terminal as escape sequences. It also asks the terminal for
modifyOtherKeys (xterm's ``CSI > 4;1 m``; terminals that speak the kitty protocol Textual
asks for use that instead) and, inside tmux, turns on tmux's ``extended-keys`` server
option (zcoder.tui.state.tmux_keys), so Shift+Enter reaches zcoder as something other than
Enter. That option is the whole tmux server's: the value found is restored when the last
zcoder of that server leaves, on every exit path that runs Python code (normal exit,
exception, SIGTERM/SIGHUP via the app, Ctrl+Z suspend).
"""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import signal
import threading
import time
from codecs import getincrementaldecoder
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Final

from textual import constants, events
from textual._time import get_time
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver
from textual.keys import _character_to_key
from textual.message import Message

from zcoder import early_keys
from zcoder.tui.state.tmux_keys import TmuxExtendedKeys
from zcoder.tui.widgets.shared import screen_safe

if TYPE_CHECKING:
    from textual.app import App

PASTE_START: Final = "\x1b[200~"
PASTE_END: Final = "\x1b[201~"
# CSI 27 ; modifiers ; code ~  (xterm's modifyOtherKeys form); and every prefix of it, so a
# sequence split across reads is held until it is complete. Numbers are bounded.
_MODIFY_OTHER_KEYS: Final = re.compile(r"\x1b\[27;(\d{1,3});(\d{1,7})~")
_MODIFY_OTHER_KEYS_PREFIX: Final = re.compile(r"\x1b(?:\[(?:2(?:7(?:;\d{0,3}(?:;\d{0,7})?)?)?)?)?")
# Keys by code point in modifyOtherKeys; anything else printable is its own character.
_NAMED_CODES: Final = {
    13: "enter",
    10: "enter",
    9: "tab",
    27: "escape",
    127: "backspace",
    8: "backspace",
}
# Modifier bits after subtracting 1, as xterm and the kitty protocol number them (Textual's
# names: kitty calls bit 8 "super", xterm "meta").
_MODIFIER_BITS: Final = ((2, "alt"), (4, "ctrl"), (8, "super"), (16, "hyper"), (32, "meta"))

# xterm's modifyOtherKeys, mode 1: modified keys that would otherwise be ambiguous
# (Shift+Enter...) are reported; tmux asks for nothing more than this either.
MODIFY_OTHER_KEYS_ON: Final = "\x1b[>4;1m"
MODIFY_OTHER_KEYS_RESET: Final = "\x1b[>4m"


def modified_key(modifiers: int, code: int) -> events.Key | None:
    """The key of ``CSI 27;modifiers;code~``; None when the code is no character."""
    if not 0 < code <= 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return None
    bits = max(modifiers - 1, 0)
    shift = bool(bits & 1)
    others = [name for bit, name in _MODIFIER_BITS if bits & bit]
    named = _NAMED_CODES.get(code)
    if named is not None:
        tokens = sorted(others + (["shift"] if shift else []))
        if not tokens:
            return events.Key(named, "\r" if named == "enter" else chr(code))
        return events.Key("+".join([*tokens, named]), None)
    char = chr(code)
    if not char.isprintable():
        return None
    if shift and char.islower():
        char = char.upper()  # tmux reports Shift+a as code 97 with shift
    if not others:
        # Shift alone (or nothing): the character typed, inserted as text.
        name = char if char.isalnum() else _character_to_key(char)
        return events.Key(name, char)
    base = char.lower() if shift else char
    name = base if base.isalnum() else _character_to_key(base)
    tokens = sorted(others + (["shift"] if shift else []))
    return events.Key("+".join([*tokens, name]), None)


class ZcoderParser(XTermParser):
    """Textual's parser with modifyOtherKeys, Alt+Enter and whole bracketed pastes.

    ``feed`` looks at each ESC: a sequence handled here becomes its event; a prefix of one
    at the end of a read is held (at most ESCDELAY, see ``tick``); anything else goes to
    Textual's parser as it came. Events keep the order of the bytes.
    """

    def __init__(self, debug: bool = False) -> None:
        super().__init__(debug)
        self._held = ""  # the start of a sequence handled here, split across reads
        self._held_at = 0.0
        self._paste: list[str] | None = None  # inside a bracketed paste: its text so far

    def feed(self, data: str) -> Iterable[Message]:
        if not data:  # end of input: nothing more can complete what is held
            return list(self._at_end())
        return list(self._scan(data))

    def tick(self) -> Iterable[Message]:
        """Release a held prefix once ESCDELAY has passed with nothing after it."""
        found: list[Message] = []
        waited = get_time() - self._held_at
        if self._held and self._paste is None and waited >= constants.ESCAPE_DELAY:
            held, self._held = self._held, ""
            found += super().feed(held)
            found += self._flush_base()  # it waited here already: no second delay
        found += super().tick()
        return found

    def _at_end(self) -> Iterator[Message]:
        if self._paste is not None:
            yield events.Paste("".join(self._paste) + self._held)
            self._paste, self._held = None, ""
        elif self._held:
            held, self._held = self._held, ""
            yield from super().feed(held)
        yield from super().feed("")

    def _flush_base(self) -> Iterable[Message]:
        """What Textual's parser holds (a partial escape sequence), as it would time out."""
        if self._timeout_time is None:
            return ()
        self._timeout_time = 0.0
        return super().tick()

    def _scan(self, data: str) -> Iterator[Message]:
        text, self._held = self._held + data, ""
        position, size = 0, len(text)
        while position < size:
            if self._paste is not None:
                position, pasted = self._take_paste(text, position)
                if pasted is not None:
                    yield events.Paste(pasted)
                continue
            escape = text.find("\x1b", position)
            if escape == -1:
                yield from super().feed(text[position:])
                return
            if escape > position:
                yield from super().feed(text[position:escape])
            position = escape
            if PASTE_START.startswith(text[position : position + len(PASTE_START)]):
                if size - position < len(PASTE_START):
                    self._hold(text[position:])
                    return
                yield from self._flush_base()
                self._paste = []
                position += len(PASTE_START)
                continue
            key, length = self._key_at(text, position)
            if length == 0:  # a prefix of a sequence handled here, cut by the read
                self._hold(text[position:])
                return
            if key is not None:
                yield from self._flush_base()
                yield key
                position += length
                continue
            # Not one of ours: Textual's parser reads it from this ESC on.
            yield from super().feed(text[position])
            position += 1

    def _hold(self, prefix: str) -> None:
        self._held = prefix
        self._held_at = get_time()

    def _take_paste(self, text: str, position: int) -> tuple[int, str | None]:
        """Collect paste text from ``position``: where the scan goes on, and the whole
        paste once its end marker came."""
        assert self._paste is not None
        end = text.find(PASTE_END, position)
        if end != -1:
            self._paste.append(text[position:end])
            pasted, self._paste = "".join(self._paste), None
            return end + len(PASTE_END), pasted
        # Keep a possible start of the end marker for the next read.
        keep = 0
        for length in range(min(len(PASTE_END) - 1, len(text) - position), 0, -1):
            if PASTE_END.startswith(text[len(text) - length :]):
                keep = length
                break
        self._paste.append(text[position : len(text) - keep])
        self._held = text[len(text) - keep :]
        return len(text), None

    def _key_at(self, text: str, position: int) -> tuple[events.Key | None, int]:
        """The key of the sequence at ``position`` (an ESC) and its length; (None, 0) for
        a prefix of one cut by the end of the text; (None, -1) when it is not ours."""
        following = text[position + 1 : position + 2]
        if following in ("\r", "\n"):
            return events.Key("alt+enter", None), 2
        match = _MODIFY_OTHER_KEYS.match(text, position)
        if match is not None:
            key = modified_key(int(match[1]), int(match[2]))
            return (key, match.end() - position) if key is not None else (None, -1)
        prefix = _MODIFY_OTHER_KEYS_PREFIX.match(text, position)
        if prefix is not None and prefix.end() == len(text):
            return None, 0
        return None, -1


# -- the driver ---------------------------------------------------------------------------

KEYS_WANTED_SECONDS: Final = 30.0
"""The driver reads the terminal once the app can take keys, or after this long at most
(an app whose screen never says so still gets its keys)."""


def paste_text(text: str) -> str:
    """Pasted text as a widget gets it: LF line breaks, controls and ESC made visible
    (``\\e``, ``\\x07``: ``screen_safe``), tabs kept. Idempotent."""
    return screen_safe(text.replace("\r\n", "\n").replace("\r", "\n"))


class ZcoderDriver(LinuxDriver):
    """Textual's Linux driver reading keys with ``ZcoderParser``; modifyOtherKeys and
    tmux's extended keys on while the app runs."""

    def __init__(
        self,
        app: App[Any],
        *,
        debug: bool = False,
        mouse: bool = True,
        size: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(app, debug=debug, mouse=mouse, size=size)
        self.tmux_keys = TmuxExtendedKeys()
        self.keys_wanted = threading.Event()  # set once the prompt has the focus

    def start_application_mode(self) -> None:
        self.tmux_keys.enable()  # before tmux sees the request below
        super().start_application_mode()  # type: ignore[no-untyped-call]
        if (before := early_keys.original()) is not None:
            self.attrs_before = before  # the shell's settings, not those of the start-up
        self.write(MODIFY_OTHER_KEYS_ON)
        self.flush()

    def stop_application_mode(self) -> None:
        self.write(MODIFY_OTHER_KEYS_RESET)
        try:
            super().stop_application_mode()
        finally:
            self.tmux_keys.restore()

    def process_message(self, message: Message) -> None:
        if isinstance(message, events.Paste):
            message = events.Paste(paste_text(message.text))
        super().process_message(message)

    def take_keys(self) -> None:
        """The prompt has the focus: read the terminal from now on (thread-safe)."""
        self.keys_wanted.set()

    def run_input_thread(self) -> None:
        """Read the terminal until the driver stops; every event goes to the app.

        Nothing is read before the app can take keys (``take_keys``, at most
        KEYS_WANTED_SECONDS): keys typed earlier wait in the terminal, in order, and then
        reach the prompt (Textual's own driver read them at once, and keys that came
        before the prompt had the focus were lost)."""
        deadline = time.monotonic() + KEYS_WANTED_SECONDS
        while not self.keys_wanted.wait(0.1):
            if self.exit_event.is_set() or time.monotonic() > deadline:
                break
        parser = ZcoderParser(self._debug)
        decode = getincrementaldecoder("utf-8")(errors="replace").decode
        with selectors.SelectSelector() as selector:
            selector.register(self.fileno, selectors.EVENT_READ)
            try:
                while not self.exit_event.is_set():
                    self._read_ready(selector, parser, decode, final=False)
                selector.unregister(self.fileno)
            finally:
                with contextlib.suppress(Exception):
                    for message in parser.feed(""):
                        self.process_message(message)

    def _read_ready(
        self,
        selector: selectors.BaseSelector,
        parser: ZcoderParser,
        decode: Callable[[bytes, bool], str],
        *,
        final: bool,
    ) -> None:
        for _key, mask in selector.select(0.1):
            if mask & selectors.EVENT_READ:
                try:
                    raw = os.read(self.fileno, 64 * 1024)
                except OSError:
                    raw = b""  # EIO: the terminal is gone
                if not raw:
                    # End of file on a terminal in raw mode is a hang-up (the window closed,
                    # tmux killed the pane): leave as on SIGHUP, which the app handles.
                    self.exit_event.set()
                    os.kill(os.getpid(), signal.SIGHUP)
                    return
                data = decode(raw, final)
                if data:
                    for message in parser.feed(data):
                        self.process_message(message)
        for message in parser.tick():
            self.process_message(message)
