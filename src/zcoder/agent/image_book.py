"""The images of a conversation: whether the model takes them, where their bytes are kept,
and which requests carry them.

Whether the model takes images is asked of the server once per model (``VisionProbe``:
Ollama's ``/api/show`` capabilities, llama.cpp's ``/props`` modalities), unless
``ZCODER_VISION`` says (``on``: send them whatever the server says; ``off``: never). A
model that does not take them, or a server that does not say, gets none: the user is told
why and how to override it, and the model reads ``[image: shot.png, 640x480, not sent: ...]``
where the image was named.

The history keeps a reference, not the bytes: the user message an image was attached to
holds ``IMAGES_KEY`` (the prompt's number in the ledger and, per image, its SHA-256, type,
name and size) and ``[image: shot.png, 640x480]`` in its text. The bytes are kept once,
under ``$ZCODER_HOME/images/<sha256>`` (0600, written whole, fsynced, renamed: the edit
journal's way, so the session store does not grow by megabytes on every save), and in
memory while they are sent. A request carries an image (Ollama's ``images``, turned into
an ``image_url`` part for an OpenAI-compatible server) with the prompt it was attached to
and the next ``RESEND_PROMPTS`` prompts; after that its tag reads ``not resent`` and its
bytes go no more: an image costs hundreds of tokens of the window on every request, and
dropping it changes the request's beginning once, not at every turn. A resumed session
reads the bytes back from disk; an image no longer there reads ``no longer kept``.

An image not used for ``KEEP_DAYS`` (not attached, sent or read back: each use renews its
file's time) is removed the next time one is kept: past its few prompts only a rewind or
a fork to that prompt would send it again.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import logging
import os
import re
import secrets
import stat
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from zcoder.agent.image_attach import DEFAULT_IMAGE_MAX_BYTES, ImageFile
from zcoder.base.images import sniff_image
from zcoder.base.safefile import UnsafeFile, ensure_private_dir, read_own_file, replace_with
from zcoder.model.errors import ModelError
from zcoder.model.protocol import VisionProbe

if TYPE_CHECKING:
    from zcoder.agent.recorder import Recorder
    from zcoder.agent.settings import AgentSettings
    from zcoder.model import Message

log = logging.getLogger(__name__)

__all__ = [
    "IMAGES_DIR_NAME",
    "IMAGES_KEY",
    "KEEP_DAYS",
    "RESEND_PROMPTS",
    "ImageBook",
    "image_tag",
    "prune_images",
]

IMAGES_KEY: Final = "zcoder_images"
"""The key of a user message that holds the references of its images (never sent)."""
IMAGES_DIR_NAME: Final = "images"
RESEND_PROMPTS: Final = 2
"""An image goes with its own prompt's requests and with those of this many prompts after."""
VISION_SETTING: Final = "ZCODER_VISION"
KEEP_DAYS: Final = 30
"""An image unused this long is removed from ``$ZCODER_HOME/images`` (``prune_images``)."""
_SHA: Final = re.compile(r"[0-9a-f]{64}")
_DAY: Final = 86400.0


def prune_images(directory: Path, *, now: float | None = None) -> int:
    """Remove the images of ``directory`` unused for KEEP_DAYS, and temporary files a
    killed write left a day ago; how many went. Only regular files named as zcoder names
    them (never a link, a directory or anything else put there)."""
    now = time.time() if now is None else now
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for entry in entries:
        name = entry.name
        if _SHA.fullmatch(name):
            age = KEEP_DAYS * _DAY
        elif name.startswith(".") and name.endswith(".tmp") and _SHA.fullmatch(name[1:65]):
            age = _DAY
        else:
            continue
        with contextlib.suppress(OSError):
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and info.st_mtime < now - age:
                os.unlink(entry.path)
                removed += 1
    return removed


def _renew(path: Path) -> None:
    """An image used now: its time starts again (``prune_images``)."""
    with contextlib.suppress(OSError):
        os.utime(path, follow_symlinks=False)


