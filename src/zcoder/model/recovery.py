"""Tool calls and reasoning that a local model wrote as text, recovered.

Ollama turns a model's tool call into ``tool_calls`` only when the output matches the tool
format of the model's template. Many local models drift from it and write the call as
text, so the reply looks like an answer made of JSON and nothing runs. Reasoning models
served without thinking support write their reasoning at the start of the content, inside
``<think>``. :func:`recover` reads a finished reply and moves such text where it belongs:
a call that names a tool offered in the request, with arguments that pass the registry's
own validation (:func:`zcoder.tools.registry.validate_arguments`), becomes a real tool
call with the id ``recovered_<n>`` (n counts the reply's recovered calls from 0, in the
order they were written); reasoning moves to ``thinking``. Anything else stays text,
unchanged: a call naming an unknown tool or with invalid arguments, JSON that is data, a
code block in an explanation. A reply that already has real tool calls gets none added.

Shapes recognised (tool names and argument values below are examples):

* Bare JSON on lines of its own, pretty-printed or not, one call per object or a list of
  them: ``{"name": "read_file", "arguments": {"path": "a.py"}}``. qwen2.5-coder writes
  this instead of its template's ``<tool_call>`` tags
  (https://github.com/ollama/ollama/issues/12174,
  https://github.com/anomalyco/opencode/issues/6223).
* The same in a fenced code block tagged ``json``, ``tool_call``, ``tool_code``, ``xml``
  or nothing; a fence's whole body must be calls. Blocks in other languages are never
  read. Command R opens the fence after ``Action:`` on the same line
  (https://docs.cohere.com/docs/prompting-command-r).
* Object variants: ``"arguments"``, ``"parameters"`` or ``"args"`` for the arguments (an
  object, or a JSON object in a string as the OpenAI wire format has it); ``"name"``,
  ``"tool"``, ``"tool_name"`` (Command R) or ``"function"`` for the name; an OpenAI-style
  ``{"type": "function", "function": {"name": ..., "arguments": ...}}``; ``"id"`` and
  ``"type": "function"`` allowed beside them. Any other key makes the object data.
* Hermes, Qwen2.5 and Qwen3: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``
  (https://github.com/NousResearch/Hermes-Function-Calling,
  https://qwen.readthedocs.io/en/latest/framework/function_call.html); Granite 3.1 puts a
  list in it, Granite 3.0 and Phi-4-mini use ``<|tool_call|>`` (vLLM's
  ``granite_tool_parser.py`` and ``phi4mini_tool_parser.py``,
  https://github.com/vllm-project/vllm/tree/main/vllm/entrypoints/openai/tool_parsers).
* Qwen3-Coder's XML: ``<tool_call><function=NAME><parameter=KEY>value</parameter>
  </function></tool_call>``, values read by the parameter's schema type
  (https://huggingface.co/Qwen/Qwen3-Coder-30B-A3B-Instruct/blob/main/qwen3coder_tool_parser.py).
* GLM-4.5 and later: ``<tool_call>NAME<arg_key>KEY</arg_key><arg_value>value</arg_value>
  </tool_call>`` (vLLM's ``glm4_moe_tool_parser.py``).
* Llama 3.1 to 3.3: ``{"type": "function", "name": ..., "parameters": {...}}``, several
  separated by ``;``, optionally after ``<|python_tag|>`` and up to ``<|eom_id|>``; and the
  custom-tool form ``<function=NAME>{...}</function>``
  (https://www.llama.com/docs/model-cards-and-prompt-formats/llama3_1/).
* Llama 3.2 and 4, Gemma 3: the pythonic list ``[read_file(path="a.py"), ...]`` on lines
  of its own or between ``<|python_start|>`` and ``<|python_end|>``, and Gemma's
  ``tool_code`` fence
  (https://www.llama.com/docs/model-cards-and-prompt-formats/llama3_2/,
  https://ai.google.dev/gemma/docs/capabilities/function-calling). Only literal keyword
  arguments are read; nothing is evaluated.
* Mistral: ``[TOOL_CALLS][{"name": ..., "arguments": {...}, "id": ...}]`` (tokenizer v3
  and Tekken) and ``[TOOL_CALLS]NAME[ARGS]{...}`` (v11 and later), to the end of the reply
  (https://github.com/mistralai/mistral-common, vLLM's ``mistral_tool_parser.py``).
* DeepSeek V3/R1 and V3.1 tool tokens: ``<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>
  function<｜tool▁sep｜>NAME`` then the arguments in a json fence (V3/R1) or
  ``NAME<｜tool▁sep｜>{...}`` (V3.1), up to ``<｜tool▁call▁end｜>`` (vLLM's
  ``deepseekv3_tool_parser.py`` and ``deepseekv31_tool_parser.py``).
* Reasoning: ``<think>…</think>`` at the very start of the content (DeepSeek-R1, QwQ,
  Qwen3 when Ollama does not split it; an unclosed ``<think>`` means the model never
  finished reasoning), and the reasoning before a ``</think>`` line with no opening tag,
  which templates that put ``<think>`` in the prompt produce
  (https://github.com/deepseek-ai/DeepSeek-R1/issues/352).

Text around a recovered call stays as the reply's content, without the call's text. A
span holding several calls (a list, a fence, a Mistral run) is recovered whole or not at
all; separate spans are judged each on its own. Recovery is pure and never raises: any
fault inside it is logged and the reply is returned as it came.

This module judges what was found; finding the spans is zcoder.model.recovery_scan's,
reading each shape zcoder.model.recovery_shapes's, and holding back a streamed reply
until it is settled zcoder.model.held_reply's.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from zcoder.base.plural import counted
from zcoder.model.held_reply import HeldReply, settled_length
from zcoder.model.recovery_scan import _Scanner
from zcoder.model.recovery_shapes import _json_values, _Span, _Tools, _WrittenCall
from zcoder.model.types import AssistantReply, ToolCall
from zcoder.tools.registry import validate_arguments

__all__ = ["RECOVERED_ID_PREFIX", "HeldReply", "recover", "settled_length", "split_thinking"]

log = logging.getLogger(__name__)

RECOVERED_ID_PREFIX = "recovered_"

# Beyond this much content no call is looked for (reasoning is still split off).
_MAX_SCAN_CHARS = 400_000
_ORPHAN_THINK_CLOSE = re.compile(r"(?:^|\n)[ \t]*</think>[ \t]*(?=\n|$)")
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")
_BLANK_RUNS = re.compile(r"\n{3,}")


def recover(reply: AssistantReply, schemas: Sequence[Mapping[str, Any]]) -> AssistantReply:
    """``reply`` with calls and reasoning written as text moved out of its content.

    ``schemas`` are the ``tools`` entries of the request (``{"type": "function",
    "function": {"name", "description", "parameters"}}``); only their tools can be
    recovered. The agent passes them as the registry checks a call
    (``ToolSpec.schema(checked=True)``), so an argument given under another name the
    registry accepts (``x-aliases``) is recovered as dispatch would take it. Returns
    ``reply`` itself when nothing was recovered, otherwise a new reply (the same
    ``done``).
    """
    try:
        return _recover(reply, _parameters_by_name(schemas))
    except Exception:  # a recovery fault must never cost the reply
        log.exception("recovering tool calls from a reply's text failed; kept as text")
        return reply


def split_thinking(content: str) -> tuple[str | None, str]:
    """Reasoning written in the content, and the rest; ``None`` when there is none."""
    stripped = content.lstrip()
    if stripped.startswith("<think>"):
        body = stripped[len("<think>") :]
        end = body.find("</think>")
        if end < 0:
            return body.strip(), ""
        return body[:end].strip(), body[end + len("</think>") :].lstrip()
    if "<think>" not in content:
        match = _ORPHAN_THINK_CLOSE.search(content)
        if match is not None:
            return content[: match.start()].strip(), content[match.end() :].lstrip()
    return None, content


def _recover(reply: AssistantReply, tools: _Tools) -> AssistantReply:
    thinking, content = split_thinking(reply.content)
    calls: list[ToolCall] = []
    if not reply.tool_calls and tools and len(content) <= _MAX_SCAN_CHARS:
        calls, rest = _recover_calls(content, tools)
        if calls:
            content = rest
    if thinking is None and not calls:
        return reply
    if calls:
        log.info("recovered %s written as text", counted(len(calls), "tool call"))
    joined = "\n\n".join(part for part in (reply.thinking, thinking) if part)
    return AssistantReply(
        content=content,
        thinking=joined,
        tool_calls=[*reply.tool_calls, *calls],
        done=reply.done,
    )


def _parameters_by_name(schemas: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    tools: dict[str, Mapping[str, Any]] = {}
    for schema in schemas:
        function = schema.get("function") if isinstance(schema, Mapping) else None
        if not isinstance(function, Mapping):
            continue
        name = function.get("name")
        parameters = function.get("parameters")
        if isinstance(name, str) and name:
            tools[name] = parameters if isinstance(parameters, Mapping) else {}
    return tools


def _recover_calls(text: str, tools: _Tools) -> tuple[list[ToolCall], str]:
    """The calls of ``text`` that name known tools with valid arguments, and the rest."""
    kept: list[_Span] = []
    checked: list[tuple[str, dict[str, Any]]] = []
    for span in _Scanner(tools).scan(text, 0):
        span_calls = [_checked(call, tools) for call in span.calls]
        valid = [call for call in span_calls if call is not None]
        if span_calls and len(valid) == len(span_calls):
            kept.append(span)
            checked.extend(valid)
    if not checked:
        return [], text
    pieces: list[str] = []
    position = 0
    for span in kept:
        pieces.append(text[position : span.start])
        position = span.end
    pieces.append(text[position:])
    trimmed = [_LEADING_BLANK_LINES.sub("", piece).rstrip() for piece in pieces]
    rest = _BLANK_RUNS.sub("\n\n", "\n\n".join(piece for piece in trimmed if piece))
    calls = [
        ToolCall(id=f"{RECOVERED_ID_PREFIX}{n}", name=name, arguments=arguments)
        for n, (name, arguments) in enumerate(checked)
    ]
    return calls, rest


def _checked(call: _WrittenCall, tools: _Tools) -> tuple[str, dict[str, Any]] | None:
    """The call's name and arguments when it names a known tool and its arguments validate."""
    parameters = tools.get(call.name)
    if parameters is None:
        return None
    arguments = call.arguments
    if arguments is None:
        arguments = {}
    if isinstance(arguments, str):
        values = _json_values(arguments) if arguments.strip() else [{}]
        if values is None or len(values) != 1:
            return None
        arguments = values[0]
    if not isinstance(arguments, dict):
        return None
    try:
        validated = validate_arguments(arguments, dict(parameters))
    except ValueError:  # ArgumentError, or a conversion the registry did not foresee
        return None
    # The arguments as the model wrote them, with the registry's type fixes ("10" → 10),
    # without the defaults it filled in.
    result = {str(key): validated.get(key, value) for key, value in arguments.items()}
    try:
        json.dumps(result, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return call.name, result
