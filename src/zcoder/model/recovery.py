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
"""

from __future__ import annotations

import ast
import json
import logging
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from zcoder.model.types import AssistantReply, ToolCall
from zcoder.relay.sanitize import TOOL_CALL_OPENERS
from zcoder.tools.registry import validate_arguments

__all__ = ["RECOVERED_ID_PREFIX", "HeldReply", "recover", "settled_length", "split_thinking"]

log = logging.getLogger(__name__)

RECOVERED_ID_PREFIX = "recovered_"

# Beyond this much content no call is looked for (reasoning is still split off).
_MAX_SCAN_CHARS = 400_000
# Attempts at reading JSON or a pythonic list that starts a line, per reply. A model
# stuck repeating a fragment cannot make recovery slow; the rest of such a reply stays
# text.
_MAX_ATTEMPTS = 2_000
# A pythonic call list is looked for over at most this many lines and characters.
_MAX_PYTHONIC_LINES = 40
_MAX_PYTHONIC_CHARS = 20_000
# How deep wrappers may nest (a fence holding a <tool_call> holding JSON).
_MAX_DEPTH = 3
# JSON is first read from a window this long, then from larger ones if it runs past it,
# so that a failed attempt costs little however long the reply.
_JSON_WINDOW = 1_024

_FENCE_LANGUAGES = frozenset({"", "json", "tool_call", "tool_calls", "tool_code", "xml"})

# The tagged openers are the relay sanitiser's list (one list: what is read here as a call
# is what a peer's text may never carry into a model's context as itself).
_OPENERS = re.compile(
    r"(?P<fence>^[ \t]*(?:Action:[ \t]*)?(?P<tick>`{3,}|~{3,})[ \t]*(?P<lang>[^\s`]*)[^\n`]*\n)"
    rf"|(?P<tag>{'|'.join(map(re.escape, TOOL_CALL_OPENERS))})"
    r"|(?P<bare>^[ \t]*[\[{])",
    re.MULTILINE,
)
_ORPHAN_THINK_CLOSE = re.compile(r"(?:^|\n)[ \t]*</think>[ \t]*(?=\n|$)")
_JSON_START = re.compile(r"\{\s*[\"}]|\[\s*[\[{\]\"\d-]")
_JSON_SEPARATOR = re.compile(r"[ \t]*;[ \t]*")
_PYTHONIC_START = re.compile(r"\[\s*[A-Za-z_]\w*\(")
_FUNCTION = re.compile(r"<function=([^>\s]+)>(.*?)(?:</function>|(?=<function=)|\Z)", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\s]+)>(.*?)(?:</parameter>|(?=<parameter=)|\Z)", re.DOTALL)
_GLM_NAME = re.compile(r"[\w.-]+")
_GLM_PAIR = re.compile(r"\s*<arg_key>([^<]*)</arg_key>\s*<arg_value>(.*?)</arg_value>", re.DOTALL)
_MISTRAL_V11 = re.compile(
    r"([A-Za-z0-9_.-]+)\s*(?:\[CALL_ID\]\s*[A-Za-z0-9]+\s*)?(?:\[ARGS\])?\s*(\{.*\})", re.DOTALL
)
_DEEPSEEK_BEGIN = "<｜tool▁calls▁begin｜>"
_DEEPSEEK_END = "<｜tool▁calls▁end｜>"
_JSON_FENCE = re.compile(r"\A```[\w-]*[ \t]*\n?(.*?)\n?```\Z", re.DOTALL)
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")
_BLANK_RUNS = re.compile(r"\n{3,}")

_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARGUMENT_KEYS = ("arguments", "parameters", "args")
_ALSO_ALLOWED = frozenset({"id", "type"})

_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class _Call:
    """A call as the text wrote it: its arguments are not checked yet."""

    name: str
    arguments: Any


@dataclass(frozen=True)
class _Span:
    """Text from ``start`` to ``end`` that is one or more calls."""

    start: int
    end: int
    calls: tuple[_Call, ...]


_Tools = Mapping[str, Mapping[str, Any]]


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


# -- while a reply streams ------------------------------------------------------------

_TAG_OPENERS: Final = (
    "<tool_call>",
    "<|tool_call|>",
    "<function=",
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "<|python_start|>",
    _DEEPSEEK_BEGIN,
)
_LINE_OPENERS: Final = ("```", "~~~", "Action:")
_LONGEST_TAG: Final = max(len(tag) for tag in _TAG_OPENERS)


def settled_length(content: str) -> int:
    """How much of a reply's content, as streamed so far, stays the reply whatever
    follows: the text before anything :func:`recover` might still take out of it (a tool
    call, reasoning), without trailing blank lines. A front end that cannot take back what it
    showed (``--prompt``'s stdout) shows only this much until the reply is final.

    Held back: everything while the content may be reasoning (``<think>`` at the start);
    from the first opener of a call shape on (a fence tagged json, tool_call, xml or
    nothing; a call tag; a line starting with JSON or a pythonic call list) to the end;
    and a last line that may still become one. A fence in another language, and prose,
    are never held.
    """
    return _settled(content, 0)[0]


def _settled(content: str, start: int) -> tuple[int, int]:
    """``settled_length``, judging openers from ``start`` on (what lies before it was
    judged not to be a call by an earlier call), and where the next call may start."""
    head = content[:256].lstrip()
    if not head or head.startswith("<think>") or "<think>".startswith(head):
        return 0, 0
    shapes = _Scanner({})  # call shapes only: which tools are offered is not known here
    finder = _Finder(content)
    position = start
    while True:
        match = _OPENERS.search(content, position)
        if match is None:
            break
        if match.group("tag") is not None:
            return _before_blanks(content, match.start()), match.start()
        if match.group("fence") is not None:
            closing = finder.fence_end(match.group("tick"), match.end())
            if closing is None:
                if match.group("lang").lower() in _FENCE_LANGUAGES:
                    return _before_blanks(content, match.start()), match.start()
                # Inside a code block: never a call, whatever comes before its end.
                return _before_blanks(content, len(content)), match.start()
            if not isinstance(shapes._fenced(content, finder, match, 0), int):
                return _before_blanks(content, match.start()), match.start()
            position = closing[1]
            continue
        found = shapes._bare(content, match.end() - 1, match.start())
        if isinstance(found, int):
            position = max(found, match.end())  # JSON that is data, not a call
            continue
        rest = content[match.end() - 1 :]
        if found is not None or _JSON_START.match(rest) or _PYTHONIC_START.match(rest):
            return _before_blanks(content, match.start()), match.start()
        if _undecided_bracket(rest):
            return _before_blanks(content, match.start()), match.start()
        position = match.end()
    # Where the next look starts: no opener before it is left unjudged. A tag may still
    # complete at the tail, and the last line may still start a fence or JSON.
    line_start = content.rfind("\n") + 1
    tail = max(0, len(content) - _LONGEST_TAG)
    if _line_may_open(content[line_start:]):
        tail = min(tail, line_start)
    return _before_blanks(content, _unfinished_opener(content)), max(position, tail)


def _undecided_bracket(rest: str) -> bool:
    """A line-starting ``[`` or ``{`` whose following text cannot yet tell JSON or a call
    list from prose (only blanks, or a name not yet followed by anything else)."""
    body = rest[1:].lstrip()
    if not body:
        return True
    return rest[0] == "[" and re.fullmatch(r"[A-Za-z_]\w*", body) is not None


def _line_may_open(line: str) -> bool:
    """Whether an unfinished last line is, or may still become, a line-start opener."""
    line = line.lstrip(" \t")
    return (
        not line
        or line[0] in "[{"
        or any(opener.startswith(line) or line.startswith(opener) for opener in _LINE_OPENERS)
    )


def _unfinished_opener(content: str) -> int:
    """Where an opener may be starting at the end of ``content`` (else its length)."""
    line_start = content.rfind("\n") + 1
    if content[line_start:].strip(" \t") and _line_may_open(content[line_start:]):
        return line_start
    tail_from = max(line_start, len(content) - _LONGEST_TAG)
    for index in range(tail_from, len(content)):
        if content[index] in "<[" and any(tag.startswith(content[index:]) for tag in _TAG_OPENERS):
            return index
    return len(content)


def _before_blanks(content: str, end: int) -> int:
    """``end`` moved back over the blank lines before it (recovery trims them away from a
    call); blanks at the end of a line that goes on are kept."""
    start = end
    while start > 0 and content[start - 1].isspace():
        start -= 1
    return start if "\n" in content[start:end] else end


class HeldReply:
    """A streamed reply shown only as far as it is settled (:func:`settled_length`).

    ``feed`` takes each piece of content and returns the text that may be shown now;
    ``finish`` takes the final text of the reply (after :func:`recover`) and returns what
    is left to show of it. The final text is matched to what was shown up to blanks
    (recovery trims the text around a call); when it does not begin with what was shown
    (reasoning without an opening tag, found only at its end), it is returned whole.
    """

    def __init__(self) -> None:
        self.content = ""
        self.shown = ""
        self._resume = 0  # where the next look for an opener starts (the work stays linear)

    def feed(self, piece: str) -> str:
        self.content += piece
        settled, self._resume = _settled(self.content, self._resume)
        if settled <= len(self.shown):
            return ""
        fresh = self.content[len(self.shown) : settled]
        self.shown = self.content[:settled]
        return fresh

    def finish(self, final: str) -> str:
        shown, self.content, self.shown, self._resume = self.shown, "", "", 0
        if final.startswith(shown):
            return final[len(shown) :]
        matched = 0
        for char in shown:
            if char.isspace():
                continue
            while matched < len(final) and final[matched].isspace():
                matched += 1
            if matched >= len(final) or final[matched] != char:
                return final
            matched += 1
        return final[matched:]


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
        log.info("recovered %d tool call(s) written as text", len(calls))
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


def _checked(call: _Call, tools: _Tools) -> tuple[str, dict[str, Any]] | None:
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


# -- finding spans ------------------------------------------------------------------------


class _Scanner:
    """Finds the spans of a text that read as calls, with bounded work.

    Every opener is tried once; a tagged body ends at its closing tag or at the next
    opener of its kind, so bodies do not overlap; a missing closing tag is searched for
    once; JSON is read from small windows first. What a span means is judged later.
    """

    def __init__(self, tools: _Tools) -> None:
        self.tools = tools
        self.attempts = 0

    def scan(self, text: str, depth: int) -> list[_Span]:
        """Every span of ``text`` that reads as calls, in order; none overlaps another."""
        finder = _Finder(text)
        spans: list[_Span] = []
        position = 0
        while position < len(text):
            match = _OPENERS.search(text, position)
            if match is None:
                break
            result: _Span | int | None
            if match.group("fence") is not None:
                result = self._fenced(text, finder, match, depth)
            elif match.group("tag") is not None:
                result = self._tagged(text, finder, match, depth)
            else:
                result = self._bare(text, match.end() - 1, match.start())
            if isinstance(result, _Span):
                spans.append(result)
                position = result.end
            elif isinstance(result, int):
                position = max(result, match.start() + 1)  # text to step over, never read
            else:
                position = match.start() + 1
        return spans

    def _fenced(self, text: str, finder: _Finder, match: re.Match[str], depth: int) -> _Span | int:
        tick = match.group("tick")
        closing = finder.fence_end(tick, match.end())
        body_end, end = closing if closing is not None else (len(text), len(text))
        if match.group("lang").lower() not in _FENCE_LANGUAGES:
            return end
        body = text[match.end() : body_end]
        calls = self.block_calls(body, depth + 1, glm=False)
        if calls is None and match.group("lang").lower() == "tool_code":
            calls = _pythonic(body.strip(), allow_single=True)
        if calls is None:
            return end
        return _Span(match.start(), end, tuple(calls))

    def _tagged(
        self, text: str, finder: _Finder, match: re.Match[str], depth: int
    ) -> _Span | int | None:
        tag = match.group("tag")
        start, after = match.start(), match.end()
        calls: list[_Call] | None
        if tag in ("<tool_call>", "<|tool_call|>"):
            close = "</tool_call>" if tag == "<tool_call>" else "<|/tool_call|>"
            body_end, end = finder.until(after, (close,), tag)
            glm = tag == "<tool_call>"
            calls = self.block_calls(text[after:body_end], depth + 1, glm=glm)
        elif tag == "<function=":
            body_end, end = finder.until(after, ("</function>",), tag)
            calls = _xml_functions(text[start:end], self.tools)
        elif tag == "[TOOL_CALLS]":
            # Not calls: only the marker is stepped over, so what follows it (a fenced
            # call, say) is still read. Every marker before the bad piece would take that
            # piece in too, so none of them is tried again (work stays linear).
            if start < finder.mistral_bad_until:
                return after
            found = _mistral(text, start)
            if isinstance(found, int):
                finder.mistral_bad_until = found
                return after
            calls, end = found, len(text)
        elif tag == "<|python_tag|>":
            body_end, end = finder.until(after, ("<|eom_id|>", "<|eot_id|>"), tag)
            calls = _python_tag(text[after:body_end])
        elif tag == "<|python_start|>":
            body_end, end = finder.until(after, ("<|python_end|>",), tag)
            calls = _pythonic(text[after:body_end].strip(), allow_single=True)
        else:
            body_end, end = finder.until(after, (_DEEPSEEK_END,), _DEEPSEEK_BEGIN)
            calls = _deepseek(text[after:body_end])
        return _Span(start, end, tuple(calls)) if calls else None

    def _bare(self, text: str, brace: int, line_start: int) -> _Span | int | None:
        """JSON (or a pythonic list) that starts a line and ends one."""
        if self.attempts >= _MAX_ATTEMPTS:
            return None
        if _JSON_START.match(text, brace):
            self.attempts += 1
            decoded = _json_run(text, brace)
            if decoded is not None:
                values, end = decoded
                calls = _calls_from_json(values) if _rest_of_line_blank(text, end) else None
                # JSON that is not calls is data: stepped over whole, never read inside.
                return _Span(line_start, end, tuple(calls)) if calls else end
        if _PYTHONIC_START.match(text, brace):
            self.attempts += 1
            return _pythonic_lines(text, brace, line_start)
        return None

    def block_calls(self, body: str, depth: int, *, glm: bool) -> list[_Call] | None:
        """The calls of a wrapper's or fence's body, when the whole body is calls."""
        if depth > _MAX_DEPTH:
            return None
        stripped = body.strip()
        if not stripped:
            return None
        if stripped.startswith("<function="):
            return _xml_functions(stripped, self.tools)
        if glm and stripped[0] not in "[{<`":
            return _glm(stripped, self.tools)
        calls: list[_Call] = []
        position = 0
        for span in self.scan(stripped, depth):
            if stripped[position : span.start].strip():
                return None
            calls.extend(span.calls)
            position = span.end
        if not calls or stripped[position:].strip():
            return None
        return calls


class _Finder:
    """``str.find`` over one text, remembering where each string next occurs."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._found: dict[str, tuple[int, int]] = {}  # needle: (searched from, found at)
        # A [TOOL_CALLS] before this offset is known not to start calls.
        self.mistral_bad_until = -1

    def find(self, needle: str, start: int) -> int:
        known = self._found.get(needle)
        if known is not None:
            searched_from, found = known
            # Nothing lies between where that search began and what it found.
            if searched_from <= start and (found < 0 or found >= start):
                return found
        found = self.text.find(needle, start)
        self._found[needle] = (start, found)
        return found

    def until(self, start: int, closers: Sequence[str], opener: str) -> tuple[int, int]:
        """Where a tagged body ends: at the first closer (which the span takes), at the
        next ``opener`` (left for the next span) or at the end of the text."""
        best = (len(self.text), len(self.text))
        for closer in closers:
            found = self.find(closer, start)
            if 0 <= found < best[0]:
                best = (found, found + len(closer))
        found = self.find(opener, start)
        if 0 <= found < best[0]:
            best = (found, found)
        return best

    def fence_end(self, tick: str, start: int) -> tuple[int, int] | None:
        closing = re.compile(
            rf"^[ \t]*{re.escape(tick[0])}{{{len(tick)},}}[ \t]*$", re.MULTILINE
        ).search(self.text, start)
        return (closing.start(), closing.end()) if closing else None


def _rest_of_line_blank(text: str, position: int) -> bool:
    newline = text.find("\n", position)
    return not text[position : newline if newline >= 0 else len(text)].strip()


def _pythonic_lines(text: str, start: int, line_start: int) -> _Span | None:
    position = start
    for _ in range(_MAX_PYTHONIC_LINES):
        newline = text.find("\n", position)
        end = newline if newline >= 0 else len(text)
        if end - start > _MAX_PYTHONIC_CHARS:
            return None
        candidate = text[start:end].rstrip()
        if candidate.endswith("]"):
            calls = _pythonic(candidate, allow_single=False)
            if calls:
                return _Span(line_start, start + len(candidate), tuple(calls))
        if newline < 0:
            return None
        position = newline + 1
    return None


# -- reading one block --------------------------------------------------------------------


def _decode(text: str, start: int) -> tuple[Any, int] | None:
    """One JSON value at ``start``, read from a growing window (a failure costs little)."""
    window = _JSON_WINDOW
    while True:
        end = min(len(text), start + window)
        doc = text[start:end]
        try:
            value, used = _DECODER.raw_decode(doc)
        except json.JSONDecodeError as exc:
            cut_short = exc.pos >= len(doc) - 8 or exc.msg.startswith("Unterminated string")
            if end >= len(text) or not cut_short:
                return None
            window *= 4
            continue
        except RecursionError:
            return None
        return value, start + used


def _json_values(text: str) -> list[Any] | None:
    """The whole of ``text`` as one or more JSON values (``;`` or blanks between)."""
    values: list[Any] = []
    position = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            return values or None
        if values and text[position] == ";":
            position += 1
            continue
        decoded = _decode(text, position)
        if decoded is None:
            return None
        value, position = decoded
        values.append(value)


def _json_run(text: str, start: int) -> tuple[list[Any], int] | None:
    """JSON values from ``start`` on one line run (Llama separates calls with ``;``)."""
    decoded = _decode(text, start)
    if decoded is None:
        return None
    value, position = decoded
    values = [value]
    while True:
        separator = _JSON_SEPARATOR.match(text, position)
        if separator is None:
            return values, position
        decoded = _decode(text, separator.end())
        if decoded is None:
            return values, position
        value, position = decoded
        values.append(value)


def _calls_from_json(values: Sequence[Any]) -> list[_Call] | None:
    calls: list[_Call] = []
    for value in values:
        items = value if isinstance(value, list) else [value]
        if not items:
            return None
        for item in items:
            call = _call_from_object(item, wrapped=False)
            if call is None:
                return None
            calls.append(call)
    return calls or None


def _call_from_object(value: Any, *, wrapped: bool) -> _Call | None:
    if not isinstance(value, dict):
        return None
    if value.get("type", "function") != "function":
        return None
    function = value.get("function")
    if isinstance(function, dict):
        if wrapped or not set(value) <= {"function"} | _ALSO_ALLOWED:
            return None
        return _call_from_object(function, wrapped=True)
    names = [key for key in _NAME_KEYS if key in value]
    arguments = [key for key in _ARGUMENT_KEYS if key in value]
    if len(names) != 1 or len(arguments) != 1:
        return None
    if not set(value) <= {names[0], arguments[0]} | _ALSO_ALLOWED:
        return None
    name = value[names[0]]
    if not isinstance(name, str) or not name:
        return None
    return _Call(name, value[arguments[0]])


def _xml_functions(text: str, tools: _Tools) -> list[_Call] | None:
    """``<function=NAME>`` blocks (Qwen3-Coder parameters, or a JSON object as Llama)."""
    calls: list[_Call] = []
    stripped = text.strip()
    position = 0
    while position < len(stripped):
        match = _FUNCTION.match(stripped, position)
        if match is None:
            return None
        name = match.group(1)
        arguments = _xml_parameters(match.group(2), tools.get(name, {}))
        if arguments is None:
            return None
        calls.append(_Call(name, arguments))
        position = match.end()
        while position < len(stripped) and stripped[position].isspace():
            position += 1
    return calls or None


def _xml_parameters(body: str, parameters: Mapping[str, Any]) -> dict[str, Any] | None:
    stripped = body.strip()
    if not stripped:
        return {}
    if stripped.startswith("{"):
        values = _json_values(stripped)
        if values is None or len(values) != 1 or not isinstance(values[0], dict):
            return None
        return values[0]
    properties = _properties(parameters)
    arguments: dict[str, Any] = {}
    position = 0
    while body[position:].strip():
        while body[position].isspace():
            position += 1
        match = _PARAMETER.match(body, position)
        if match is None:
            return None
        value = match.group(2)
        value = value[1:] if value.startswith("\n") else value
        value = value[:-1] if value.endswith("\n") else value
        arguments[match.group(1)] = _typed(value, properties.get(match.group(1)))
        position = match.end()
    return arguments


def _glm(body: str, tools: _Tools) -> list[_Call] | None:
    """GLM's ``NAME<arg_key>KEY</arg_key><arg_value>value</arg_value>...``."""
    name = _GLM_NAME.match(body)
    if name is None:
        return None
    properties = _properties(tools.get(name.group(), {}))
    arguments: dict[str, Any] = {}
    position = name.end()
    while body[position:].strip():
        pair = _GLM_PAIR.match(body, position)
        if pair is None:
            return None
        key = pair.group(1).strip()
        arguments[key] = _typed(pair.group(2).strip(), properties.get(key))
        position = pair.end()
    return [_Call(name.group(), arguments)]


def _properties(parameters: Mapping[str, Any]) -> Mapping[str, Any]:
    properties = parameters.get("properties")
    return properties if isinstance(properties, Mapping) else {}


def _typed(value: str, schema: Any) -> Any:
    """A value written as text, read by its schema type as Qwen's own parser does.

    Strings stay as written; numbers and booleans are left to the registry's validation,
    which accepts ``"10"`` and ``"true"``; arrays and objects are read as JSON (or as a
    Python literal).
    """
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    if kind in ("integer", "number", "boolean"):
        return value.strip()
    if kind in ("array", "object"):
        values = _json_values(value)
        if values is not None and len(values) == 1:
            return values[0]
        literal = _literal(value.strip())
        return value if literal is _NOT_LITERAL else literal
    return value


_NOT_LITERAL = object()


def _literal(text: str) -> Any:
    """A Python literal read without evaluating anything, or ``_NOT_LITERAL``."""
    if len(text) > _MAX_PYTHONIC_CHARS:
        return _NOT_LITERAL
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "invalid escape sequence" and the like
            return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL


def _mistral(text: str, start: int) -> list[_Call] | int:
    """Mistral's calls from ``start`` (a ``[TOOL_CALLS]``) to the end of the text.

    When a piece is not a call, returns the end of the last bad piece: any
    ``[TOOL_CALLS]`` before it would take it in too.
    """
    marker = "[TOOL_CALLS]"
    calls: list[_Call] = []
    resume = -1
    position = start
    while position >= 0:
        after = position + len(marker)
        following = text.find(marker, after)
        piece = text[after : following if following >= 0 else len(text)].strip()
        found = _mistral_piece(piece) if piece else []
        if found is None:
            resume = following if following >= 0 else len(text)
        else:
            calls.extend(found)
        position = following
    if resume >= 0:
        return resume
    return calls if calls else len(text)


def _mistral_piece(piece: str) -> list[_Call] | None:
    if piece[0] in "[{":
        values = _json_values(piece)
        return _calls_from_json(values) if values is not None else None
    match = _MISTRAL_V11.fullmatch(piece)
    if match is None:
        return None
    values = _json_values(match.group(2))
    if values is None or len(values) != 1 or not isinstance(values[0], dict):
        return None
    return [_Call(match.group(1), values[0])]


def _python_tag(body: str) -> list[_Call] | None:
    stripped = body.strip()
    if not stripped:
        return None
    if stripped[0] in "{[":
        values = _json_values(stripped)
        if values is not None:
            return _calls_from_json(values)
    return _pythonic(stripped, allow_single=True)


def _pythonic(text: str, *, allow_single: bool) -> list[_Call] | None:
    """``[name(key=literal, ...), ...]`` (or one such call) read without evaluating it."""
    if not text or len(text) > _MAX_PYTHONIC_CHARS:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "invalid escape sequence" and the like
            node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if isinstance(node, ast.List):
        items = node.elts
    elif allow_single:
        items = [node]
    else:
        return None
    calls: list[_Call] = []
    for item in items:
        if not isinstance(item, ast.Call) or not isinstance(item.func, ast.Name) or item.args:
            return None
        arguments: dict[str, Any] = {}
        for keyword in item.keywords:
            if keyword.arg is None:
                return None
            try:
                arguments[keyword.arg] = ast.literal_eval(keyword.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return None
        calls.append(_Call(item.func.id, arguments))
    return calls or None


def _deepseek(body: str) -> list[_Call] | None:
    begin, separator, end = "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>"
    calls: list[_Call] = []
    position = 0
    while body[position:].strip():
        while body[position].isspace():
            position += 1
        if not body.startswith(begin, position):
            return None
        middle = body.find(separator, position)
        close = body.find(end, middle)
        if middle < 0 or close < 0:
            return None
        head = body[position + len(begin) : middle].strip()
        arguments = body[middle + len(separator) : close].strip()
        if head == "function":  # V3 and R1: the name, then the arguments in a json fence
            name, _, arguments = arguments.partition("\n")
            fenced = _JSON_FENCE.match(arguments.strip())
            arguments = fenced.group(1) if fenced else arguments
        else:  # V3.1: the name, then the arguments
            name = head
        calls.append(_Call(name.strip(), arguments.strip()))
        position = close + len(end)
    return calls or None
