"""The Ollama HTTP client and its error types.

zcoder talks to Ollama's native API (``/api/chat`` streamed as NDJSON, ``/api/tags``)
through httpx directly instead of the official ``ollama`` Python package. The agent
needs tool-call ids to round-trip: Ollama (since 0.12.10) sends ``tool_calls[i].id`` and
accepts ``tool_call_id`` on tool results, but the package's ``Message.ToolCall`` model has
no ``id`` field, so pydantic silently drops it (ollama/ollama-python#667, with fixes
still open at the time of writing). A thin client also keeps full control of
cancellation (closing the generator closes the response), of the error messages users
see, and of the test seam (an httpx transport), with one dependency fewer.

Public surface::

    async with OllamaClient("127.0.0.1:11434") as client:
        reply = AssistantReply()
        async for event in client.chat(model, messages, tools=schemas, think=False):
            reply.add(event)
        history.append(reply.to_message())
        for call in reply.tool_calls:
            history.append(tool_result_message(call, run(call)))
"""

from zcoder.model.client import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_LIST_TIMEOUT,
    DEFAULT_READ_TIMEOUT,
    DEFAULT_WRITE_TIMEOUT,
    OllamaClient,
    build_chat_request,
)
from zcoder.model.errors import (
    ModelConnectionError,
    ModelError,
    ModelHTTPError,
    ModelNotFound,
    ModelStreamError,
    ModelTimeout,
    OllamaUnreachable,
    ToolsUnsupported,
)
from zcoder.model.host import DEFAULT_HOST, DEFAULT_PORT, normalize_host
from zcoder.model.stream import ChatStreamParser, parse_tool_call
from zcoder.model.types import (
    AssistantReply,
    ChatEvent,
    ContentDelta,
    Done,
    Message,
    ThinkingDelta,
    ToolCall,
    ToolCallsReceived,
    assistant_message,
    system_message,
    tool_result_message,
    user_message,
)

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_HOST",
    "DEFAULT_LIST_TIMEOUT",
    "DEFAULT_PORT",
    "DEFAULT_READ_TIMEOUT",
    "DEFAULT_WRITE_TIMEOUT",
    "AssistantReply",
    "ChatEvent",
    "ChatStreamParser",
    "ContentDelta",
    "Done",
    "Message",
    "ModelConnectionError",
    "ModelError",
    "ModelHTTPError",
    "ModelNotFound",
    "ModelStreamError",
    "ModelTimeout",
    "OllamaClient",
    "OllamaUnreachable",
    "ThinkingDelta",
    "ToolCall",
    "ToolCallsReceived",
    "ToolsUnsupported",
    "assistant_message",
    "build_chat_request",
    "normalize_host",
    "parse_tool_call",
    "system_message",
    "tool_result_message",
    "user_message",
]
