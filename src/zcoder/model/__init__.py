"""The model clients (Ollama's native API, and OpenAI-compatible servers) and their errors.

``make_client(config)`` picks the backend (zcoder.model.backends) and returns a
``ModelClient`` (zcoder.model.protocol: ``chat``, ``list_models``, ``warm_up``,
``aclose``). Both clients are the shared HTTP core (zcoder.model.http) plus their wire
format: Ollama's (zcoder.model.ollama, zcoder.model.stream) and the OpenAI-compatible one
(zcoder.model.openai, zcoder.model.openai_stream); they yield the same events.

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

from typing import TYPE_CHECKING

from zcoder.base.lazy import face

if TYPE_CHECKING:
    from zcoder.model.backends import BACKENDS, BackendSettings, make_client, server_label
    from zcoder.model.errors import (
        ModelAuthError,
        ModelConnectionError,
        ModelError,
        ModelHTTPError,
        ModelNotFound,
        ModelNotServed,
        ModelStreamError,
        ModelTimeout,
        NotOllama,
        OllamaUnreachable,
        ServerUnreachable,
        ToolsUnsupported,
    )
    from zcoder.model.host import (
        DEFAULT_BASE_URL,
        DEFAULT_HOST,
        DEFAULT_PORT,
        normalize_base_url,
        normalize_host,
    )
    from zcoder.model.http import (
        DEFAULT_CONNECT_TIMEOUT,
        DEFAULT_LIST_TIMEOUT,
        DEFAULT_READ_TIMEOUT,
        DEFAULT_WRITE_TIMEOUT,
    )
    from zcoder.model.ollama import OllamaClient, build_chat_request
    from zcoder.model.openai import OpenAIClient, build_openai_request, to_openai_messages
    from zcoder.model.openai_stream import OpenAIStreamParser
    from zcoder.model.protocol import ModelClient
    from zcoder.model.stream import ChatStreamParser, parse_tool_call
    from zcoder.model.types import (
        AssistantReply,
        ChatEvent,
        ContentDelta,
        Done,
        Message,
        ReasoningDelta,
        ToolCall,
        ToolCallsReceived,
        assistant_message,
        system_message,
        tool_result_message,
        user_message,
    )

# The names above are the whole face: each is imported from its module when first
# used (zcoder.base.lazy), so a caller that needs one light name does not pay for the
# whole package at start-up.
__getattr__, __dir__, __all__ = face(__name__, __file__)
