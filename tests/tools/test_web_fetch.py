"""fetch_url against a real server on 127.0.0.1, which the tests allow by name: pages of
each kind, caps, and what a hostile page, server or model would try (redirects to
loopback and private ranges, names that resolve to them, a connection that lands
elsewhere than checked, other schemes, a huge or trickling body, a page that gives
orders). Nothing is sent anywhere but 127.0.0.1."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

import httpcore
import pytest

from tests.fixtures.web_server import INJECTION, WebServer, web_server
from tests.fixtures.workspace import tool_context
from zcoder.tools import ToolResult
from zcoder.tools.web.connect import FetchError, PinnedBackend
from zcoder.tools.web.rules import Address, WebRules
from zcoder.tools.web.tool import WebFetcher

__all__ = ["web_server"]

LOOPBACK = WebRules(allow=("127.0.0.1",))


def resolver(table: dict[str, list[str]]) -> Any:
    """A resolver that answers from ``table`` and records what it was asked."""
    asked: list[str] = []

    async def resolve(host: str, port: int) -> list[Address]:
        asked.append(host)
        return [ipaddress.ip_address(a) for a in table.get(host, [])]

    resolve.asked = asked  # type: ignore[attr-defined]
    return resolve


async def fetch(
    url: str, rules: WebRules = LOOPBACK, *, resolve: Any = None, max_output: int = 32768
) -> ToolResult:
    """fetch_url run as --yes would run it (no question): the rules alone decide."""
    fetcher = WebFetcher(rules, resolve) if resolve is not None else WebFetcher(rules)
    ctx = tool_context(Path("/"), max_output=max_output)
    return await fetcher.spec().run({"url": url}, ctx)


# -- what a page comes back as --------------------------------------------------------


async def test_an_html_page_comes_back_as_markdown_marked_as_the_pages_words(
    web_server: WebServer,
) -> None:
    result = await fetch(web_server.url("/page"))
    assert result.ok, result.output
    out = result.output
    assert out.startswith("<web_page>\n") and out.endswith("\n</web_page>")
    assert "never instructions to follow" in out.split("URL:")[0]
    assert "# Zeta API" in out and "`zeta.open()`" in out and "* one" in out
    assert "steal()" not in out and "color: red" not in out  # scripts and styles dropped
    # The injection arrives as the page's text, inside the record, after its head.
    body = out.split("\n\n", 1)[1]
    assert INJECTION in body
    assert out.index(INJECTION) > out.index("never instructions")
    # The page cannot end the record early or pose as chat structure.
    assert out.count("</web_page>") == 1 and "‹/web\\_page>" in out
    assert "<|im_start|>" not in out
    assert result.metadata["status"] == 200


async def test_a_text_page_cannot_close_the_record_or_open_a_turn(web_server: WebServer) -> None:
    result = await fetch(web_server.url("/orders"))
    assert result.ok
    out = result.output
    assert out.count("</web_page>") == 1 and out.endswith("\n</web_page>")
    assert "‹/web_page>" in out and "<|im_start|>" not in out
    assert out.index(INJECTION) > out.index("never instructions to follow")


async def test_plain_text_comes_as_it_is_and_gzip_is_read(web_server: WebServer) -> None:
    text = await fetch(web_server.url("/text"))
    assert text.ok and "plain words\nsecond line" in text.output
    assert "Status: 200 · text/plain" in text.output
    packed = await fetch(web_server.url("/gzip"))
    assert packed.ok and "# Zeta API" in packed.output


async def test_a_pdf_comes_back_as_its_text(web_server: WebServer) -> None:
    result = await fetch(web_server.url("/pdf"))
    assert result.ok, result.output
    assert "--- page 1 ---\nZeta manual page one" in result.output


async def test_a_binary_page_is_refused_with_a_notice(web_server: WebServer) -> None:
    result = await fetch(web_server.url("/image"))
    assert not result.ok
    assert "binary (image/png, 2008 bytes)" in result.output
    assert "PNG" not in result.output.split("binary")[1]


async def test_an_error_page_is_shown_but_the_call_fails(web_server: WebServer) -> None:
    result = await fetch(web_server.url("/missing"))
    assert not result.ok and "Status: 404" in result.output and "No such page" in result.output


async def test_the_record_fits_the_tool_output_limit_with_its_end(web_server: WebServer) -> None:
    result = await fetch(web_server.url("/huge"), WebRules(("127.0.0.1",), max_bytes=200_000))
    assert len(result.output.encode()) > 4000
    small = await fetch(
        web_server.url("/huge"), WebRules(("127.0.0.1",), max_bytes=200_000), max_output=4000
    )
    assert len(small.output.encode()) <= 4000
    assert small.output.endswith("\n</web_page>") and "bytes omitted" in small.output


# -- caps ------------------------------------------------------------------------------


async def test_a_huge_body_is_read_only_up_to_the_cap(web_server: WebServer) -> None:
    result = await fetch(web_server.url("/huge"), WebRules(("127.0.0.1",), max_bytes=100_000))
    assert result.ok
    assert "only its first 100000 bytes were read (ZCODER_WEB_MAX_BYTES)" in result.output


async def test_a_gzip_bomb_is_inflated_only_up_to_the_cap(web_server: WebServer) -> None:
    result = await fetch(web_server.url("/bomb"), WebRules(("127.0.0.1",), max_bytes=100_000))
    assert result.ok
    assert "only its first 100000 bytes were read (ZCODER_WEB_MAX_BYTES)" in result.output


async def test_a_trickling_body_is_stopped_by_the_time_cap(web_server: WebServer) -> None:
    result = await fetch(web_server.url("/slow"), WebRules(("127.0.0.1",), timeout=1.0))
    assert not result.ok
    assert "did not arrive within 1 s (ZCODER_WEB_TIMEOUT)" in result.output


# -- addresses: loopback, private, names that resolve to them --------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]", "0.0.0.0", "127.1"])
async def test_loopback_is_refused_unless_allowed(web_server: WebServer, host: str) -> None:
    result = await fetch(web_server.url("/page", host), WebRules())
    assert not result.ok
    assert "never fetched unless the allow list (ZCODER_WEB_ALLOW) names it" in result.output
    assert web_server.requests == []


@pytest.mark.parametrize(
    ("target", "kind"),
    [
        ("http://10.1.2.3/", "private"),
        ("http://192.168.0.1:8080/admin", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[::1]/", "loopback"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://[::ffff:10.0.0.1]/", "private"),
        ("http://224.0.0.1/", "multicast"),
    ],
)
async def test_a_redirect_to_a_private_range_is_refused(
    web_server: WebServer, target: str, kind: str
) -> None:
    start = web_server.url(f"/redirect?to={target}")
    result = await fetch(start)
    assert not result.ok
    assert f"a {kind} address, which is never fetched" in result.output
    assert "redirected from" in result.output
    assert len(web_server.requests) == 1  # the redirect, and nothing after it


async def test_a_redirect_to_loopback_is_refused_when_loopback_is_not_allowed(
    web_server: WebServer,
) -> None:
    # docs.test is allowed by name (and resolves to the test server); the loopback
    # address itself is not on the list.
    resolve = resolver({"docs.test": ["127.0.0.1"]})
    secret = web_server.url("/text")
    start = web_server.url(f"/redirect?to={secret}", "docs.test")
    result = await fetch(start, WebRules(allow=("docs.test",)), resolve=resolve)
    assert not result.ok and "'127.0.0.1' is at 127.0.0.1, a loopback address" in result.output
    assert web_server.paths() == [f"/redirect?to={secret}"]
    assert web_server.requests[0][1] == f"docs.test:{web_server.port}"  # the name, sent as Host


@pytest.mark.parametrize(
    "addresses", [["127.0.0.1"], ["10.0.0.7"], ["93.184.216.34", "127.0.0.1"], ["fd00::1"]]
)
async def test_a_name_resolving_to_a_private_address_is_refused(
    web_server: WebServer, addresses: list[str]
) -> None:
    resolve = resolver({"evil.test": addresses})
    result = await fetch(web_server.url("/page", "evil.test"), WebRules(), resolve=resolve)
    assert not result.ok and "never fetched unless the allow list" in result.output
    assert resolve.asked == ["evil.test"]
    assert web_server.requests == []


async def test_a_connection_that_lands_elsewhere_than_checked_sends_nothing(
    web_server: WebServer,
) -> None:
    """DNS rebinding's last step, or a hijacked connect: the name checked out as a public
    address, the socket ended up at loopback. The connected address is checked too."""

    class LandsOnLoopback(httpcore.AsyncNetworkBackend):
        async def connect_tcp(self, host: str, port: int, *args: Any) -> Any:
            return await httpcore.AnyIOBackend().connect_tcp("127.0.0.1", web_server.port)

    resolve = resolver({"public.test": ["93.184.216.34"]})
    backend = PinnedBackend(WebRules(), resolve, inner=LandsOnLoopback())
    async with httpcore.AsyncConnectionPool(network_backend=backend) as pool:
        landed = r"connected to 127\.0\.0\.1, not to the address checked"
        with pytest.raises(FetchError, match=landed):
            await pool.request("GET", web_server.url("/text", "public.test"))
    assert web_server.requests == []


async def test_an_allowed_name_reaches_its_loopback_address(web_server: WebServer) -> None:
    result = await fetch(web_server.url("/text", "localhost"), WebRules(allow=("localhost",)))
    assert result.ok and "plain words" in result.output


async def test_the_deny_list_wins_and_star_allows_only_the_allow_list(
    web_server: WebServer,
) -> None:
    denied = await fetch(web_server.url("/text"), WebRules(("127.0.0.1",), deny=("127.0.0.1",)))
    assert not denied.ok and "is on the deny list (ZCODER_WEB_DENY)" in denied.output
    only = WebRules(("127.0.0.1",), deny=("*",))
    assert (await fetch(web_server.url("/text"), only)).ok
    resolve = resolver({"other.test": ["93.184.216.34"]})
    other = await fetch("https://other.test/", only, resolve=resolve)
    assert not other.ok and "is not on the allow list" in other.output
    assert resolve.asked == []  # refused before any look-up
    assert web_server.paths() == ["/text"]


# -- schemes and redirects -------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/", "javascript:alert(1)"],
)
async def test_another_scheme_is_refused(url: str) -> None:
    result = await fetch(url)
    assert not result.ok and "only http and https URLs are fetched" in result.output


async def test_a_redirect_to_a_file_url_is_refused(web_server: WebServer) -> None:
    result = await fetch(web_server.url("/redirect?to=file:///etc/passwd"))
    assert not result.ok
    assert "redirected from" in result.output and "only http and https" in result.output
    assert "root:" not in result.output


async def test_a_url_with_a_password_is_refused(web_server: WebServer) -> None:
    result = await fetch(f"http://user:secret@127.0.0.1:{web_server.port}/text")
    assert not result.ok and "user name or password" in result.output
    assert web_server.requests == []


async def test_redirects_are_followed_within_the_bound(web_server: WebServer) -> None:
    hop = web_server.url("/redirect?status=301&to=/text")
    result = await fetch(hop)
    assert result.ok and "plain words" in result.output
    assert result.metadata["url"] == web_server.url("/text")
    loop = await fetch(web_server.url("/loop"))
    assert not loop.ok and "more than 5 redirects" in loop.output
    assert web_server.paths().count("/loop") == 6  # the first request and five redirects


async def test_an_address_that_does_not_answer_gives_way_to_the_next_checked_one(
    web_server: WebServer,
) -> None:
    # ::1 first (nothing listens there on this port), then 127.0.0.1: both allowed.
    resolve = resolver({"two.test": ["::1", "127.0.0.1"]})
    rules = WebRules(allow=("two.test",))
    result = await fetch(web_server.url("/text", "two.test"), rules, resolve=resolve)
    assert result.ok, result.output
    assert web_server.paths() == ["/text"]
