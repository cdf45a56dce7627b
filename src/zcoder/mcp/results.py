"""An MCP tool result as the text the model reads.

Models here read text only. A result's images, audio and binary resources are therefore
described in a line each (kind, type, size, and that the model was not shown it), never
dropped silently: the model then knows something came back and can say so, instead of
believing the tool returned nothing. Text is kept as the server sent it and bounded like
every tool's output (the registry cuts it to ``max_tool_output``, head and tail); the parts
are bounded here too, before they are joined, so a result of many large parts is never
held twice over.
"""

from __future__ import annotations

import json
from typing import Any

from zcoder.base.plural import counted
from zcoder.tools.output import bound_text

__all__ = ["describe_size", "result_text"]


def describe_size(data: str) -> str:
    """The decoded size of base64 ``data``, as a person reads it."""
    data = data.strip()
    size = len(data) * 3 // 4 - (len(data) - len(data.rstrip("=")))
    if size < 1024:
        return counted(size, "byte")
    if size < 1024 * 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def _block_text(block: Any, limit: int) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return bound_text(str(block.text), limit)
    if kind in ("image", "audio"):
        return f"[{kind}: {block.mime_type}, {describe_size(block.data)} — not shown to the model]"
    if kind == "resource_link":
        mime = f", {block.mime_type}" if getattr(block, "mime_type", None) else ""
        return f"[resource link: {block.uri} ({block.name}{mime}) — not read]"
    if kind == "resource":
        resource = block.resource
        mime = getattr(resource, "mime_type", None) or "unknown type"
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return f"[resource {resource.uri} ({mime})]\n" + bound_text(text, limit)
        blob = getattr(resource, "blob", "") or ""
        return (
            f"[resource {resource.uri}: {mime}, {describe_size(blob)} of binary data — "
            "not shown to the model]"
        )
    return f"[a {kind or 'content'} block zcoder cannot show]"


def result_text(result: Any, limit: int) -> tuple[bool, str]:
    """(ok, text) of a CallToolResult; ``ok`` is False when the server set isError."""
    parts = [_block_text(block, limit) for block in (result.content or [])]
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(bound_text(json.dumps(structured, ensure_ascii=False), limit))
    text = bound_text("\n".join(parts), limit) if parts else "(no output)"
    if getattr(result, "is_error", False):
        return False, f"Error: the tool reported an error: {text}"
    return True, text
