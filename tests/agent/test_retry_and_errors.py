"""One retry for a connection error before any response; clear errors otherwise.

The retry rule is the agent's own, and one server cannot refuse a connection and then
accept it, so these tests use a small ChatClient stub (the agent's protocol); the model
errors themselves come through the fake Ollama.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from tests.agent.support import EventLog, Harness
from tests.fixtures.approver import ScriptedApprover
from tests.fixtures.fake_ollama import Turn
from zcoder.agent import Agent, AgentSettings, AssistantMessage, ErrorNotice, Notice, Outcome
from zcoder.model import (
    ChatEvent,
    ContentDelta,
    Done,
    Message,
    ModelConnectionError,
    ModelError,
    OllamaUnreachable,
)
from zcoder.tools import ApprovalPolicy, CommandPolicy, Profile, default_registry


class StubClient:
    """Plays one script entry per chat() call: an exception, or events then maybe one."""

    def __init__(self, *script: list[ChatEvent | ModelError] | ModelError) -> None:
        self.script = list(script)
        self.calls: list[list[Message]] = []

    async def _play(
        self, entry: list[ChatEvent | ModelError] | ModelError
    ) -> AsyncIterator[ChatEvent]:
        if isinstance(entry, ModelError):
            raise entry
        for item in entry:
            if isinstance(item, ModelError):
                raise item
            yield item

    def chat(
        self, model: str, messages: Sequence[Message], **params: Any
    ) -> AsyncIterator[ChatEvent]:
        self.calls.append(list(messages))
        return self._play(self.script.pop(0))


def stub_agent(client: StubClient, workspace: Path) -> tuple[Agent, EventLog]:
    log = EventLog()
    agent = Agent(
        client=client,
        registry=default_registry(),
        settings=AgentSettings(
            model="m", workspace=workspace, profile=Profile.CODING, retry_delay=0
        ),
        approval=ApprovalPolicy(CommandPolicy.DENY, Profile.CODING),
        approver=ScriptedApprover(),
        on_event=log,
    )
    return agent, log


def reply(text: str) -> list[ChatEvent | ModelError]:
    return [ContentDelta(text), Done(done_reason="stop")]


async def test_a_refused_connection_is_retried_once(workspace: Path) -> None:
    client = StubClient(OllamaUnreachable("http://127.0.0.1:9"), reply("hello"))
    agent, log = stub_agent(client, workspace)
    finished = await agent.run_user_turn("hi")

    assert finished.outcome is Outcome.COMPLETE
    assert finished.response == "hello"
    assert len(client.calls) == 2
    assert client.calls[0] == client.calls[1]
    assert any("retrying once" in n.text for n in log.of(Notice))


async def test_a_second_refusal_is_not_retried_again(workspace: Path) -> None:
    down = OllamaUnreachable("http://127.0.0.1:9")
    client = StubClient(down, down, reply("never"))
    agent, log = stub_agent(client, workspace)
    finished = await agent.run_user_turn("hi")

    assert finished.outcome is Outcome.ERROR
    assert finished.error == str(down)
    assert "start it with `ollama serve`" in finished.error
    assert len(client.calls) == 2
    assert [e.text for e in log.of(ErrorNotice)] == [str(down)]


async def test_a_break_after_the_reply_began_is_not_retried(workspace: Path) -> None:
    broke = ModelConnectionError("broke during the reply", before_response=True)
    client = StubClient([ContentDelta("Half an ans"), broke], reply("never"))
    agent, log = stub_agent(client, workspace)
    finished = await agent.run_user_turn("hi")

    assert finished.outcome is Outcome.ERROR
    assert len(client.calls) == 1
    # What streamed is kept as partial in the transcript, never in the history.
    assert log.of(AssistantMessage) == [AssistantMessage("Half an ans", partial=True)]
    assert agent.messages == [{"role": "user", "content": "hi"}]


async def test_errors_that_reached_the_server_are_not_retried(workspace: Path) -> None:
    client = StubClient(
        ModelConnectionError("broke during the reply", before_response=False), reply("no")
    )
    agent, _ = stub_agent(client, workspace)
    assert (await agent.run_user_turn("hi")).outcome is Outcome.ERROR
    assert len(client.calls) == 1


async def test_model_not_found_ends_the_turn_with_the_pull_hint(harness: Harness) -> None:
    harness.server.enqueue(Turn.http_error(404))
    finished = await harness.agent.run_user_turn("hi")

    assert finished.outcome is Outcome.ERROR
    assert finished.error == "model 'qwen3-coder' not found; run `ollama pull qwen3-coder`"
    assert len(harness.bodies()) == 1
    assert [e.role for e in harness.load().events] == ["user", "error"]


async def test_a_mid_stream_error_is_asked_again_once_then_reported(harness: Harness) -> None:
    harness.server.enqueue(
        Turn.error_midstream("out of memory", before="Let me look "),
        Turn.error_midstream("out of memory", before="Let me look "),
    )
    finished = await harness.agent.run_user_turn("hi")

    assert finished.outcome is Outcome.ERROR
    assert "out of memory" in finished.error
    assert len(harness.bodies()) == 2
    data = harness.load()
    # Each partial text is kept, marked partial, and never sent back to the model.
    assert [(e.role, e.metadata) for e in data.events] == [
        ("user", {}),
        ("assistant", {"partial": True}),
        ("assistant", {"partial": True}),
        ("error", {}),
    ]
    assert data.messages == [{"role": "user", "content": "hi"}]


async def test_a_malformed_reply_is_asked_again_once(harness: Harness) -> None:
    harness.server.enqueue(Turn.malformed("{not json"), Turn.text("fine now"))
    finished = await harness.agent.run_user_turn("hi")

    assert finished.outcome is Outcome.COMPLETE and finished.response == "fine now"
    assert len(harness.bodies()) == 2
    assert any("asking again once" in n.text for n in harness.log.of(Notice))


async def test_a_model_without_tools_says_so(harness: Harness) -> None:
    harness.server.enqueue(Turn.http_error(400))
    finished = await harness.agent.run_user_turn("hi")
    assert finished.error == (
        "model 'qwen3-coder' does not support tools; choose a model that supports tool calling"
    )
