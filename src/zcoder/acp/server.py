"""``zcoder --acp``: zcoder as an Agent Client Protocol agent over standard input and output.

Editors (Zed, JetBrains, Neovim's CodeCompanion, Emacs) and scripts start ``zcoder --acp``
and speak ACP to it; this module is the agent side of that protocol, on the reference
SDK (module ``acp``): ``initialize`` says what zcoder does (loads sessions; takes text and
text files in prompts, and images when the model takes them, no audio; the MCP servers
the client passes, stdio and HTTP), ``session/new`` and
``session/load`` open a zcoder session (zcoder.acp.session) in the client's ``cwd`` with
the settings zcoder has from its flags and environment, ``session/prompt`` runs one user
turn, ``session/cancel`` stops it.

Each session is an interactive instance for the relay (zcoder.acp.relay): it publishes
itself as a peer in its workspace, its model has the relay tools, and the tasks other
zcoders hand it run as turns the editor sees. zcoder's commands that make sense without
the TUI are the session's available commands (zcoder.acp.commands).

Whatever happens to the client, the process ends cleanly: when its input ends (the
client closed it, or died), the SDK's connection closes, every open session's turn is
cancelled and saved, locks and model connections are let go, and ``run_acp`` returns 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, cast

import acp
from acp import PROTOCOL_VERSION, RequestError, run_agent
from acp.agent.connection import AgentSideConnection
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionListCapabilities,
    SetSessionModeResponse,
)

from zcoder import __version__
from zcoder.acp.extensions import extension_method, extensions_offered
from zcoder.acp.input import INPUT, parse_input
from zcoder.acp.listing import list_page
from zcoder.acp.modes import session_modes, set_session_mode
from zcoder.acp.notices import ClientOffers, SessionNotice, notice_message
from zcoder.acp.prompts import PromptBlock
from zcoder.acp.session import AcpSession, workspace_of
from zcoder.acp.transport import StdioTransport, open_stdio, take_stdio
from zcoder.acp.updates import Update, plan_update, replay
from zcoder.base.logfile import setup_logging
from zcoder.config import Config, ConfigError, load_config
from zcoder.model import ModelError, make_client
from zcoder.model.protocol import VisionProbe
from zcoder.sessions import SessionStore, SessionStoreError
from zcoder.tools import ApprovalPolicy

log = logging.getLogger(__name__)

VISION_ASK: Final = 5.0
"""Seconds initialize waits for the model server to say whether the model takes images."""


@dataclass(frozen=True)
class AcpOptions:
    """The command line's settings, applied to every session's workspace in turn."""

    env: Mapping[str, str]
    flags: dict[str, Any] = field(default_factory=dict)
    """load_config's keyword arguments from the flags (model, host, profile, yes...)."""
    keep_model: bool = False
    """``-m`` was given: a loaded session keeps it rather than its saved model."""

    def config_for(self, cwd: str) -> Config:
        workspace = workspace_of(cwd)
        try:
            return load_config(self.env, workspace=str(workspace), **self.flags)
        except ConfigError as exc:
            raise RequestError.invalid_params({"details": str(exc)}) from None


