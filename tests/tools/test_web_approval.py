"""fetch_url is asked like a command, with the URL shown: y once, a for that host only
(never other hosts, never in a relayed turn), n refuses and nothing is fetched;
--deny-commands refuses, --offline removes the tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from tests.fixtures.approver import ALWAYS, DENY, ONCE, RELAY, ScriptedApprover
from tests.fixtures.web_server import WebServer, web_server
from tests.fixtures.workspace import tool_context
from zcoder.agent import ChatClient
from zcoder.config import load_config
from zcoder.frontend.assembly import assemble_agent
from zcoder.tools import ApprovalPolicy, CommandPolicy, Profile, ToolResult, TurnOrigin
from zcoder.tools.web.rules import WebRules
from zcoder.tools.web.tool import FETCH_URL, WebFetcher

__all__ = ["web_server"]

RULES = WebRules(allow=("127.0.0.1", "localhost"))


class Session:
    """One run: its approval policy (and its grants) across calls."""

    def __init__(self, policy: CommandPolicy = CommandPolicy.ASK) -> None:
        self.approval = ApprovalPolicy(policy, Profile.CODING)
        self.fetcher = WebFetcher(RULES)

    async def fetch(
        self, url: str, approver: ScriptedApprover, origin: TurnOrigin = TurnOrigin.USER
    ) -> ToolResult:
        ctx = tool_context(Path("/"), origin=origin, approver=approver, approval=self.approval)
        return await self.fetcher.spec().run({"url": url}, ctx)


async def test_the_question_shows_the_url_and_y_fetches_once(web_server: WebServer) -> None:
    session, approver = Session(), ScriptedApprover(ONCE, ONCE)
    url = web_server.url("/text")
    assert (await session.fetch(url, approver)).ok
    [request] = approver.requests
    assert (request.command, request.web_host, request.allow_always) == (
        f"GET {url}",
        "127.0.0.1",
        True,
    )
    assert (await session.fetch(url, approver)).ok
    assert len(approver.requests) == 2  # y was for that one page only


async def test_n_fetches_nothing(web_server: WebServer) -> None:
    result = await Session().fetch(web_server.url("/text"), ScriptedApprover(DENY))
    assert not result.ok and "the user denied fetching this page" in result.output
    assert web_server.requests == []


async def test_a_allows_that_host_only(web_server: WebServer) -> None:
    session = Session()
    assert (await session.fetch(web_server.url("/text"), ScriptedApprover(ALWAYS))).ok
    silent = ScriptedApprover()  # fails the test if it is asked
    assert (await session.fetch(web_server.url("/page"), silent)).ok
    assert silent.requests == []
    # The same server under another name is another host: asked again, and refused.
    other = ScriptedApprover(DENY)
    result = await session.fetch(web_server.url("/text", "localhost"), other)
    assert not result.ok and [r.web_host for r in other.requests] == ["localhost"]
    assert web_server.paths() == ["/text", "/page"]


async def test_a_redirect_to_a_host_not_approved_asks_again(web_server: WebServer) -> None:
    target = web_server.url("/text", "localhost")
    approver = ScriptedApprover(ONCE, DENY)
    result = await Session().fetch(web_server.url(f"/redirect?to={target}"), approver)
    assert not result.ok and "denied" in result.output
    second = approver.requests[1]
    assert second.command == f"GET {target}" and second.web_host == "localhost"
    assert second.warning is not None and second.warning.startswith("a redirect from http://127")
    assert len(web_server.requests) == 1


async def test_a_relayed_turn_is_never_offered_a_and_ends_the_grant(
    web_server: WebServer,
) -> None:
    session = Session()
    assert (await session.fetch(web_server.url("/text"), ScriptedApprover(ALWAYS))).ok
    relayed = ScriptedApprover(ALWAYS)
    assert (await session.fetch(web_server.url("/text"), relayed, RELAY)).ok
    assert [r.allow_always for r in relayed.requests] == [False]  # the grant did not apply
    assert session.approval.revoke_always()  # what a relayed turn's end does
    again = ScriptedApprover(DENY)
    assert not (await session.fetch(web_server.url("/text"), again)).ok
    assert len(again.requests) == 1


async def test_deny_commands_refuses_without_asking(web_server: WebServer) -> None:
    approver = ScriptedApprover()
    result = await Session(CommandPolicy.DENY).fetch(web_server.url("/text"), approver)
    assert not result.ok and "--deny-commands" in result.output
    assert approver.requests == [] and web_server.requests == []


async def test_yes_fetches_without_asking(web_server: WebServer) -> None:
    approver = ScriptedApprover()
    assert (await Session(CommandPolicy.ALLOW).fetch(web_server.url("/text"), approver)).ok
    assert approver.requests == []


def _registry(tmp_path: Path, **env: str) -> Any:
    environ = {"ZCODER_WORKSPACE": str(tmp_path), "ZCODER_HOME": str(tmp_path / "home"), **env}
    agent, _extensions = assemble_agent(
        load_config(environ),
        cast(ChatClient, None),
        "m",
        approver=ScriptedApprover(),
        on_event=lambda _event: None,
        store=None,
        on_problem=lambda _problem: None,
    )
    return agent.registry


async def test_offline_removes_the_tool_and_refuses_a_call_to_it(
    tmp_path: Path, web_server: WebServer
) -> None:
    online = _registry(tmp_path, ZCODER_WEB_ALLOW="127.0.0.1", ZCODER_COMMAND_POLICY="allow")
    ctx = tool_context(tmp_path)
    assert FETCH_URL in online.schemas(ctx)[-1]["function"]["description"]  # the catalog
    assert (await online.dispatch(FETCH_URL, {"url": web_server.url("/text")}, ctx)).ok
    for env in ({"ZCODER_OFFLINE": "1"}, {"ZCODER_OFFLINE": "on"}):
        offline = _registry(tmp_path, ZCODER_WEB_ALLOW="127.0.0.1", **env)
        schemas = str(offline.schemas(ctx))
        assert FETCH_URL not in schemas
        result = await offline.dispatch(FETCH_URL, {"url": web_server.url("/page")}, ctx)
        assert not result.ok and result.metadata["error_kind"] == "unknown_tool"
    assert web_server.paths() == ["/text"]


def test_the_offline_flag_reaches_the_config(tmp_path: Path) -> None:
    environ = {"ZCODER_WORKSPACE": str(tmp_path), "ZCODER_HOME": str(tmp_path / "home")}
    assert load_config(environ, offline=True).offline
    assert not load_config(environ).offline
