"""``@path`` in a prompt: the file's text (or a directory's listing) goes to the model with
that prompt; the user's own words stay as typed (the ledger, the title, the transcript).

Confined as every tool is (zcoder.tools.confinement): a path resolves, symlinks followed,
inside the workspace or it is refused (``@../../etc/passwd``, ``@/etc/shadow``, a link out);
only a regular file is read, opened without following links and without blocking (a
device, a FIFO or a socket is refused); a binary or non-UTF-8 file is refused. What is
attached is bounded: a file to ``MAX_FILE_BYTES``, all of a prompt's attachments to
``MAX_TOTAL_BYTES`` and to ``WINDOW_SHARE`` of the context window; what is cut is said. A
mention that names nothing stays in the prompt as typed, with a notice.

An image is attached as an image, not as text: ``@shot.png`` whose bytes are a PNG, JPEG,
GIF or WebP, and the paths to images the prompt names without ``@``
(zcoder.agent.image_attach). Whether the model is sent it, and for how long, is the
agent's ImageBook's (zcoder.agent.image_book): the text says ``[image: shot.png, 640x480]``
where it was attached.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from zcoder.agent.image_attach import (
    DEFAULT_IMAGE_MAX_BYTES,
    ImageFile,
    find_image_paths,
    image_at,
    read_image,
)
from zcoder.agent.mentions import Mention, find_mentions
from zcoder.base.images import IMAGE_SUFFIXES
from zcoder.base.plural import byte_size, counted
from zcoder.base.sanitize import visible
from zcoder.model.tokens import estimate_tokens
from zcoder.model.types import user_message
from zcoder.tools.confinement import (
    ConfinedPath,
    ConfinementError,
    open_read,
    read_limited,
    resolve_path,
)
from zcoder.tools.files import decode_text, list_directory
from zcoder.tools.freshness import FreshnessBook

if TYPE_CHECKING:
    from zcoder.agent.image_book import ImageBook
    from zcoder.agent.recorder import Recorder
    from zcoder.model import Message

MAX_FILE_BYTES: Final = 64 * 1024
"""The most of one file a prompt attaches; the rest is cut, with a notice."""
MAX_TOTAL_BYTES: Final = 128 * 1024
"""The most all of one prompt's attachments hold together."""
WINDOW_SHARE: Final = 0.5
"""A prompt's attachments take at most this share of the context window (in tokens)."""
MAX_MENTIONS: Final = 20
"""More ``@path`` mentions than this in one prompt are left as typed."""
MAX_IMAGES: Final = 5
"""The most images one prompt attaches; the rest are said and left out."""
MAX_LISTED: Final = 200
"""Entries of an attached directory's listing."""
ATTACHED: Final = "\n\n[zcoder] Attached by the user with @:\n\n"
"""Between a prompt as typed and its attachments in the message the model is sent."""


def is_sent_prompt(content: object, typed: str) -> bool:
    """Whether a user message's ``content`` is the prompt ``typed`` as it was sent: as
    typed, or with its attachments after it (/rewind finds a prompt's place so)."""
    return isinstance(content, str) and (content == typed or content.startswith(typed + ATTACHED))


@dataclass(frozen=True)
class Attached:
    """One attachment: the workspace-relative path, what the model gets, and its size."""

    display: str
    body: str
    size: int  # the file's bytes (a directory: its entries listed)
    lines: int
    directory: bool = False
    cut: bool = False
    data: bytes | None = None  # a whole file's bytes, for the freshness book

    def shown(self) -> str:
        """The transcript's line: ``📎 src/app.py (3.2 KiB, 120 lines)``."""
        if self.directory:
            what = counted(self.lines, "entry", "entries")
            what += ", cut to fit" if self.cut else ""
        elif self.cut:
            what = f"{byte_size(self.size)}, its first {counted(self.lines, 'line')}"
        else:
            what = f"{byte_size(self.size)}, {counted(self.lines, 'line')}"
        return f"📎 {visible(self.display)}{'/' if self.directory else ''} ({what})"

    def for_model(self) -> str:
        kind = "directory" if self.directory else "file"
        cut = ' cut="true"' if self.cut else ""
        return f'<{kind} path="{self.display}"{cut}>\n{self.body.rstrip()}\n</{kind}>'


