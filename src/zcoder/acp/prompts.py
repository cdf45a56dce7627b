"""A prompt's content as zcoder's agent takes it, and the answer to ``session/prompt``.

What an editor sends (text, attached files, resources) becomes one text
(``prompt_text``); how a turn ended becomes the response's stop reason, with zcoder's own
outcome in ``_meta`` (``prompt_response``).
"""

from __future__ import annotations

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
    with their URI; images and audio are refused (initialize says zcoder takes none)."""
    parts: list[str] = []
    for block in blocks:
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