def image_tag(path: str, width: int, height: int, note: str = "") -> str:
    """``[image: shot.png, 640x480]``: where an image is in the text, as the model reads it."""
    size = f"{width}x{height}" if width and height else "size unknown"
    return f"[image: {path}, {size}{', ' + note if note else ''}]"


def _tag_of(ref: dict[str, Any], note: str = "") -> str:
    return image_tag(str(ref.get("path")), _int(ref.get("width")), _int(ref.get("height")), note)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _replace_last(text: str, old: str, new: str) -> str:
    at = text.rfind(old)
    return text if at < 0 else text[:at] + new + text[at + len(old) :]


class ImageBook:
    """One agent's images (see the module docstring). ``prompts`` counts the user's
    prompts so far (the ledger's length); ``home`` is where the bytes are kept (None:
    in memory only)."""

    def __init__(
        self,
        client: object,
        settings: AgentSettings,
        home: Path | None,
        prompts: Callable[[], int],
    ) -> None:
        self.client = client
        self.settings = settings
        self.directory = home / IMAGES_DIR_NAME if home is not None else None
        self.prompts = prompts
        self._encoded: dict[str, str] = {}  # sha256 → base64, for the images sent now
        self._vision: dict[str, bool | None] = {}  # model → what its server said
        self._pruned = False  # once per process's book, with the first image kept
        self.offered: list[ImageFile] = []
        """Images given with the next prompt besides those its text names (an editor's
        image blocks, zcoder.acp.prompts); that prompt takes them."""

    @property
    def limit(self) -> int:
        return self.settings.image_max_bytes or DEFAULT_IMAGE_MAX_BYTES

    # -- whether the model takes images -------------------------------------------------

    async def vision(self, model: str) -> tuple[bool, str]:
        """Whether ``model`` gets images, and if not, why, in words for the user."""
        override = self.settings.vision
        if override is not None:
            return override, "" if override else f"images are turned off ({VISION_SETTING}=off)"
        said = self._vision.get(model)
        if model not in self._vision and isinstance(self.client, VisionProbe):
            try:
                said = self._vision[model] = await self.client.vision_support(model)
            except ModelError as exc:  # asked again at the next image
                log.info("vision support of %s not known: %s", model, exc)
        if said:
            return True, ""
        if said is False:
            why = f"the server says {model} does not take images"
        else:
            why = f"the server does not say whether {model} takes images"
        return False, f"{why}; set {VISION_SETTING}=on to send images anyway"

    def _sends_now(self) -> bool:
        override = self.settings.vision
        if override is not None:
            return override
        return bool(self._vision.get(self.settings.model, True))

    # -- a prompt's images --------------------------------------------------------------

    async def take(
        self, images: Sequence[ImageFile], recorder: Recorder
    ) -> tuple[list[str], list[dict[str, Any]]]:
        """The tags a prompt's text gets for ``images`` and the references of those the
        model is sent; each is shown (and saved) as a notice, and kept."""
        tags: list[str] = []
        refs: list[dict[str, Any]] = []
        if not images:
            return tags, refs
        sends, why = await self.vision(self.settings.model)
        for image in images:
            info = image.info
            if not sends:
                recorder.notice(f"{image.shown()} was not sent: {why}")
                note = "not sent: the model does not take images"
                tags.append(image_tag(image.display, info.width, info.height, note))
                continue
            sha = hashlib.sha256(image.data).hexdigest()
            self._encoded[sha] = base64.b64encode(image.data).decode("ascii")
            await asyncio.to_thread(self._keep, sha, image.data)
            ref = {
                "sha256": sha,
                "mime": info.mime,
                "path": image.display,
                "width": info.width,
                "height": info.height,
                "bytes": len(image.data),
            }
            recorder.notice(image.shown())
            tags.append(_tag_of(ref))
            refs.append(ref)
        return tags, refs

    def mark(self, message: Message, refs: list[dict[str, Any]]) -> None:
        """Note ``refs`` on the user message of the prompt being sent."""
        if refs:
            message[IMAGES_KEY] = {"prompt": self.prompts() - 1, "images": refs}

    def _keep(self, sha: str, data: bytes) -> None:
        if self.directory is None:
            return
        final = self.directory / sha
        try:
            ensure_private_dir(self.directory)
            if not self._pruned:
                self._pruned = True
                if removed := prune_images(self.directory):
                    log.info("removed %d image(s) unused for %d days", removed, KEEP_DAYS)
            if final.exists():
                _renew(final)
                return
            temporary = self.directory / f".{sha}.{secrets.token_hex(4)}.tmp"
            replace_with(temporary, final, data, 0o600, durable=True)
        except OSError as exc:
            log.warning("image %s not kept on disk: %s", sha, exc)

    # -- the requests -------------------------------------------------------------------

    def _refs(self, message: Message) -> tuple[int | None, list[dict[str, Any]]]:
        mark = message.get(IMAGES_KEY)
        if not isinstance(mark, dict):
            return None, []
        prompt = mark.get("prompt")
        refs = [
            ref
            for ref in mark.get("images") or ()
            if isinstance(ref, dict) and isinstance(ref.get("sha256"), str)
        ]
        return (prompt if isinstance(prompt, int) else None), refs

    def _fresh(self, prompt: int | None) -> bool:
        return prompt is not None and self.prompts() - 1 - prompt <= RESEND_PROMPTS

    async def prepare(self, messages: Sequence[Message]) -> None:
        """Before a turn's requests: ask the model's vision once, and have the bytes of the
        images still sent in memory (read back from disk after a resume), the others not."""
        fresh: list[str] = []
        for message in messages:
            prompt, refs = self._refs(message)
            if self._fresh(prompt):
                fresh.extend(str(ref["sha256"]) for ref in refs)
        self._encoded = {sha: self._encoded[sha] for sha in fresh if sha in self._encoded}
        if not fresh:
            return
        await self.vision(self.settings.model)
        missing = [sha for sha in dict.fromkeys(fresh) if sha not in self._encoded]
        if missing:
            self._encoded.update(await asyncio.to_thread(self._load, missing))

    def _load(self, shas: list[str]) -> dict[str, str]:
        loaded: dict[str, str] = {}
        if self.directory is None:
            return loaded
        for sha in shas:
            if not _SHA.fullmatch(sha):
                continue  # a hand-edited session: never a path of its choosing
            with contextlib.suppress(OSError, UnsafeFile):
                data = read_own_file(self.directory / sha, self.limit_on_disk)
                if hashlib.sha256(data).hexdigest() == sha and sniff_image(data) is not None:
                    loaded[sha] = base64.b64encode(data).decode("ascii")
                    _renew(self.directory / sha)
        return loaded

    @property
    def limit_on_disk(self) -> int:
        """What an image read back may be: kept under an older, larger limit, still read."""
        return max(self.limit, DEFAULT_IMAGE_MAX_BYTES) * 4

    def wire(self, messages: Sequence[Message]) -> list[Message]:
        """``messages`` as a request sends them: a user message's images as Ollama's
        ``images`` while they are sent, else its tag says why not; the references out."""
        sends = self._sends_now()
        out: list[Message] = []
        for message in messages:
            if IMAGES_KEY not in message:
                out.append(message)
                continue
            prompt, refs = self._refs(message)
            copy = {key: value for key, value in message.items() if key != IMAGES_KEY}
            content = str(copy.get("content") or "")
            sent: list[str] = []
            for ref in refs:
                encoded = self._encoded.get(str(ref["sha256"]))
                if not self._fresh(prompt):
                    content = _replace_last(content, _tag_of(ref), _tag_of(ref, "not resent"))
                elif not sends:
                    note = "not sent: the model does not take images"
                    content = _replace_last(content, _tag_of(ref), _tag_of(ref, note))
                elif encoded is None:
                    content = _replace_last(content, _tag_of(ref), _tag_of(ref, "no longer kept"))
                else:
                    sent.append(encoded)
            copy["content"] = content
            if sent:
                copy["images"] = sent
            out.append(copy)
        return out