@dataclass
class Attachments:
    """What ``@path`` mentions in one prompt attached, and what the user is told."""

    items: list[Attached] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    images: list[ImageFile] = field(default_factory=list)

    def prompt(self, typed: str, image_tags: Sequence[str] = ()) -> str:
        """What the model is sent: the prompt as typed, then each attachment (an image by
        its tag, ImageBook's)."""
        blocks = [*(item.for_model() for item in self.items), *image_tags]
        if not blocks:
            return typed
        return f"{typed}{ATTACHED}" + "\n\n".join(blocks)

    def add_image(self, image: ImageFile) -> None:
        if any(image.display == kept.display for kept in self.images):
            return
        if len(self.images) >= MAX_IMAGES:
            self.notices.append(
                f"{visible(image.display)} was not attached: a prompt attaches at most "
                f"{MAX_IMAGES} images"
            )
            return
        self.images.append(image)


class _Budget:
    def __init__(self, window: int | None, image_limit: int) -> None:
        self.bytes = MAX_TOTAL_BYTES
        self.tokens = int(window * WINDOW_SHARE) if window else None
        self.image_limit = image_limit

    def fit(self, text: str) -> tuple[str, bool]:
        """``text`` as much of it as is left room for (cut at a line's end), and if cut."""
        keep = len(text.encode())
        keep = min(keep, self.bytes)
        if self.tokens is not None:
            tokens = estimate_tokens(text)
            if tokens > self.tokens:
                keep = min(keep, int(len(text.encode()) * self.tokens / max(tokens, 1)))
        cut = keep < len(text.encode())
        if cut:
            head = text.encode()[:keep].decode("utf-8", errors="ignore")
            text = head[: head.rfind("\n") + 1] if "\n" in head else head
        self.bytes -= len(text.encode())
        if self.tokens is not None:
            self.tokens -= estimate_tokens(text)
        return text, cut

    @property
    def spent(self) -> bool:
        return self.bytes <= 0 or (self.tokens is not None and self.tokens <= 0)


def _directory(target: ConfinedPath, budget: _Budget) -> Attached:
    lines, more = list_directory(target, MAX_LISTED)
    listing = "\n".join(lines) + (f"\n… more entries (first {MAX_LISTED} shown)" if more else "")
    body, cut = budget.fit(listing or "(empty directory)")
    return Attached(target.display, body, len(lines), len(lines), directory=True, cut=cut or more)


def _file(target: ConfinedPath, budget: _Budget) -> Attached | ImageFile:
    with open_read(target) as handle:
        size = os.fstat(handle.fileno()).st_size
        data = read_limited(handle, MAX_FILE_BYTES + 1)
        image = read_image(handle, data, target.display, budget.image_limit)
        if image is not None:
            return image
    whole = len(data) <= MAX_FILE_BYTES and size <= MAX_FILE_BYTES
    head = data[:MAX_FILE_BYTES]
    if not whole:  # cut at the last whole line, never inside a character
        head = head[: head.rfind(b"\n") + 1] or head
    text = decode_text(head, target.display) if whole else _decode_head(head, target.display)
    body, cut = budget.fit(text)
    lines = body.count("\n") + (0 if body.endswith("\n") or not body else 1)
    return Attached(
        target.display,
        body,
        max(size, len(data)),
        lines,
        cut=cut or not whole,
        data=data if whole and not cut else None,
    )


def _decode_head(head: bytes, display: str) -> str:
    try:
        return decode_text(head, display)
    except ConfinementError:
        if b"\x00" in head:
            raise
        return head.decode("utf-8", errors="ignore")  # cut inside a character


