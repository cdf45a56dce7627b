"""What the client sends for the window, and the fake Ollama's window and token counts."""

from __future__ import annotations

from typing import Any

from tests.fixtures.fake_ollama import FakeOllama, Turn, call, count_tokens
from zcoder.model import (
    AssistantReply,
    Done,
    OllamaClient,
    build_chat_request,
    system_message,
    tool_result_message,
    user_message,
)
from zcoder.model.types import ToolCall

MODEL = "qwen3-coder"
SYSTEM = system_message("You are a test.")


def test_num_ctx_goes_in_options_and_keep_alive_at_the_top() -> None:
    body = build_chat_request(
        MODEL, [SYSTEM], num_predict=1, num_ctx=32768, keep_alive="30m", options={"seed": 1}
    )
    assert body["options"] == {"seed": 1, "num_predict": 1, "num_ctx": 32768}
    assert body["keep_alive"] == "30m"
    plain = build_chat_request(MODEL, [SYSTEM])
    assert "options" not in plain and "keep_alive" not in plain
    assert build_chat_request(MODEL, [SYSTEM], keep_alive=0)["keep_alive"] == 0


async def chat(client: OllamaClient, messages: list[dict[str, Any]], **kwargs: Any) -> Done:
    reply = AssistantReply()
    async for event in client.chat(MODEL, messages, **kwargs):
        reply.add(event)
    assert reply.done is not None
    return reply.done


async def test_ps_reports_the_num_ctx_the_model_was_loaded_with(
    fake: FakeOllama, client: OllamaClient
) -> None:
    assert await client.running_models() == []
    fake.enqueue(Turn.text("hi"), Turn.text("again"))
    await chat(client, [SYSTEM, user_message("hi")], num_ctx=16384)
    assert await client.loaded_context_length(MODEL) == 16384
    [entry] = await client.running_models()
    assert entry["name"] == "qwen3-coder:latest"
    assert fake.loads == {"qwen3-coder:latest": 1}
    await chat(client, [SYSTEM, user_message("hi")], num_ctx=16384)
    assert fake.loads == {"qwen3-coder:latest": 1}  # the same num_ctx: no reload


async def test_warm_up_loads_the_model_as_the_first_turn_will(
    fake: FakeOllama, client: OllamaClient
) -> None:
    tool = {"type": "function", "function": {"name": "noop", "parameters": {}}}
    await client.warm_up(MODEL, [SYSTEM], tools=[tool], think=False, num_ctx=16384, keep_alive="5m")
    (body,) = fake.load_requests
    assert body["messages"] == [SYSTEM] and body["tools"] == [tool]
    assert body["options"] == {"num_predict": 1, "num_ctx": 16384}
    assert (body["think"], body["keep_alive"]) == (False, "5m")
    assert await client.loaded_context_length(MODEL) == 16384
    assert fake.pending == 0  # no scripted turn was used


async def test_without_num_ctx_ollama_uses_its_own_default(
    fake: FakeOllama, client: OllamaClient
) -> None:
    fake.enqueue(Turn.text("hi"))
    await chat(client, [SYSTEM, user_message("hi")])
    assert await client.loaded_context_length(MODEL) == 4096


async def test_num_ctx_is_clamped_to_the_trained_length_and_allocations_win(
    fake: FakeOllama, client: OllamaClient
) -> None:
    fake.context_lengths[MODEL] = 8192
    fake.enqueue(Turn.text("hi"), Turn.text("hi"))
    await chat(client, [SYSTEM, user_message("hi")], num_ctx=32768)
    assert await client.loaded_context_length(MODEL) == 8192
    fake.allocations[MODEL] = 2048  # a server limit, whatever is asked
    await chat(client, [SYSTEM, user_message("hi")], num_ctx=32768)
    assert await client.loaded_context_length(MODEL) == 2048
    assert fake.loads["qwen3-coder:latest"] == 2


async def test_keep_alive_zero_unloads(fake: FakeOllama, client: OllamaClient) -> None:
    async for _ in client.chat(MODEL, [], keep_alive=0):
        pass
    assert await client.running_models() == []


async def test_show_reports_the_trained_length(fake: FakeOllama, client: OllamaClient) -> None:
    show = await client.show_model(MODEL)
    assert show["model_info"]["general.architecture"] == "fake"
    assert show["model_info"]["fake.context_length"] == 40960
    fake.context_lengths[MODEL] = None
    assert await client.trained_context_length(MODEL) is None


async def test_prompt_eval_count_grows_with_the_history(
    fake: FakeOllama, client: OllamaClient
) -> None:
    first = [SYSTEM, user_message("list the files")]
    wire = call("list_files", {"path": "."}, id="c1")
    called = ToolCall("c1", "list_files", {"path": "."})
    second = [
        *first,
        {"role": "assistant", "content": "", "tool_calls": [wire]},
        tool_result_message(called, "alpha.txt\nbeta.py\n"),
    ]
    fake.enqueue(Turn.tool_calls(wire), Turn.text("Two files."))
    done1 = await chat(client, first, num_ctx=16384)
    done2 = await chat(client, second, num_ctx=16384)
    assert done1.prompt_eval_count == count_tokens({"messages": first})
    assert done2.prompt_eval_count == count_tokens({"messages": second})
    assert done2.prompt_eval_count is not None and done1.prompt_eval_count is not None
    assert done2.prompt_eval_count > done1.prompt_eval_count
    assert (done1.done_reason, done1.eval_count) == ("stop", 20)


def test_tool_schemas_count_too() -> None:
    schema = {"type": "function", "function": {"name": "list_files", "parameters": {}}}
    bare = {"messages": [SYSTEM]}
    assert count_tokens({**bare, "tools": [schema]}) > count_tokens(bare)


async def test_a_prompt_longer_than_the_window_is_counted_up_to_it(
    fake: FakeOllama, client: OllamaClient
) -> None:
    fake.allocations[MODEL] = 2048
    fake.enqueue(Turn.text("ok"))
    done = await chat(client, [SYSTEM, user_message("word " * 5000)], num_ctx=2048)
    assert done.prompt_eval_count == 2048


async def test_reaching_num_predict_is_a_length_stop_unless_scripted(
    fake: FakeOllama, client: OllamaClient
) -> None:
    fake.enqueue(
        Turn.text("one two three four", eval_count=4),
        Turn.text("x", done_reason="stop", eval_count=4, prompt_eval_count=7),
    )
    cut = await chat(client, [SYSTEM, user_message("count")], num_predict=4)
    assert cut.done_reason == "length"
    scripted = await chat(client, [SYSTEM, user_message("count")], num_predict=4)
    assert (scripted.done_reason, scripted.prompt_eval_count) == ("stop", 7)


async def test_a_system_only_chat_is_a_load_that_uses_no_scripted_turn(
    fake: FakeOllama, client: OllamaClient
) -> None:
    schema = {"type": "function", "function": {"name": "list_files", "parameters": {}}}
    done = await chat(client, [SYSTEM], tools=[schema], num_predict=1, num_ctx=8192)
    assert done.prompt_eval_count == count_tokens({"messages": [SYSTEM], "tools": [schema]})
    assert (done.eval_count, done.done_reason) == (1, "length")
    assert fake.pending == 0 and fake.chat_bodies == []
    [load] = fake.load_requests
    assert load["options"]["num_ctx"] == 8192
    assert await client.loaded_context_length(MODEL) == 8192
