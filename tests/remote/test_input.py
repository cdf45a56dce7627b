"""RemoteAgent.steer's answer to the TUI: True when the remote's running turn took the
text; False when it could not (nothing ran there any more, an older remote zcoder without
``_zcoder/input``, the connection gone), so the TUI sends it as a prompt instead; the
remote's refusal of the text itself (too long) is raised, for the TUI to show."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acp import RequestError

from zcoder.base.ssh_target import Target
from zcoder.remote.agent import RemoteAgent
from zcoder.remote.connection import ConnectionLost


class Answering:
    """The connection's ``_zcoder/input`` call, answering as the remote would."""

    def __init__(self, error: Exception | None) -> None:
        self.error = error
        self.dropped = asyncio.Event()
        self.sent: list[tuple[str, str, dict[str, Any]]] = []

    async def input(self, session_id: str, action: str, **params: Any) -> dict[str, Any]:
        self.sent.append((session_id, action, params))
        if self.error is not None:
            raise self.error
        return {"waiting": [{"number": 1, "kind": "steer", "text": "x", "held": False}]}


def remote_with(connection: Answering) -> RemoteAgent:
    agent = RemoteAgent(
        Target("box"),
        {},
        on_event=lambda _e: None,
        on_user=lambda _t: None,
        approver=None,  # type: ignore[arg-type]  # nothing is asked here
        on_dropped=lambda _w: None,
    )
    agent.connection = connection  # type: ignore[assignment]
    agent.session_id = "s1"
    return agent


@pytest.mark.parametrize(
    ("error", "taken"),
    [
        (None, True),
        (RequestError.invalid_request({"details": "no turn", "reason": "idle"}), False),
        (RequestError.method_not_found("_zcoder/input"), False),  # an older remote zcoder
        (ConnectionLost("gone"), False),
    ],
)
async def test_steer_says_whether_the_remote_turn_took_it(
    error: Exception | None, taken: bool
) -> None:
    connection = Answering(error)
    assert await remote_with(connection).steer("use tabs") is taken
    assert connection.sent == [("s1", "steer", {"text": "use tabs"})]


async def test_a_refused_text_is_raised_for_the_tui_to_show() -> None:
    refusal = RequestError.invalid_params({"details": "the text is 100,001 characters"})
    with pytest.raises(RequestError) as raised:
        await remote_with(Answering(refusal)).steer("x" * 100_001)
    assert raised.value.data == {"details": "the text is 100,001 characters"}


async def test_without_a_connection_nothing_is_sent_and_steer_says_so() -> None:
    connection = Answering(None)
    agent = remote_with(connection)
    connection.dropped.set()
    assert await agent.steer("use tabs") is False
    assert connection.sent == []