def _one(workspace: Path, mention: Mention, budget: _Budget) -> Attached | ImageFile | str:
    """The attachment ``mention`` names, or why there is none (a notice)."""
    shown = visible(mention.typed)
    target: ConfinedPath | None = None
    for raw in mention.paths:
        try:
            candidate = resolve_path(workspace, raw)
        except ConfinementError:
            return f"@{shown} was not attached: it is outside the workspace"
        if os.path.lexists(candidate.absolute):
            target = candidate
            break
    if target is None:
        return f"@{shown} was not attached: there is no such file in the workspace"
    if budget.spent:
        return f"@{shown} was not attached: the prompt's attachments are at their limit"
    try:
        if os.path.isdir(target.absolute):
            return _directory(target, budget)
        return _file(target, budget)
    except ConfinementError as exc:
        return f"@{shown} was not attached: {visible(str(exc))}"
    except OSError as exc:
        return f"@{shown} was not attached: {visible(exc.strerror or str(exc))}"


def might_attach(text: str) -> bool:
    """Whether ``text`` may attach anything: a cheap look before the file system's."""
    lowered = text.lower()
    return "@" in text or "file://" in lowered or any(s in lowered for s in IMAGE_SUFFIXES)


def attach(
    text: str, workspace: Path, *, window: int | None, image_limit: int = DEFAULT_IMAGE_MAX_BYTES
) -> Attachments:
    """The attachments the ``@path`` mentions of ``text`` name, and the images its paths
    name (blocking: run it in a thread). ``window``: the context window in tokens, None
    when unknown; ``image_limit``: the most bytes of one image."""
    result = Attachments()
    budget = _Budget(window, image_limit)
    seen: set[str] = set()
    mentions = find_mentions(text)
    for mention in mentions[:MAX_MENTIONS]:
        got = _one(workspace, mention, budget)
        if isinstance(got, str):
            result.notices.append(got)
            continue
        if isinstance(got, ImageFile):
            result.add_image(got)
            continue
        if got.display in seen:
            continue
        seen.add(got.display)
        result.items.append(got)
        if got.cut:
            limit = "the attachment limit" if got.directory else "the attachment limits"
            result.notices.append(f"{visible(got.display)} was cut to fit {limit}")
    if len(mentions) > MAX_MENTIONS:
        result.notices.append(
            f"only the first {MAX_MENTIONS} @ mentions were attached; the rest stay as typed"
        )
    for candidate in find_image_paths(text)[: MAX_IMAGES * 2]:
        found = image_at(workspace, candidate, image_limit)
        if isinstance(found, ImageFile):
            result.add_image(found)
        elif found is not None:
            result.notices.append(found)
    return result


async def with_attachments(
    typed: str,
    workspace: Path,
    *,
    window: int | None,
    recorder: Recorder,
    seen: FreshnessBook,
    images: ImageBook,
) -> Message:
    """The user message the model is sent for the prompt ``typed``: it with what its
    ``@path`` mentions attach, and the images it names (``images`` decides whether the
    model gets them, and keeps them). Each attachment and each refusal is shown (and
    saved) as a notice; a whole file attached counts as read for the freshness check of
    later edits."""
    given, images.offered = images.offered, []
    if not (given or might_attach(typed)):
        return user_message(typed)
    attached = Attachments()
    if might_attach(typed):
        attached = await asyncio.to_thread(
            attach, typed, workspace, window=window, image_limit=images.limit
        )
    for image in given:
        attached.add_image(image)
    for item in attached.items:
        recorder.notice(item.shown())
        if item.data is not None:
            seen.saw(item.display, item.data)
    for notice in attached.notices:
        recorder.notice(notice)
    tags, refs = await images.take(attached.images, recorder)
    message = user_message(attached.prompt(typed, tags))
    images.mark(message, refs)
    return message
