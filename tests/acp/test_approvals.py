"""The ACP approver in-process: what a permission request carries, which options it offers,
and that anything but a clear allow of an offered option is a denial."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from tests.relay.test_names import _peer
from zcoder.acp.approvals import AcpApprover
from zcoder.acp.updates import EventTranslator, Update, UpdatePump
from zcoder.agent.events import ToolStarted
from zcoder.tools import (
    ApprovalDecision,
    CommandApprovalRequest,
    EditApprovalRequest,
    Profile,
    TurnOrigin,
)


class Asker:
    """A client: answers with ``answer`` (an option id, "cancelled"), or raises it."""

    def __init__(self, answer: str | BaseException, log: list[str]) -> None:
        self.answer = answer
        self.log = log
        self.asked: list[tuple[ToolCallUpdate, list[PermissionOption]]] = []

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        self.log.append("asked")
        self.asked.append((tool_call, options))
        if isinstance(self.answer, BaseException):
            raise self.answer
        if self.answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.answer)
        )


def approver(answer: str | BaseException) -> tuple[AcpApprover, Asker, list[str]]:
    log: list[str] = []

    async def send(update: Update) -> None:
        log.append(update.session_update)

    translator = EventTranslator(Path("/ws"))
    pump = UpdatePump(send)
    pump.put(translator(ToolStarted("call-1", "run_command", {"command": "make"})))
    asker = Asker(answer, log)
    return AcpApprover("s1", asker, pump, translator, lambda: None), asker, log


def command(**overrides: Any) -> CommandApprovalRequest:
    fields: dict[str, Any] = {
        "command": "make test",
        "cwd": Path("/ws/sub"),
        "timeout_seconds": 120.0,
        "allow_always": True,
        "origin": TurnOrigin.USER,
        "profile": Profile.CODING,
    }
    fields.update(overrides)
    return CommandApprovalRequest(**fields)


async def test_the_client_knows_the_call_before_it_is_asked_about_it() -> None:
    acp_approver, asker, log = approver("allow_once")
    assert await acp_approver.approve_command(command()) is ApprovalDecision.ONCE
    assert log[:2] == ["tool_call", "asked"]
    ((tool_call, options),) = asker.asked
    assert tool_call.tool_call_id == "call-1"
    assert [o.option_id for o in options] == ["allow_once", "allow_always", "reject_once"]
    assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once"]


async def test_a_relayed_command_shows_its_sender_and_offers_no_always() -> None:
    acp_approver, asker, _ = approver("allow_always")
    request = command(
        allow_always=False,
        origin=TurnOrigin.RELAY,
        requested_by="from api (pid 4242, /src/api)",
        warning="it deletes files outside the workspace",
    )
    # "allow always" was not offered: choosing it anyway allows nothing.
    assert await acp_approver.approve_command(request) is ApprovalDecision.DENY
    ((tool_call, options),) = asker.asked
    assert [o.option_id for o in options] == ["allow_once", "reject_once"]
    shown = tool_call.content[0].content.text  # type: ignore[index]
    # Paragraphs and a code block: each stays on its own line where Markdown is rendered.
    assert shown.split("\n\n") == [
        "Asked by a task relayed from api (pid 4242, /src/api).",
        "Run this command in /ws/sub?",
        "```\n$ make test\n```",
        "warning: it deletes files outside the workspace",
    ]


@pytest.mark.parametrize(
    "answer",
    ["reject_once", "cancelled", "something_else", ConnectionError("client gone")],
)
async def test_anything_but_an_offered_allow_is_a_denial(answer: str | BaseException) -> None:
    acp_approver, _, _ = approver(answer)
    assert await acp_approver.approve_command(command()) is ApprovalDecision.DENY


async def test_allow_always_is_always_where_offered() -> None:
    acp_approver, _, _ = approver("allow_always")
    assert await acp_approver.approve_command(command()) is ApprovalDecision.ALWAYS


async def test_an_edit_without_text_diffs_shows_zcoders_unified_diff() -> None:
    acp_approver, asker, _ = approver("allow_once")
    request = EditApprovalRequest(
        tool="write_file",
        paths=("logo.png",),
        diff="Binary file logo.png changed",
        allow_turn=False,
        origin=TurnOrigin.USER,
    )
    assert await acp_approver.approve_edit(request) is ApprovalDecision.ONCE
    ((tool_call, options),) = asker.asked
    assert tool_call.kind == "edit"
    assert tool_call.content[0].content.text == "Binary file logo.png changed"  # type: ignore[index]
    assert [o.option_id for o in options] == ["allow_once", "reject_once"]


async def test_a_send_that_asks_to_steer_says_so_in_the_permission_request() -> None:
    peer = dataclasses.replace(_peer("4242-1", "api", "api"), state="busy")
    acp, asker, _ = approver("allow_once")
    assert await acp.confirm_send(peer, "look again", steer=True)
    assert await acp.confirm_send(peer, "look again")
    (steered, _), (plain, _) = asker.asked
    note = "Steering: it joins api's running turn at its next safe point"
    assert note in steered.content[0].content.text  # type: ignore[index]
    assert "Steering" not in plain.content[0].content.text  # type: ignore[index]


async def test_a_background_command_says_so_and_carries_it_for_connect() -> None:
    acp_approver, asker, _ = approver("allow_once")
    request = command(allow_always=False, background=True)
    assert await acp_approver.approve_command(request) is ApprovalDecision.ONCE
    ((tool_call, options),) = asker.asked
    assert [o.option_id for o in options] == ["allow_once", "reject_once"]
    shown = tool_call.content[0].content.text  # type: ignore[index]
    assert shown.startswith("Run this command in the background (it keeps running) in /ws/sub?")
    assert tool_call.raw_input["background"] is True  # type: ignore[index]
    # A foreground command's request is as it always was: no such key.
    plain, asker2, _ = approver("allow_once")
    await plain.approve_command(command())
    assert "background" not in asker2.asked[0][0].raw_input  # type: ignore[operator]


async def test_a_web_page_is_asked_with_its_url_and_always_names_the_host_only() -> None:
    acp_approver, asker, _ = approver("allow_always")
    request = command(command="GET https://docs.example.com/api", web_host="docs.example.com")
    assert await acp_approver.approve_command(request) is ApprovalDecision.ALWAYS
    ((tool_call, options),) = asker.asked
    assert tool_call.kind == "fetch" and tool_call.title == "GET https://docs.example.com/api"
    assert (tool_call.raw_input or {})["web_host"] == "docs.example.com"
    assert [o.option_id for o in options] == ["allow_once", "allow_always", "reject_once"]
    plain, plain_asker, _ = approver("allow_once")
    await plain.approve_command(command())
    assert "web_host" not in (plain_asker.asked[0][0].raw_input or {})  # commands: as before
    shown = tool_call.content[0].content.text  # type: ignore[index]
    assert shown.split("\n\n") == [
        "Fetch this web page?",
        "```\nGET https://docs.example.com/api\n```",
        "Allow always: pages of docs.example.com for the rest of the run.",
    ]
