"""A prompt's content as zcoder's agent takes it, and the answer to ``session/prompt``.

What an editor sends (text, attached files, resources) becomes one text
(``prompt_text``), and its images the images the prompt attaches (``prompt_images``: the
bytes checked as a path's are, zcoder.agent.image_attach); how a turn ended becomes the
response's stop reason, with zcoder's own outcome in ``_meta`` (``prompt_response``).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any

from acp import RequestError
from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    PromptResponse,
    ResourceContentBlock,
    StopReason,
    TextContentBlock,
    TextResourceContents,
)

from zcoder.agent import Outcome, TurnFinished
from zcoder.agent.image_attach import ImageFile, too_big
from zcoder.base.images import HEAD_BYTES, sniff_image
from zcoder.base.sanitize import visible

PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)

CUT_OFF = "the reply was cut off"
"""How zcoder.agent.usage.cut_off_reason begins: the model hit a token limit."""


def prompt_text(blocks: Sequence[PromptBlock]) -> str:
    """The prompt as zcoder's agent takes it: text. Files the editor attached are given
    with their URI; images are ``prompt_images``'; audio is refused (initialize says
    zcoder takes none)."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, ImageContentBlock):
            continue
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"[{block.name}]({block.uri})")
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if not isinstance(resource, TextResourceContents):
                raise RequestError.invalid_params(
                    {"details": f"zcoder cannot read the binary resource {resource.uri}"}
                )
            parts.append(f"Contents of {resource.uri}:\n```\n{resource.text}\n```")
        else:
            raise RequestError.invalid_params(
                {"details": f"zcoder does not take {block.type} content in prompts"}
            )
    return "\n\n".join(part for part in parts if part)


def prompt_images(blocks: Sequence[PromptBlock], limit: int) -> list[ImageFile]:
    """The images of a prompt (base64 ``data``), each at most ``limit`` bytes and a PNG,
    JPEG, GIF or WebP by its bytes; a bad one refuses the prompt, saying which and why."""
    images: list[ImageFile] = []
    blocks_of_images = [block for block in blocks if isinstance(block, ImageContentBlock)]
    for number, block in enumerate(blocks_of_images, 1):
        name = visible(block.uri.rsplit("/", 1)[-1] if block.uri else f"image {number}")
        if len(block.data) * 3 // 4 > limit + 2:
            raise _bad_image(too_big(name, len(block.data) * 3 // 4, limit))
        try:
            data = base64.b64decode(block.data, validate=True)
        except (binascii.Error, ValueError):
            raise _bad_image(f"{name} is not base64 data") from None
        if len(data) > limit:
            raise _bad_image(too_big(name, len(data), limit))
        info = sniff_image(data[:HEAD_BYTES])
        if info is None:
            raise _bad_image(f"{name} is not a PNG, JPEG, GIF or WebP image")
        images.append(ImageFile(name, data, info))
    return images


def _bad_image(why: str) -> RequestError:
    return RequestError.invalid_params({"details": f"the prompt's image was refused: {why}"})


def prompt_response(finished: TurnFinished) -> PromptResponse:
    """The stop reason for how the turn ended; zcoder's own outcome goes in ``_meta``
    (a script can tell a blocked or failed turn from a finished one)."""
    reason: StopReason = "end_turn"
    if finished.outcome is Outcome.STOPPED:
        reason = "cancelled"
    elif finished.outcome is Outcome.INCOMPLETE and finished.error.startswith(CUT_OFF):
        reason = "max_tokens"
    outcome: dict[str, Any] = {"outcome": finished.outcome.value}
    if finished.error:
        outcome["error"] = finished.error
    return PromptResponse(stop_reason=reason, field_meta={"zcoder": outcome})


CANCELLED = PromptResponse(stop_reason="cancelled")