class ZcoderAgent:
    """The ACP agent: sessions by id, each a zcoder session (zcoder.acp.session)."""

    def __init__(
        self, options: AcpOptions, store: SessionStore, transport: StdioTransport | None = None
    ) -> None:
        self.options = options
        self.store = store
        self.sessions: dict[str, AcpSession] = {}
        self._conn: AgentSideConnection | None = None
        # Notices go out as the protocol's own update to a client that takes them: written
        # on the transport, since the SDK does not know them (acp/notices.py).
        self._transport = transport
        self.offers = transport.offers if transport is not None else ClientOffers()

    def on_connect(self, conn: AgentSideConnection) -> None:
        self._conn = conn

    def _client(self) -> AgentSideConnection:
        if self._conn is None:
            raise RequestError.internal_error({"details": "not connected"})
        return self._conn

    def _sender(self, session_id: Callable[[], str]) -> Callable[[Update], Any]:
        conn = self._client()

        async def send(update: Update) -> None:
            if isinstance(update, SessionNotice):
                if self.offers.notices and self._transport is not None:
                    await self._transport.send(notice_message(session_id(), update))
                    return
                update = update.fallback()
            await conn.session_update(session_id=session_id(), update=update)

        return send

    # -- the protocol -------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                # Text, text files the editor attaches, images when the model takes
                # them (zcoder.agent.image_book); no audio.
                prompt_capabilities=PromptCapabilities(
                    image=await self._takes_images(), audio=False, embedded_context=True
                ),
                # The editor's MCP servers (zcoder.acp.mcp_servers): stdio, as every
                # agent takes them, and streamable HTTP; not the older SSE.
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                # session/list: the saved sessions of a workspace (zcoder.acp.listing).
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
                # zcoder's own methods (acp/extensions.py), as the protocol asks them said.
                field_meta={"zcoder": extensions_offered()},
            ),
            agent_info=Implementation(name="zcoder", title="zcoder", version=__version__),
            auth_methods=[],
        )

    async def _takes_images(self) -> bool:
        """Whether prompts may bring images: ZCODER_VISION, else what the server says of
        the model zcoder starts with (asked once, within VISION_ASK seconds)."""
        try:
            config = load_config(self.options.env, **self.options.flags)
        except ConfigError:
            return False
        if config.vision is not None:
            return config.vision
        try:
            async with make_client(config) as client:
                if not isinstance(client, VisionProbe):
                    return False
                said = await asyncio.wait_for(client.vision_support(config.model), VISION_ASK)
        except (ModelError, TimeoutError):
            return False
        return said is True

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        config = self._config(cwd, additional_directories)
        opened: list[str] = []
        session, _ = await AcpSession.open(
            config,
            self.store,
            self._client(),
            self._sender(lambda: opened[0]),
            mcp_servers=mcp_servers or (),
        )
        opened.append(session.id)
        self.sessions[session.id] = session
        try:
            # The id is the client's from now on: loadable after this process ends, even
            # if no prompt ever reaches it (acpx's `sessions new`, then `prompt` later).
            self.store.keep(session.id)
        except SessionStoreError as exc:
            del self.sessions[session.id]
            await session.close()
            raise RequestError.internal_error({"details": str(exc)}) from None
        session.offer_commands()
        log.info("ACP session %s opened in %s", session.id, config.workspace)
        modes = session_modes(session.started_agent().approval)
        return NewSessionResponse(session_id=session.id, modes=modes)

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        config = self._config(cwd, additional_directories)
        open_here = self.sessions.get(session_id)
        if open_here is not None:
            # Open in this process already (the editor shows it again): replay it as saved.
            data = self._load_saved(session_id, config)
            history = replay(data, config.workspace, notices=self.offers.notices)
        else:
            session, history = await AcpSession.open(
                config,
                self.store,
                self._client(),
                self._sender(lambda: session_id),
                resume=session_id,
                keep_model=self.options.keep_model,
                notices=self.offers.notices,
                mcp_servers=mcp_servers or (),
            )
            self.sessions[session_id] = session
        send = self._sender(lambda: session_id)
        loaded = self.sessions[session_id]
        if open_here is not None and (plan := loaded.started_agent().plan.plan):
            history.append(plan_update(plan))  # a session opened anew sends it as it loads
        for update in history:  # the whole conversation before the response (ACP's rule)
            await send(update)
        if loaded.pump is not None:
            await loaded.pump.flush()  # its plan (agent/plan_keeper.py) before the response
        self.sessions[session_id].offer_commands()
        self.sessions[session_id].announce_held()
        return LoadSessionResponse(modes=session_modes(self._approval(session_id)))

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        """The editor's mode menu (acp/modes.py)."""
        set_session_mode(self._approval(session_id), mode_id)
        return SetSessionModeResponse()

    def _approval(self, session_id: str) -> ApprovalPolicy:
        return self._session(session_id).started_agent().approval

    async def list_sessions(
        self, cursor: str | None = None, cwd: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """The saved sessions of ``cwd``'s workspace (this process's, without one)."""
        config = self.options.config_for(cwd if cwd is not None else os.getcwd())
        return list_page(self.store, config, cursor)

    async def prompt(
        self, session_id: str, prompt: list[PromptBlock], **kwargs: Any
    ) -> PromptResponse:
        return await self._session(session_id).prompt(prompt)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """``_zcoder/input`` (a session's waiting input: acp/input.py); ``_zcoder/info`` and
        ``_zcoder/peers``, for ``zcoder --connect`` (acp/extensions.py)."""
        if method == INPUT:
            request = parse_input(params)
            return self._session(request.session_id).input.act(request)
        try:
            config: Config | None = self.options.config_for(os.getcwd())
        except (RequestError, OSError):
            config = None
        return await extension_method(method, params, self.options.env, config)

    # -- helpers ------------------------------------------------------------------------

    def _config(self, cwd: str, additional: list[str] | None) -> Config:
        if additional:
            raise RequestError.invalid_params(
                {"details": "zcoder works in one workspace: additionalDirectories is not taken"}
            )
        return self.options.config_for(cwd)

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.resource_not_found(f"zcoder-session:{session_id}")
        return session

    def _load_saved(self, session_id: str, config: Config) -> list[Any]:
        try:
            return self.store.load(session_id, config.workspace, config.profile.value).events
        except (LookupError, SessionStoreError):
            raise RequestError.resource_not_found(f"zcoder-session:{session_id}") from None

    async def close(self) -> None:
        """Every session's turn stopped and saved, its lock and model connection let go."""
        sessions, self.sessions = list(self.sessions.values()), {}
        for session in sessions:
            try:
                await session.close()
            except Exception:
                log.exception("closing ACP session %s failed", session.id)


async def serve(options: AcpOptions, home_config: Config) -> int:
    """Serve until the input ends (0) or SIGINT/SIGTERM (128 + the signal): either way
    every session's turn is stopped, its command interrupted and what happened saved."""
    stdio = take_stdio()
    try:
        store = SessionStore(home_config.home)
    except SessionStoreError as exc:
        print(f"zcoder: {exc}", file=sys.stderr)
        return 1
    with store:
        transport = await open_stdio(stdio)
        agent = ZcoderAgent(options, store, transport)
        # The SDK routes to the methods an agent has; those zcoder lacks (session/list,
        # modes...) are answered "Method not found", so the whole Protocol is not needed.
        serving = asyncio.ensure_future(run_agent(cast(acp.Agent, agent), transport))
        stopped_by: list[int] = []

        def stop(signum: int) -> None:
            # An editor closing ends its agent with SIGTERM: commands run in their own
            # process groups, so they are stopped here, not left behind.
            stopped_by.append(signum)
            serving.cancel()

        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signum, stop, signum)
        try:
            await serving
        except asyncio.CancelledError:
            if not stopped_by:
                raise
        finally:
            await agent.close()
            await transport.close()
    return 128 + stopped_by[0] if stopped_by else 0


def run_acp(options: AcpOptions, home_config: Config) -> int:
    """Serve ACP on standard input and output until the client closes it; the exit code."""
    setup_logging(home_config.home)  # standard output is the protocol's alone
    try:
        return asyncio.run(serve(options, home_config))
    except KeyboardInterrupt:
        return 130


__all__ = ["AcpOptions", "ZcoderAgent", "run_acp"]
