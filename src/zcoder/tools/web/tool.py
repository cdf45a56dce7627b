"""``fetch_url``: one web page read by the model, asked like a command.

Each call, and each redirect to a host not yet approved in that call, is asked with the
URL shown (``GET URL``, a CommandApprovalRequest whose ``web_host`` is set): ``y`` fetches
it, ``a`` (in the user's own turns of the coding profile) fetches it and every later page
of that host for the rest of the run, never other hosts, ``n`` refuses. ``--yes`` fetches
without asking (not in a turn a peer's steering reached), ``--deny-commands`` refuses, and
a PreToolUse hook's allow or ask counts as for a command.

Before anything is asked, and again for every redirect (at most MAX_REDIRECTS): the scheme
must be http or https, the URL must carry no user name or password, and the lists must not
refuse the host (zcoder.tools.web.rules). The addresses are checked when connecting
(zcoder.tools.web.connect). The time cap covers the network time of the whole call,
redirects included, not the time a question waits for its answer.

``--offline`` (ZCODER_OFFLINE=1) never registers the tool: it is not offered, and a call
to it is refused as a call to an unknown tool.
"""

from __future__ import annotations

import time
import urllib.parse
from pathlib import Path
from typing import Any, Final

from zcoder.tools.approval import (
    HOOK_ALLOW,
    HOOK_ASK,
    ApprovalDecision,
    CommandApprovalRequest,
    CommandPolicy,
)
from zcoder.tools.base import Offered, ToolContext, ToolResult, ToolSpec, arguments
from zcoder.tools.modes import Effects
from zcoder.tools.offload import in_thread
from zcoder.tools.profiles import TurnOrigin
from zcoder.tools.registry import ToolRegistry
from zcoder.tools.web.connect import Fetched, FetchError, Resolver, fetch_once, system_resolve
from zcoder.tools.web.pages import page_text, web_page_record
from zcoder.tools.web.rules import WebRules, normal_host

__all__ = ["FETCH_URL", "MAX_REDIRECTS", "WebFetcher", "register_web_tool"]

FETCH_URL: Final = "fetch_url"
MAX_REDIRECTS: Final = 5
REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
SCHEMES: Final = ("http", "https")
DESCRIPTION: Final = (
    "Read a web page. HTTP(S) GET; HTML comes as Markdown, PDF as text; the user approves each URL."
)


def checked_url(raw: str) -> tuple[str, str] | str:
    """(the URL to fetch, its host) or why it cannot be fetched."""
    text = raw.strip()
    try:
        parts = urllib.parse.urlsplit(text)
        port = parts.port
    except ValueError as exc:
        return f"{text!r} is not a usable URL ({exc})"
    if parts.scheme.lower() not in SCHEMES:
        scheme = parts.scheme or "none"
        return f"only http and https URLs are fetched (the scheme of {text!r} is {scheme})"
    if parts.username is not None or parts.password is not None:
        return "a URL with a user name or password is not fetched (fetch_url sends no login)"
    host = normal_host(parts.hostname or "")
    if not host:
        return f"{text!r} names no host"
    try:
        ascii_host = host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        return f"the host {host!r} is not a valid name"
    netloc = f"[{ascii_host}]" if ":" in ascii_host else ascii_host
    if port is not None:
        netloc += f":{port}"
    path = urllib.parse.quote(parts.path or "/", safe="/%:@!$&'()*+,;=-._~")
    query = urllib.parse.quote(parts.query, safe="/%:@!$&'()*+,;=-._~?")
    url = urllib.parse.urlunsplit((parts.scheme.lower(), netloc, path, query, ""))
    return url, ascii_host


