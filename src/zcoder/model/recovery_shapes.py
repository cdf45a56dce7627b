"""The call shapes of zcoder.model.recovery, each read from one block of text.

Kept apart from the scan that finds the blocks (zcoder.model.recovery_scan) and from the
judging of what was read (zcoder.model.recovery): here are the patterns and limits they
share, and one reader per shape (JSON objects and lists, Qwen3-Coder's XML, GLM, Mistral,
Llama's python tag and pythonic lists, DeepSeek's tool tokens). A reader returns the calls
as written (``_WrittenCall``, arguments unchecked) or None when the block is not that shape.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from zcoder.base.sanitize import TOOL_CALL_OPENERS

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

_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARGUMENT_KEYS = ("arguments", "parameters", "args")
_ALSO_ALLOWED = frozenset({"id", "type"})

_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class _WrittenCall:
    """A call as the text wrote it: its arguments are not checked yet."""

    name: str
    arguments: Any


@dataclass(frozen=True)
class _Span:
    """Text from ``start`` to ``end`` that is one or more calls."""

    start: int
    end: int
    calls: tuple[_WrittenCall, ...]


_Tools = Mapping[str, Mapping[str, Any]]


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


def _calls_from_json(values: Sequence[Any]) -> list[_WrittenCall] | None:
    calls: list[_WrittenCall] = []
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


def _call_from_object(value: Any, *, wrapped: bool) -> _WrittenCall | None:
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
    return _WrittenCall(name, value[arguments[0]])


def _xml_functions(text: str, tools: _Tools) -> list[_WrittenCall] | None:
    """``<function=NAME>`` blocks (Qwen3-Coder parameters, or a JSON object as Llama)."""
    calls: list[_WrittenCall] = []
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
        calls.append(_WrittenCall(name, arguments))
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


def _glm(body: str, tools: _Tools) -> list[_WrittenCall] | None:
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
    return [_WrittenCall(name.group(), arguments)]


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


def _mistral(text: str, start: int) -> list[_WrittenCall] | int:
    """Mistral's calls from ``start`` (a ``[TOOL_CALLS]``) to the end of the text.

    When a piece is not a call, returns the end of the last bad piece: any
    ``[TOOL_CALLS]`` before it would take it in too.
    """
    marker = "[TOOL_CALLS]"
    calls: list[_WrittenCall] = []
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


def _mistral_piece(piece: str) -> list[_WrittenCall] | None:
    if piece[0] in "[{":
        values = _json_values(piece)
        return _calls_from_json(values) if values is not None else None
    match = _MISTRAL_V11.fullmatch(piece)
    if match is None:
        return None
    values = _json_values(match.group(2))
    if values is None or len(values) != 1 or not isinstance(values[0], dict):
        return None
    return [_WrittenCall(match.group(1), values[0])]


def _python_tag(body: str) -> list[_WrittenCall] | None:
    stripped = body.strip()
    if not stripped:
        return None
    if stripped[0] in "{[":
        values = _json_values(stripped)
        if values is not None:
            return _calls_from_json(values)
    return _pythonic(stripped, allow_single=True)


def _pythonic(text: str, *, allow_single: bool) -> list[_WrittenCall] | None:
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
    calls: list[_WrittenCall] = []
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
        calls.append(_WrittenCall(item.func.id, arguments))
    return calls or None


def _deepseek(body: str) -> list[_WrittenCall] | None:
    begin, separator, end = "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>"
    calls: list[_WrittenCall] = []
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
        calls.append(_WrittenCall(name.strip(), arguments.strip()))
        position = close + len(end)
    return calls or None
