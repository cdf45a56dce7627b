"""Recovery of tool calls and reasoning written as text, on real-shaped model outputs.

Each file in tests/fixtures/model_outputs/ holds one family's outputs (the content string
as Ollama streams it), where the shape is documented, and what recovery must make of
each: the calls, the content left and the thinking, or ``"text"`` when the reply must come
back unchanged. The tools are the real built-in ones, with their real schemas.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zcoder.model import AssistantReply, Done, ToolCall, parse_tool_call, recovery
from zcoder.model.recovery import recover, split_thinking
from zcoder.tools import default_registry

FIXTURES = Path(__file__).parent.parent / "fixtures" / "model_outputs"
REGISTRY = default_registry()
SCHEMAS = [spec.schema() for spec in map(REGISTRY.get, REGISTRY.names()) if spec is not None]
TOOL_NAMES = frozenset(REGISTRY.names())


def _cases() -> list[Any]:
    params = []
    for path in sorted(FIXTURES.glob("*.json")):
        data = json.loads(path.read_text())
        for case in data["cases"]:
            params.append(pytest.param(case, id=f"{path.stem}/{case['id']}"))
    return params


CASES = _cases()


def _reply(case: dict[str, Any]) -> AssistantReply:
    native = [
        parse_tool_call(raw, ordinal=n) for n, raw in enumerate(case.get("native_tool_calls", []))
    ]
    return AssistantReply(
        content=case["content"],
        thinking=case.get("native_thinking", ""),
        tool_calls=native,
        done=Done("stop"),
    )


def test_the_fixtures_cover_the_families_and_the_negatives() -> None:
    families = {path.stem for path in FIXTURES.glob("*.json")}
    assert {
        "qwen2.5-coder",
        "qwen3-coder",
        "llama3",
        "mistral",
        "deepseek-r1",
        "hermes",
    } <= families
    assert "negative" in families
    for path in FIXTURES.glob("*.json"):
        data = json.loads(path.read_text())
        assert data["cases"], path.name
        if path.stem != "negative":
            assert data["documented"], f"{path.name} says where its shapes are documented"
        for case in data["cases"]:
            expect = case["expect"]
            if expect == "text":
                continue
            for call in expect["calls"]:
                assert call["name"] in TOOL_NAMES, (path.name, case["id"])


@pytest.mark.parametrize("case", CASES)
def test_recovery_on_real_shaped_outputs(case: dict[str, Any]) -> None:
    reply = _reply(case)
    recovered = recover(reply, SCHEMAS)
    expect = case["expect"]
    if expect == "text":
        assert recovered is reply
        assert recovered.content == case["content"]
        return
    native = reply.tool_calls
    added = recovered.tool_calls[len(native) :]
    assert recovered.tool_calls[: len(native)] == native
    assert [(call.name, call.arguments) for call in added] == [
        (call["name"], call["arguments"]) for call in expect["calls"]
    ]
    assert [call.id for call in added] == [f"recovered_{n}" for n in range(len(added))]
    assert all(call.arguments_error is None for call in added)
    assert recovered.content == expect["content"]
    assert recovered.thinking == expect["thinking"]
    assert recovered.done == reply.done
    # The reply as it came is left alone.
    assert reply.content == case["content"]


def test_a_recovered_call_goes_to_history_as_a_real_tool_call() -> None:
    call = '{"name": "read_file", "arguments": {"path": "a.py"}}'
    reply = AssistantReply(content=f"I will read it.\n\n```json\n{call}\n```")
    message = recover(reply, SCHEMAS).to_message()
    assert message == {
        "role": "assistant",
        "content": "I will read it.",
        "tool_calls": [
            {"id": "recovered_0", "function": {"name": "read_file", "arguments": {"path": "a.py"}}}
        ],
    }


def test_only_the_tools_offered_can_be_recovered() -> None:
    reply = AssistantReply(content='{"name": "run_command", "arguments": {"command": "ls"}}')
    offered = [schema for schema in SCHEMAS if schema["function"]["name"] != "run_command"]
    assert recover(reply, offered) is reply
    assert recover(reply, []) is reply
    assert recover(reply, SCHEMAS).tool_calls[0].name == "run_command"


def test_arguments_keep_what_the_model_wrote_with_the_registry_type_fixes() -> None:
    reply = AssistantReply(
        content='{"name": "list_files", "arguments": {"path": "src", "max_entries": "20"}}'
    )
    [call] = recover(reply, SCHEMAS).tool_calls
    # "20" is read as 20, as dispatch would; the default of no other argument is added.
    assert call.arguments == {"path": "src", "max_entries": 20}


def test_split_thinking() -> None:
    assert split_thinking("<think>a</think>b") == ("a", "b")
    assert split_thinking("  <think>\na\n</think>\n\nb") == ("a", "b")
    assert split_thinking("a\n</think>\nb") == ("a", "b")
    assert split_thinking("plain") == (None, "plain")
    assert split_thinking("x <think>a</think>") == (None, "x <think>a</think>")


def test_real_tool_calls_keep_recovery_of_calls_away_but_thinking_still_moves() -> None:
    native = ToolCall(id="call_0", name="list_files", arguments={})
    reply = AssistantReply(
        content='<think>hm</think>\n{"name": "read_file", "arguments": {"path": "a"}}',
        tool_calls=[native],
    )
    recovered = recover(reply, SCHEMAS)
    assert recovered.tool_calls == [native]
    assert recovered.thinking == "hm"
    assert recovered.content == '{"name": "read_file", "arguments": {"path": "a"}}'


def test_a_fault_inside_recovery_keeps_the_reply(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: Any) -> AssistantReply:
        raise RuntimeError("bug")

    monkeypatch.setattr(recovery, "_recover", broken)
    reply = AssistantReply(content='{"name": "read_file", "arguments": {"path": "a"}}')
    assert recovery.recover(reply, SCHEMAS) is reply


def test_deep_nesting_does_not_break_recovery() -> None:
    for text in ("[" * 100_000, "{" * 100_000, "[" + "(" * 50_000, '{"a":' * 50_000):
        reply = AssistantReply(content=text)
        assert recover(reply, SCHEMAS) is reply


# -- properties -------------------------------------------------------------------------

_FRAGMENTS = [
    "{",
    "}",
    "[",
    "]",
    '"name": ',
    '"arguments": ',
    '"parameters": ',
    '"function": ',
    '"type": "function", ',
    '{"path": "a"}',
    "{}",
    ", ",
    "; ",
    ":",
    "\n",
    "  ",
    "```",
    "```json\n",
    "```tool_code\n",
    "<tool_call>",
    "</tool_call>",
    "<|tool_call|>",
    "<function=",
    "</function>",
    "<parameter=",
    "</parameter>",
    "<arg_key>",
    "<arg_value>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "<|python_tag|>",
    "<|python_start|>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
    "<think>",
    "</think>",
    "(",
    ")",
    "=",
    '"',
    "'",
    "x",
    "1",
    "true",
    "null",
]
# Names that are not tools (and contain none): a call could only be invented.
_NOT_TOOLS = st.sampled_from(["weather", "get_time", "fetch", "zz", "Read", "list", "file"])
_NOISE = st.lists(
    st.one_of(st.sampled_from(_FRAGMENTS), _NOT_TOOLS.map(json.dumps), _NOT_TOOLS),
    max_size=40,
).map("".join)
_ANY_TEXT = st.one_of(_NOISE, st.text(max_size=300))


@settings(max_examples=400, deadline=None)
@given(_ANY_TEXT)
def test_recovery_never_raises_and_never_invents_a_call(text: str) -> None:
    reply = AssistantReply(content=text)
    # Without recover()'s safety net, so that a fault would show here.
    recovered = recovery._recover(reply, recovery._parameters_by_name(SCHEMAS))
    for call in recovered.tool_calls:
        assert call.name in text
        assert call.name in TOOL_NAMES
    if not any(name in text for name in TOOL_NAMES):
        assert recovered.tool_calls == []
    if recovered.tool_calls == [] and split_thinking(text)[0] is None:
        assert recovered is reply


@settings(max_examples=200, deadline=None)
@given(
    st.text(max_size=60).filter(lambda s: "<think>" not in s and "</think>" not in s),
    st.sampled_from(["read_file", "list_files", "search"]),
)
def test_text_without_a_call_shape_stays_as_it_came(prose: str, name: str) -> None:
    # A tool's name in plain prose is not a call.
    reply = AssistantReply(content=f"{prose} I would use {name} here. {prose}")
    assert recover(reply, SCHEMAS) is reply


@pytest.mark.parametrize(
    "before", ["[TOOL_CALLS]", "[TOOL_CALLS] [TOOL_CALLS]x", "[TOOL_CALLS]not json\n[TOOL_CALLS]"]
)
def test_a_fenced_call_after_a_mistral_marker_that_starts_no_call_is_recovered(
    before: str,
) -> None:
    block = '```json\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```'
    recovered = recover(AssistantReply(content=f"{before}\n{block}\n"), SCHEMAS)
    assert [(call.name, call.arguments) for call in recovered.tool_calls] == [
        ("read_file", {"path": "a.py"})
    ]


def test_many_mistral_markers_that_start_no_call_cost_linear_work() -> None:
    text = (
        "[TOOL_CALLS]x " * 20_000
        + '\n```json\n{"name": "read_file", "arguments": {"path": "a"}}\n```'
    )
    recovered = recover(AssistantReply(content=text), SCHEMAS)
    assert [call.name for call in recovered.tool_calls] == ["read_file"]


# Any text, and text made of the markers other formats open calls with (a random run once
# found "[TOOL_CALLS]" before the fence swallowing the call).
_PROSE_AROUND_A_CALL = st.text(max_size=80) | st.lists(
    st.sampled_from(
        [
            "[TOOL_CALLS]",
            "<tool_call>",
            "<function=",
            "<|python_tag|>",
            "{",
            "[",
            "\n",
            " ",
            "read_file",
            "x",
            '"',
            "]",
            "}",
        ]
    ),
    max_size=12,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(_PROSE_AROUND_A_CALL, _PROSE_AROUND_A_CALL)
def test_a_fenced_call_is_recovered_whatever_prose_surrounds_it(before: str, after: str) -> None:
    block = '```json\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```'
    reply = AssistantReply(content=f"{before}\n{block}\n{after}")
    recovered = recover(reply, SCHEMAS)
    names = [call.name for call in recovered.tool_calls]
    # Prose can open a fence or a think block of its own around the call, or a call
    # wrapper with another call in it (judged whole: the next test); otherwise the call is
    # recovered and the prose kept.
    wrapped = "<tool_call>" in before and "<function=" in after
    if "```" not in before + after and "think>" not in before + after and not wrapped:
        assert names == ["read_file"]
        assert block not in recovered.content


def test_a_wrapper_around_a_call_and_a_call_of_no_tool_is_judged_whole() -> None:
    """A random run found it: ``<tool_call>`` before the fence and ``<function=0>`` after
    make one wrapper holding two calls, one naming no tool, so neither is recovered (a
    span of calls is recovered whole or not at all) and the text stays as it was."""
    block = '```json\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```'
    text = f"<tool_call>\n{block}\n<function=0>"
    recovered = recover(AssistantReply(content=text), SCHEMAS)
    assert recovered.tool_calls == [] and recovered.content == text
    alone = recover(AssistantReply(content=f"<tool_call>\n{block}"), SCHEMAS)
    assert [call.name for call in alone.tool_calls] == ["read_file"]


@pytest.mark.parametrize(
    "fragment",
    [
        "[\n",
        '{"name": [\n',
        "<tool_call><function=a>",
        "<function=read_file><parameter=x>",
        "[TOOL_CALLS]x",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>x",
        "<|python_tag|>{",
        "```json\n{\n",
        "[read_file(\n",
    ],
)
def test_a_model_stuck_repeating_a_fragment_gets_its_text_back(fragment: str) -> None:
    # Degenerate repetition is how small models fail; recovery reads it in bounded work
    # (each opener once, small JSON windows), so this finishes well within the timeout.
    text = fragment * (200_000 // len(fragment))
    reply = AssistantReply(content=text)
    assert recover(reply, SCHEMAS) is reply