async def authorize_fetch(
    url: str, host: str, ctx: ToolContext, *, timeout: float, redirected_from: str
) -> str | None:
    """None when ``url`` may be fetched now, else why not (for the model)."""
    policy = ctx.approval
    if policy.policy is CommandPolicy.DENY:
        return "fetching web pages is disabled in this session (--deny-commands)"
    hook, origin = ctx.hook_permission, ctx.origin
    if hook == HOOK_ALLOW and policy.offers_always(origin):
        return None
    steered = origin is TurnOrigin.STEERED
    if hook != HOOK_ASK and policy.policy is CommandPolicy.ALLOW and not steered:
        return None
    if hook != HOOK_ASK and policy.host_granted(host) and policy.offers_always(origin):
        return None
    request = CommandApprovalRequest(
        command=f"GET {url}",
        cwd=Path(ctx.workspace),
        timeout_seconds=timeout,
        allow_always=policy.offers_always(origin),
        origin=origin,
        profile=ctx.profile,
        warning=f"a redirect from {redirected_from}" if redirected_from else None,
        requested_by=ctx.requested_by,
        web_host=host,
    )
    try:
        decision = await ctx.approver.approve_command(request)
    except Exception as exc:  # noqa: BLE001 - a dialog that cannot ask denies
        return f"the approval could not be asked ({exc}); treated as denied"
    if decision is ApprovalDecision.ALWAYS and request.allow_always:
        policy.grant_host(host)
        return None
    if decision in (ApprovalDecision.ONCE, ApprovalDecision.ALWAYS):
        return None
    return "the user denied fetching this page"


class WebFetcher:
    """fetch_url with the user's rules (and, in tests, their own resolver)."""

    def __init__(self, rules: WebRules, resolve: Resolver = system_resolve) -> None:
        self.rules = rules
        self.resolve = resolve

    def spec(self) -> ToolSpec:
        parameters = arguments({"url": {"type": "string", "description": "http(s) URL"}}, ["url"])
        # It only reads, and every page is asked about: offered in plan mode too.
        return ToolSpec(
            FETCH_URL,
            DESCRIPTION,
            parameters,
            self.run,
            offered=Offered.ON_DEMAND,
            effects=Effects.READS,
        )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        fetched = await self._follow(str(args.get("url", "")), ctx)
        if isinstance(fetched, ToolResult):
            return fetched
        page = await in_thread(ctx.stop, lambda: page_text(fetched, ctx.stop.check), name=FETCH_URL)
        facts = {"url": fetched.url, "status": fetched.status}
        if isinstance(page, str):
            return ToolResult.error(f"{fetched.url}: {page}", **facts)
        record = web_page_record(fetched.url, fetched.status, page, ctx.max_output)
        return ToolResult(fetched.status < 400, record, facts)

    async def _follow(self, url: str, ctx: ToolContext) -> Fetched | ToolResult:
        """The response at the end of ``url``'s redirects, each hop checked and asked."""
        remaining = self.rules.timeout
        approved: set[str] = set()
        previous = ""
        for hop in range(MAX_REDIRECTS + 1):
            checked = checked_url(url)
            if isinstance(checked, str):
                return ToolResult.error(_after(previous, checked), refused="url")
            url, host = checked
            refusal = self.rules.host_refusal(host)
            if refusal is not None:
                return ToolResult.error(_after(previous, refusal), refused="rules", url=url)
            if host not in approved:
                why = await authorize_fetch(
                    url, host, ctx, timeout=self.rules.timeout, redirected_from=previous
                )
                if why is not None:
                    return ToolResult.error(why, refused="approval", url=url)
                approved.add(host)
            started = time.monotonic()
            try:
                fetched = await fetch_once(url, self.rules, seconds=remaining, resolve=self.resolve)
            except FetchError as exc:
                return ToolResult.error(_after(previous, f"{url}: {exc}"), url=url)
            remaining -= time.monotonic() - started
            location = fetched.headers.get("location", "").strip()
            if fetched.status not in REDIRECTS or not location:
                return fetched
            if hop == MAX_REDIRECTS:
                break
            if remaining <= 0:
                return ToolResult.error(f"{url}: out of time (ZCODER_WEB_TIMEOUT) at a redirect")
            previous, url = url, urllib.parse.urljoin(url, location)
        return ToolResult.error(f"more than {MAX_REDIRECTS} redirects, the last to {url}")


def _after(previous: str, why: str) -> str:
    return f"redirected from {previous}: {why}" if previous else why


def register_web_tool(registry: ToolRegistry, rules: WebRules) -> WebFetcher:
    """Offer fetch_url (on demand) with ``rules``; the caller skips this when offline."""
    fetcher = WebFetcher(rules)
    registry.register(fetcher.spec())
    return fetcher
